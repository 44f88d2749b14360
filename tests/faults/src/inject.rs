//! Each kind of fault: how it is made, what an honest end for it is, and the checks
//! every fault gets afterwards.

use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::time::Instant;
use weft_protocol::UniversalSnapshot;
use weft_testkit::AnthropicServer;

use crate::follow::{connect, ended, Follower};
use crate::kinds::Kind;
use crate::procs::{self, Daemon};
use crate::report::{Ending, Outcome};
use crate::standin::Directive;
use crate::{store, Dirs};

mod clients;

/// A daemon whose home is a small tmpfs, for the disk faults.
pub struct Disk {
    mount: PathBuf,
    daemon: Daemon,
}

/// The run's state.
pub struct Ctx {
    /// Its folders.
    pub dirs: Dirs,
    /// The daemon most faults go through.
    pub daemon: Daemon,
    /// The disk faults' daemon (or why there is none).
    pub disk: Option<Result<Disk, String>>,
    /// The scripted Anthropic server.
    pub server: AnthropicServer,
    /// The scripted Responses server, for the real codex.
    pub openai: weft_testkit::ResponsesServer,
    /// The real claude, when installed.
    pub claude: Option<PathBuf>,
    /// The real codex, when installed.
    pub codex: Option<PathBuf>,
    /// Marks this run's processes.
    pub run_id: String,
    /// The `weft` executable.
    pub weft: PathBuf,
}

const TURN_DEADLINE: Duration = Duration::from_secs(60);

/// Splits `text` into the pieces a check looks for in order (words, with their space).
fn words(text: &str) -> Vec<String> {
    text.split_inclusive(' ').map(str::to_string).collect()
}

/// How many of `pieces` are not found in `text` in order.
fn missing(text: &str, pieces: &[String]) -> usize {
    let mut at = 0;
    let mut lost = 0;
    for p in pieces {
        match text[at..].find(p.as_str()) {
            Some(found) => at += found + p.len(),
            None => lost += 1,
        }
    }
    lost
}

fn ending_of(snap: &UniversalSnapshot) -> Ending {
    if snap.incomplete {
        Ending::Incomplete
    } else if snap.error.is_some() {
        Ending::Error
    } else {
        Ending::Done
    }
}

/// A fault's session, as the checks need it.
struct Turn {
    key: String,
    task: String,
    agent: &'static str,
    home: PathBuf,
    daemon_pid: u32,
    mark: String,
    /// The turn had already ended when the fault came (a short turn): done is honest.
    ended_first: bool,
}

impl Ctx {
    fn env(&self, mark: &str, kind: Kind) -> Vec<(String, String)> {
        let d = &self.dirs;
        let mut env: Vec<(String, String)> = std::env::vars()
            .filter(|(k, _)| k != "WEFT_HOME" && !k.starts_with("ANTHROPIC_"))
            .collect();
        let claude = if kind.real_claude() {
            self.claude.clone().unwrap_or_default()
        } else {
            d.bin.join("claude")
        };
        let codex = if kind.real_codex() {
            self.codex.clone().unwrap_or_default()
        } else {
            d.bin.join("codex")
        };
        let s = |p: &std::path::Path| p.to_string_lossy().into_owned();
        for (k, v) in [
            ("WEFT_FAULTS_MARK", mark.to_string()),
            ("WEFT_FAULTS_LOG", s(&d.log)),
            ("WEFT_ECHO_DELAY_MS", "10".into()),
            ("WEFT_CLAUDE_BIN", s(&claude)),
            // The real claude (node) can take seconds to start on a loaded machine: at a
            // load average of 27 its next prompt after a fault gave no output for 8 s.
            (
                "WEFT_CLAUDE_STALL_SECS",
                if kind.real_claude() { "20" } else { "2" }.into(),
            ),
            ("WEFT_CODEX_BIN", s(&codex)),
            // As for claude: the real codex can be slow to start on a loaded machine.
            (
                "WEFT_CODEX_STALL_SECS",
                if kind.real_codex() { "20" } else { "2" }.into(),
            ),
            (
                "WEFT_CODEX_RPC_TIMEOUT_SECS",
                if kind.real_codex() { "20" } else { "3" }.into(),
            ),
            ("HOME", s(&d.claude_home)),
            ("ANTHROPIC_BASE_URL", self.server.base_url()),
            ("ANTHROPIC_API_KEY", "sk-faults-not-a-secret".into()),
            ("IS_SANDBOX", "1".into()),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
            ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
        ] {
            env.push((k.to_string(), v));
        }
        if kind.real_codex() {
            for (k, v) in [
                ("CODEX_HOME", s(&d.codex_home)),
                ("WEFT_CODEX_BASE_URL", self.openai.v1_url()),
                ("WEFT_CODEX_API_KEY_ENV", "WEFT_FAULTS_OPENAI_KEY".into()),
                ("WEFT_FAULTS_OPENAI_KEY", "sk-faults-not-a-secret".into()),
                ("WEFT_CODEX_MAX_RETRIES", "0".into()),
                // A CODEX_HOME under /tmp cannot host the sandbox's helper.
                ("WEFT_CODEX_SANDBOX", "danger-full-access".into()),
                ("WEFT_CODEX_APPROVAL_POLICY", "never".into()),
                ("WEFT_CODEX_CONFIG", "model=\"mock-model\"".into()),
            ] {
                env.push((k.to_string(), v));
            }
        }
        env
    }

