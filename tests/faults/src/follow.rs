//! A client following one session as a surface does: subscribe, fold the patches in
//! seq order, re-read the snapshot on a gap or a resync.

use std::path::Path;
use std::time::Duration;

use tokio::sync::mpsc;
use tokio::time::Instant;
use weft_client::{Client, Event, Home};
use weft_protocol::{
    apply_in_place, verb, ClientEnv, Hello, Phase, PromptAccepted, PromptRequest, ServerMessage,
    SnapshotAt, UniversalSnapshot,
};

/// A connection with an environment for the agents of its turns.
pub struct Conn {
    /// The client.
    pub client: Client,
    /// What the daemon pushes.
    pub events: mpsc::Receiver<Event>,
}

/// Connects to the daemon of `home` with `env` as the turns' environment.
pub async fn connect(home: &Path, env: &[(String, String)]) -> Result<Conn, String> {
    let hello = Hello {
        version: weft_client::VERSION.to_string(),
        surface: "faults".into(),
        env: Some(ClientEnv(env.iter().cloned().collect())),
        ..Default::default()
    };
    let (client, events) = tokio::time::timeout(
        Duration::from_secs(20),
        Client::connect(&Home::at(home), hello),
    )
    .await
    .map_err(|_| "connect timed out".to_string())?
    .map_err(|e| e.to_string())?;
    Ok(Conn { client, events })
}

impl Conn {
    /// Sends a prompt.
    pub async fn prompt(
        &self,
        agent: &str,
        session_key: Option<&str>,
        workdir: &Path,
        prompt: &str,
    ) -> Result<PromptAccepted, String> {
        let request = PromptRequest {
            prompt: prompt.to_string(),
            agent: Some(agent.to_string()),
            session_key: session_key.map(str::to_string),
            workdir: Some(workdir.to_string_lossy().into_owned()),
            ..Default::default()
        };
        self.client.send(request).await.map_err(|e| e.to_string())
    }

    /// The daemon's snapshot of `key`.
    pub async fn snapshot(&self, key: &str) -> Result<SnapshotAt, String> {
        self.client
            .send(verb::GetSnapshot {
                session_key: key.to_string(),
            })
            .await
            .map_err(|e| e.to_string())
    }

    /// Subscribes to `key` and follows it.
    pub async fn follow(self, key: &str) -> Result<Follower, String> {
        let at = self
            .client
            .send(verb::Subscribe {
                session_key: key.to_string(),
            })
            .await
            .map_err(|e| e.to_string())?;
        Ok(Follower {
            conn: self,
            key: key.to_string(),
            snap: at.snapshot,
            seq: at.seq,
            patches: 0,
            resyncs: 0,
        })
    }
}

/// A subscribed session, folded.
pub struct Follower {
    /// The connection.
    pub conn: Conn,
    /// The session.
    pub key: String,
    /// What the patches made of it so far.
    pub snap: UniversalSnapshot,
    /// The last patch folded.
    pub seq: u64,
    /// Patches folded.
    pub patches: u64,
    /// Snapshots re-read (gap or resync).
    pub resyncs: u64,
}

/// True once `task` is over in `snap`.
pub fn ended(snap: &UniversalSnapshot, task: &str) -> bool {
    snap.task_id.as_deref() == Some(task) && snap.phase == Phase::Done
}

impl Follower {
    async fn reread(&mut self) -> Result<(), String> {
        let at = self.conn.snapshot(&self.key).await?;
        self.snap = at.snapshot;
        self.seq = at.seq;
        self.resyncs += 1;
        Ok(())
    }

    /// Folds events until `pred` holds or `deadline`; Err when the connection ends or
    /// time runs out.
    pub async fn until(
        &mut self,
        deadline: Instant,
        mut pred: impl FnMut(&UniversalSnapshot) -> bool,
    ) -> Result<(), String> {
        while !pred(&self.snap) {
            self.step(deadline).await?;
        }
        Ok(())
    }

    /// Folds `n` more patches of `task`, or until it ends.
    pub async fn until_patches(
        &mut self,
        deadline: Instant,
        n: u64,
        task: &str,
    ) -> Result<(), String> {
        let start = self.patches;
        while self.patches - start < n && !ended(&self.snap, task) {
            self.step(deadline).await?;
        }
        Ok(())
    }

    /// Folds the next event.
    async fn step(&mut self, deadline: Instant) -> Result<(), String> {
        let ev = match tokio::time::timeout_at(deadline, self.conn.events.recv()).await {
            Err(_) => return Err("timed out".into()),
            Ok(None) => return Err("the client's events ended".into()),
            Ok(Some(ev)) => ev,
        };
        match ev {
            Event::Message(ServerMessage::Patch(p)) if p.session_key == self.key => {
                if p.first_seq() == self.seq + 1 {
                    apply_in_place(&mut self.snap, &p.patch);
                    self.seq = p.seq;
                    self.patches += 1;
                } else if p.seq > self.seq {
                    self.reread().await?;
                }
            }
            Event::Message(ServerMessage::Resync { session_key })
                if session_key.as_deref().is_none_or(|k| k == self.key) =>
            {
                self.reread().await?;
            }
            Event::Disconnected(why) => return Err(format!("disconnected: {why}")),
            _ => {}
        }
        Ok(())
    }

    /// After the turn ended: folds what still comes (an amended end) until the follower
    /// holds `daemon`'s snapshot, or `deadline`.
    pub async fn settle(&mut self, deadline: Instant, daemon: &UniversalSnapshot) {
        while self.snap != *daemon && self.step(deadline).await.is_ok() {}
    }
}
