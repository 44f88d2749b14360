//! The client faults: the follower's connection dropped (the daemon's socket, or a
//! WebSocket client of `weft serve`), or a streaming `weft run` SIGKILLed, and a new
//! client subscribing.

use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;
use weft_protocol::{ClientRequest, ServerMessage};

use super::{Ctx, Reference, Turn, TURN_DEADLINE};
use crate::follow::connect;
use crate::kinds::Kind;
use crate::report::Outcome;
use crate::ws;

impl Ctx {
    pub(super) async fn client(
        &mut self,
        kind: Kind,
        i: usize,
        point: u64,
        mark: &str,
    ) -> Result<Outcome, String> {
        // Every other client drop is a WebSocket client's, through `weft serve`.
        if kind == Kind::ClientDrop && point % 2 == 1 {
            return self.websocket_drop(i, point, mark).await;
        }
        let env = self.env(mark, kind);
        let prompt = format!("please stream (fault {i})");
        let patches_before = 1 + point % 40;
        let (key, task, seen) = if kind == Kind::ClientDrop {
            let conn = connect(&self.dirs.home, &env).await?;
            let acc = conn.prompt("echo", None, &self.dirs.work, &prompt).await?;
            let mut f = conn.follow(&acc.session_key).await?;
            f.until_patches(Instant::now() + TURN_DEADLINE, patches_before, &acc.task_id)
                .await?;
            let seen = f.snap.text.clone();
            drop(f);
            (acc.session_key, acc.task_id, seen)
        } else {
            let mut watcher = connect(&self.dirs.home, &env).await?;
            watcher
                .client
                .request(ClientRequest::SubscribeAll {})
                .await
                .map_err(|e| e.to_string())?;
            let mut run = Command::new(&self.weft)
                .args(["run", "--agent", "echo", &prompt])
                .envs(env.iter().cloned())
                .env("WEFT_HOME", &self.dirs.home)
                .current_dir(&self.dirs.work)
                .stdin(Stdio::null())
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .map_err(|e| format!("weft run: {e}"))?;
            let deadline = Instant::now() + TURN_DEADLINE;
            let mut key = None;
            let mut seen_patches = 0;
            while seen_patches < patches_before {
                let ev = tokio::time::timeout_at(deadline, watcher.events.recv())
                    .await
                    .map_err(|_| "no patch from weft run's turn".to_string())?
                    .ok_or("the watcher's events ended")?;
                if let weft_client::Event::Message(ServerMessage::Patch(p)) = ev {
                    if key.is_none() {
                        key = Some(p.session_key.clone());
                    }
                    if key.as_deref() == Some(p.session_key.as_str()) {
                        seen_patches += 1;
                        if p.patch.phase == Some(weft_protocol::Phase::Done) {
                            break;
                        }
                    }
                }
            }
            let _ = run.kill();
            let _ = run.wait();
            let key = key.ok_or("no session")?;
            let at = watcher.snapshot(&key).await?;
            let task = at.snapshot.task_id.clone().unwrap_or_default();
            (key, task, String::new())
        };
        let conn = connect(&self.dirs.home, &env).await?;
        let mut f = conn.follow(&key).await?;
        let turn = self.echo_turn(key, task, mark);
        let _ = seen;
        self.check(kind, &mut f, &turn, Reference::Seen).await
    }

    /// A WebSocket client of `weft serve` folds some patches, its TCP connection drops
    /// without a close frame, it connects again and subscribes: it must end with exactly
    /// the daemon's snapshot, and everything it had folded must be in the store.
    async fn websocket_drop(
        &mut self,
        i: usize,
        point: u64,
        mark: &str,
    ) -> Result<Outcome, String> {
        let kind = Kind::ClientDrop;
        let serve = ws::Serve::start(&self.weft, &self.dirs.home)?;
        let mut first = serve.connect().await?;
        let (key, task) = first
            .prompt(&self.dirs.work, &format!("please stream (fault {i})"))
            .await?;
        first.subscribe(&key).await?;
        first
            .until_patches(Instant::now() + TURN_DEADLINE, 1 + point % 40, &task)
            .await?;
        let seen = first.snap.text.clone();
        first.drop_abruptly();
        let mut again = serve.connect().await?;
        again.subscribe(&key).await?;

        let conn = connect(&self.dirs.home, &self.env(mark, kind)).await?;
        let mut f = conn.follow(&key).await?;
        let turn = self.echo_turn(key.clone(), task, mark);
        let mut o = self
            .check(kind, &mut f, &turn, Reference::Text(seen))
            .await?;
        let daemon = f.conn.snapshot(&key).await?.snapshot;
        if let Err(e) = again
            .settle(Instant::now() + Duration::from_secs(10), &daemon)
            .await
        {
            o.snapshot_equal = false;
            o.problems.push(format!(
                "the reconnected WebSocket client does not hold the daemon's snapshot ({e}): seq {}, {} patches",
                again.seq, again.patches
            ));
        }
        Ok(o)
    }

    /// An echo turn of the run's own daemon.
    fn echo_turn(&self, key: String, task: String, mark: &str) -> Turn {
        Turn {
            key,
            task,
            agent: "echo",
            home: self.dirs.home.clone(),
            daemon_pid: self.daemon.pid(),
            mark: mark.to_string(),
            ended_first: false,
        }
    }
}