    /// The deltas the stand-ins logged for fault `id`.
    fn logged(&self, id: &str) -> Vec<String> {
        let log = std::fs::read_to_string(&self.dirs.log).unwrap_or_default();
        log.lines()
            .filter_map(|l| l.split_once('\t'))
            .filter(|(i, _)| *i == id)
            .map(|(_, t)| t.to_string())
            .collect()
    }

    /// Injects one fault of `kind` (fault number `i`; `point` picks where).
    pub async fn fault(&mut self, kind: Kind, i: usize, point: u64) -> Outcome {
        if kind.real_claude() && self.claude.is_none() {
            return Outcome::skipped(kind, "no claude CLI installed".into());
        }
        if kind.real_codex() && self.codex.is_none() {
            return Outcome::skipped(kind, "no codex CLI installed".into());
        }
        let mark = format!("{}-{i}", self.run_id);
        let result = match kind {
            Kind::DaemonKill => self.daemon_kill(i, point, &mark).await,
            Kind::ClientDrop | Kind::CliKill => self.client(kind, i, point, &mark).await,
            Kind::DiskFull => self.disk_fault(kind, i, point, &mark).await,
            Kind::ReadonlyHome => self.readonly(i, &mark).await,
            _ if kind.real_agent().is_some() => self.real_fault(kind, i, point, &mark).await,
            _ => self.standin(kind, i, point, &mark).await,
        };
        result.unwrap_or_else(|e| {
            let mut o = Outcome::new(kind);
            o.problems.push(e);
            o
        })
    }

    async fn standin(
        &mut self,
        kind: Kind,
        i: usize,
        point: u64,
        mark: &str,
    ) -> Result<Outcome, String> {
        let agent = if kind == Kind::WrongId {
            "codex"
        } else {
            "claude"
        };
        let deltas = 20 + (point % 60) as usize;
        let d = Directive {
            fault: match kind {
                Kind::AgentHang => "hang",
                Kind::CutLine => "cut_line",
                Kind::HugeLine => "huge_line",
                Kind::BadUtf8 => "bad_utf8",
                Kind::Garbage => "garbage",
                Kind::WrongId => "wrong_id",
                _ => "none",
            }
            .into(),
            deltas: if kind == Kind::AgentKill { 400 } else { deltas },
            delay_ms: if kind == Kind::AgentKill { 5 } else { 1 },
            // Before the last delta, so the fault always comes mid-turn.
            at: 1 + (point / 7 % (deltas as u64 - 1)) as usize,
            id: i.to_string(),
        };
        let conn = connect(&self.dirs.home, &self.env(mark, kind)).await?;
        let acc = conn
            .prompt(agent, None, &self.dirs.work, &d.prompt())
            .await?;
        let mut f = conn.follow(&acc.session_key).await?;
        if kind == Kind::AgentKill {
            let id = i.to_string();
            let enough = procs::poll(Duration::from_secs(20), || self.logged(&id).len() >= d.at);
            if !enough {
                return Err("the stand-in never reached the kill point".into());
            }
            for p in procs::with_marker(&marker(mark)) {
                procs::kill9(p.pid);
            }
        }
        let turn = Turn {
            key: acc.session_key,
            task: acc.task_id,
            agent,
            home: self.dirs.home.clone(),
            daemon_pid: self.daemon.pid(),
            mark: mark.to_string(),
            ended_first: false,
        };
        let reference = Reference::Logged(i.to_string());
        self.check(kind, &mut f, &turn, reference).await
    }

    /// A fault through the real claude or codex, against its scripted server.
    async fn real_fault(
        &mut self,
        kind: Kind,
        i: usize,
        point: u64,
        mark: &str,
    ) -> Result<Outcome, String> {
        let agent = kind.real_agent().unwrap_or("claude");
        let conn = connect(&self.dirs.home, &self.env(mark, kind)).await?;
        let prompt = format!("weft-fault kind={} id={i}", kind.name());
        let acc = conn.prompt(agent, None, &self.dirs.work, &prompt).await?;
        let mut f = conn.follow(&acc.session_key).await?;
        if matches!(kind, Kind::ClaudeKill | Kind::CodexKill) {
            let chunks = 1 + (point % 20) as usize;
            let deadline = Instant::now() + TURN_DEADLINE;
            f.until(deadline, |s| {
                s.text.matches(' ').count() >= chunks || s.phase == weft_protocol::Phase::Done
            })
            .await?;
            for p in procs::with_marker(&marker(mark)) {
                procs::kill9(p.pid);
            }
        }
        let turn = Turn {
            key: acc.session_key,
            task: acc.task_id,
            agent,
            home: self.dirs.home.clone(),
            daemon_pid: self.daemon.pid(),
            mark: mark.to_string(),
            ended_first: false,
        };
        self.check(kind, &mut f, &turn, Reference::Seen).await
    }

    async fn daemon_kill(&mut self, i: usize, point: u64, mark: &str) -> Result<Outcome, String> {
        let kind = Kind::DaemonKill;
        let standin = point.is_multiple_of(2);
        let conn = connect(&self.dirs.home, &self.env(mark, kind)).await?;
        let (agent, prompt) = if standin {
            let d = Directive {
                fault: "none".into(),
                deltas: 400,
                delay_ms: 5,
                at: 0,
                id: i.to_string(),
            };
            ("claude", d.prompt())
        } else {
            ("echo", format!("please stream (fault {i})"))
        };
        let acc = conn.prompt(agent, None, &self.dirs.work, &prompt).await?;
        let mut f = conn.follow(&acc.session_key).await?;
        let patches_before = 1 + point / 3 % 40;
        f.until_patches(Instant::now() + TURN_DEADLINE, patches_before, &acc.task_id)
            .await?;
        let seen = f.snap.text.clone();
        let ended_first = ended(&f.snap, &acc.task_id);
        drop(f);
        self.daemon.restart()?;
        let conn = connect(&self.dirs.home, &self.env(mark, kind)).await?;
        let mut f = conn.follow(&acc.session_key).await?;
        let turn = Turn {
            key: acc.session_key,
            task: acc.task_id,
            agent,
            home: self.dirs.home.clone(),
            daemon_pid: self.daemon.pid(),
            mark: mark.to_string(),
            ended_first,
        };
        self.check(kind, &mut f, &turn, Reference::Text(seen)).await
    }

    fn disk(&mut self) -> Result<&mut Disk, String> {
        if self.disk.is_none() {
            let mount = self.dirs.root.path().join("disk");
            let made = std::fs::create_dir_all(&mount)
                .map_err(|e| e.to_string())
                .and_then(|()| {
                    let out = Command::new("mount")
                        .args(["-t", "tmpfs", "-o", "size=12m,mode=0700", "tmpfs"])
                        .arg(&mount)
                        .output()
                        .map_err(|e| format!("mount: {e}"))?;
                    if out.status.success() {
                        Ok(())
                    } else {
                        Err(format!(
                            "cannot mount a tmpfs (needs root or CAP_SYS_ADMIN): {}",
                            String::from_utf8_lossy(&out.stderr).trim()
                        ))
                    }
                })
                .and_then(|()| {
                    Daemon::start(
                        &self.weft,
                        &mount.join("home"),
                        &self.dirs.root.path().join("disk-daemon.log"),
                    )
                })
                .map(|daemon| Disk { mount, daemon });
            self.disk = Some(made);
        }
        match self.disk.as_mut() {
            Some(Ok(d)) => Ok(d),
            Some(Err(e)) => Err(e.clone()),
            None => Err("no disk".into()),
        }
    }

    async fn disk_fault(
        &mut self,
        kind: Kind,
        i: usize,
        point: u64,
        mark: &str,
    ) -> Result<Outcome, String> {
        let env = self.env(mark, kind);
        let work = self.dirs.work.clone();
        let (mount, pid) = match self.disk() {
            Ok(d) => (d.mount.clone(), d.daemon.pid()),
            Err(why) => return Ok(Outcome::skipped(kind, why)),
        };
        let home = mount.join("home");
        let conn = connect(&home, &env).await?;
        let acc = conn
            .prompt("echo", None, &work, &format!("please stream (fault {i})"))
            .await?;
        let mut f = conn.follow(&acc.session_key).await?;
        f.until_patches(Instant::now() + TURN_DEADLINE, 1 + point % 40, &acc.task_id)
            .await?;
        let seen = f.snap.text.clone();
        let filler = mount.join("filler");
        fill(&filler);
        let deadline = Instant::now() + TURN_DEADLINE;
        let task = acc.task_id.clone();
        let live = f.until(deadline, |s| ended(s, &task)).await;
        // The disk comes back before the checks (the next prompt needs it).
        let _ = std::fs::remove_file(&filler);
        live?;
        let turn = Turn {
            key: acc.session_key,
            task: acc.task_id,
            agent: "echo",
            home,
            daemon_pid: pid,
            mark: mark.to_string(),
            ended_first: false,
        };
        self.check(kind, &mut f, &turn, Reference::Text(seen)).await
    }

    /// A `WEFT_HOME` that is read-only when a client needs the daemon: the client gets a
    /// clear error (no hang), the store is untouched, and once the home is writable
    /// again the session goes on. (Mid-turn, a read-only remount is refused while the
    /// store's files are open for writing, so the home turns read-only between daemons.)
    async fn readonly(&mut self, i: usize, mark: &str) -> Result<Outcome, String> {
        let kind = Kind::ReadonlyHome;
        let env = self.env(mark, kind);
        let work = self.dirs.work.clone();
        let weft = self.weft.clone();
        let mount = match self.disk() {
            Ok(d) => d.mount.clone(),
            Err(why) => return Ok(Outcome::skipped(kind, why)),
        };
        let home = mount.join("home");
        let conn = connect(&home, &env).await?;
        let acc = conn
            .prompt(
                "echo",
                None,
                &work,
                &format!("before the read-only home ({i})"),
            )
            .await?;
        let mut f = conn.follow(&acc.session_key).await?;
        let task = acc.task_id.clone();
        f.until(Instant::now() + TURN_DEADLINE, |s| ended(s, &task))
            .await?;
        let before = f.snap.text.clone();
        drop(f);
        if let Some(Ok(d)) = self.disk.as_mut() {
            d.daemon.stop();
        }
        remount(&mount, "ro")?;
        let out = tokio::task::spawn_blocking(move || {
            Command::new("timeout")
                .args(["30"])
                .arg(&weft)
                .args(["run", "--agent", "echo", "while read-only"])
                .envs(env)
                .env("WEFT_HOME", &home)
                .current_dir(&work)
                .stdin(Stdio::null())
                .output()
        })
        .await
        .map_err(|e| e.to_string())?
        .map_err(|e| format!("weft run: {e}"));
        remount(&mount, "rw")?;
        let out = out?;
        let mut o = Outcome::new(kind);
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        o.ending = match out.status.code() {
            Some(124) => Ending::Hung,
            Some(0) => Ending::Done,
            _ => Ending::Error,
        };
        o.reason =
            (!stderr.is_empty()).then(|| stderr.lines().next().unwrap_or_default().to_string());
        o.honest = o.ending == Ending::Error && o.reason.is_some();
        if let Some(Ok(d)) = self.disk.as_mut() {
            d.daemon.start_again()?;
        }
        let pid = match self.disk() {
            Ok(d) => d.daemon.pid(),
            Err(e) => return Err(e),
        };
        let home = mount.join("home");
        let conn = connect(&home, &self.env(mark, kind)).await?;
        let mut f = conn.follow(&acc.session_key).await?;
        let turn = Turn {
            key: acc.session_key,
            task: acc.task_id,
            agent: "echo",
            home,
            daemon_pid: pid,
            mark: mark.to_string(),
            ended_first: false,
        };
        let mut after = self
            .check(kind, &mut f, &turn, Reference::Text(before))
            .await?;
        after.ending = o.ending;
        after.reason = o.reason;
        after.honest = o.honest;
        Ok(after)
    }

    /// Stops the daemons and counts the run's processes still alive.
    pub fn finish(&mut self) -> usize {
        self.daemon.stop();
        if let Some(Ok(d)) = self.disk.as_mut() {
            d.daemon.stop();
            let _ = Command::new("umount").arg("-l").arg(&d.mount).status();
        }
        let prefix = format!("WEFT_FAULTS_MARK={}-", self.run_id);
        let mut left = Vec::new();
        procs::poll(Duration::from_secs(10), || {
            left = procs::with_marker(&prefix);
            left.is_empty()
        });
        for p in &left {
            eprintln!("left behind: {p:?}");
            procs::kill9(p.pid);
        }
        left.len()
    }

    async fn check(
        &self,
        kind: Kind,
        f: &mut Follower,
        turn: &Turn,
        reference: Reference,
    ) -> Result<Outcome, String> {
        let mut o = Outcome::new(kind);
        let task = turn.task.clone();
        if f.until(Instant::now() + TURN_DEADLINE, |s| ended(s, &task))
            .await
            .is_err()
        {
            o.problems.push(format!(
                "still {:?} after {} s: {:?}",
                f.snap.phase,
                TURN_DEADLINE.as_secs(),
                f.snap.error
            ));
            return Ok(o);
        }
        o.ending = ending_of(&f.snap);
        o.reason = f.snap.error.clone();

        // The daemon's snapshot, the follower's, and the store's.
        let daemon = f.conn.snapshot(&turn.key).await?.snapshot;
        f.settle(Instant::now() + Duration::from_secs(5), &daemon)
            .await;
        o.ending = ending_of(&f.snap);
        o.reason = f.snap.error.clone();
        let mut stored = None;
        procs::poll(Duration::from_secs(10), || {
            stored = store::turn(&turn.home, &turn.task).ok().flatten();
            stored.as_ref().is_some_and(|t| t.status != "running")
        });
        let Some(stored) = stored else {
            o.problems.push("the turn is not in the store".into());
            return Ok(o);
        };
        let daemon_json = serde_json::to_value(&daemon).unwrap_or_default();
        // A store that could not save the turn says so; then only the clients can agree.
        let unsaved = daemon
            .error
            .as_deref()
            .is_some_and(|e| e.contains("session store could not save"));
        o.snapshot_equal = daemon == f.snap && (daemon_json == stored.snapshot || unsaved);
        if !o.snapshot_equal {
            let diff: Vec<String> = daemon_json
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(k, v)| stored.snapshot.get(k.as_str()) != Some(v))
                .map(|(k, _)| k.clone())
                .collect();
            o.problems.push(format!(
                "snapshots differ (follower==daemon: {}; daemon vs store in {diff:?}; store status {})",
                daemon == f.snap,
                stored.status
            ));
        }
        let stored_text = stored.snapshot["text"].as_str().unwrap_or_default();
        let pieces = match &reference {
            Reference::Logged(id) => self.logged(id),
            Reference::Text(t) => words(t),
            Reference::Seen => words(&f.snap.text),
        };
        // A turn the store could not finish stays `running` there, and the next daemon
        // rebuilds it from its events: those are what a later process finds.
        o.lost = missing(&stored.events_text, &pieces);
        if stored.status != "running" {
            o.lost = o.lost.max(missing(stored_text, &pieces));
        }
        // A daemon killed just after it committed the turn's end leaves it done: a
        // crash cannot write `done`, so that end is the store's own.
        let finished_first = kind == Kind::DaemonKill && stored.status == "done";
        o.honest = kind.honest(o.ending, o.reason.as_deref())
            || ((turn.ended_first || finished_first) && o.ending == Ending::Done);
        if matches!(kind, Kind::DiskFull | Kind::ReadonlyHome) {
            // Whatever the store could not keep after the fault must show as a failure.
            let kept_all = stored_text == f.snap.text && stored.status != "running";
            if !kept_all && o.ending == Ending::Done {
                o.honest = false;
                o.problems.push(format!(
                    "the store kept {} of {} bytes of the reply and the turn says done",
                    stored_text.len(),
                    f.snap.text.len()
                ));
            }
        }

        // The next prompt to the same session.
        let next_id = format!("{}n", turn.task);
        let (prompt, expect) = match turn.agent {
            "echo" => ("and again".to_string(), String::new()),
            _ if kind.real_agent().is_some() => (
                format!("weft-fault kind=none id={next_id}"),
                "a fine reply".to_string(),
            ),
            _ => {
                let d = Directive {
                    fault: "none".into(),
                    deltas: 3,
                    delay_ms: 0,
                    at: 0,
                    id: next_id.clone(),
                };
                (d.prompt(), d.delta(2))
            }
        };
        match f
            .conn
            .prompt(turn.agent, Some(&turn.key), &self.dirs.work, &prompt)
            .await
        {
            Ok(next) => {
                let t = next.task_id.clone();
                let done = f
                    .until(Instant::now() + TURN_DEADLINE, |s| ended(s, &t))
                    .await;
                o.next_ok = done.is_ok()
                    && f.snap.error.is_none()
                    && !f.snap.text.is_empty()
                    && f.snap.text.contains(&expect);
                if !o.next_ok {
                    o.problems.push(format!(
                        "next prompt: {done:?}, error {:?}, text {:?}",
                        f.snap.error,
                        f.snap.text.chars().take(120).collect::<String>()
                    ));
                }
            }
            Err(e) => o.problems.push(format!("next prompt refused: {e}")),
        }

        // No process of the turn outside the live daemon.
        let needle = marker(&turn.mark);
        let mut strays = Vec::new();
        procs::poll(Duration::from_secs(10), || {
            strays = procs::with_marker(&needle)
                .into_iter()
                .filter(|p| !procs::descends_from(p.pid, turn.daemon_pid))
                .collect();
            strays.is_empty()
        });
        o.orphans = strays.len();
        for p in strays {
            o.problems.push(format!("orphan {p:?}"));
            procs::kill9(p.pid);
        }
        Ok(o)
    }
}

/// What the harness recorded before the fault, to find in the store.
enum Reference {
    /// The stand-in's log for this fault id.
    Logged(String),
    /// Text the harness's client saw before the fault.
    Text(String),
    /// Everything the follower saw, to the end.
    Seen,
}

/// The marker as it sits in /proc/PID/environ (NUL-terminated, so fault 1 is not 12).
fn marker(mark: &str) -> String {
    format!("WEFT_FAULTS_MARK={mark}\0")
}

/// Fills the file system `path` is on until a write fails.
fn fill(path: &std::path::Path) {
    use std::io::Write;
    let Ok(mut f) = std::fs::File::create(path) else {
        return;
    };
    let chunk = vec![0u8; 64 << 10];
    while f.write_all(&chunk).is_ok() {}
    let _ = f.sync_all();
}

fn remount(mount: &std::path::Path, mode: &str) -> Result<(), String> {
    let out = Command::new("mount")
        .args(["-o", &format!("remount,{mode}")])
        .arg(mount)
        .output()
        .map_err(|e| format!("mount: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        Err(format!(
            "remount {mode}: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_counts_pieces_absent_or_out_of_order() {
        let p = words("a b c ");
        assert_eq!(missing("a b c d", &p), 0);
        assert_eq!(missing("a c ", &p), 1);
        assert_eq!(missing("c b a", &p), 2);
    }
}
