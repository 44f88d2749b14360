//! Load: many sessions streaming at once through one real daemon, watched by clients
//! that subscribe to everything — two that keep up, and one that reads nothing until the
//! end (the daemon must resync it rather than queue for it or slow down).
//!
//! Each session prompts again as soon as a turn ends, for the whole run: echo sessions at
//! full speed (`WEFT_ECHO_DELAY_MS=0`), and real `claude` sessions against the scripted
//! Anthropic server streaming a long reply. The daemon's and this process's memory are
//! sampled every second. At the end every client's snapshot of every session must equal
//! the daemon's, and the daemon's must equal the store's last turn.

use std::collections::HashMap;
use std::path::Path;
use std::time::{Duration, Instant};

use weft_client::Event;
use weft_protocol::{apply_in_place, ClientRequest, ServerMessage, UniversalSnapshot};
use weft_testkit::{AnthropicServer, Recorder, Script, Turn};

use crate::follow::{connect, ended, Conn};
use crate::procs::Daemon;

/// What to run.
#[derive(Debug, Clone)]
pub struct LoadConfig {
    /// Echo sessions.
    pub echo: usize,
    /// Real claude sessions (skipped when claude is not installed).
    pub claude: usize,
    /// How long sessions keep prompting.
    pub duration: Duration,
    /// Patches a reading client must have folded before prompting stops, however long
    /// that takes past `duration` (up to 3 minutes more): enough that the idle client's
    /// bounded queues overflow on a machine too loaded to reach it in `duration`.
    pub min_patches: u64,
    /// The `weft` executable.
    pub weft: std::path::PathBuf,
}

/// What a load run measured.
#[derive(Debug, Clone, Default)]
pub struct LoadReport {
    /// Sessions that streamed.
    pub sessions: usize,
    /// Claude sessions among them.
    pub claude_sessions: usize,
    /// Turns that ended, all sessions.
    pub turns: usize,
    /// Turns that ended with an error.
    pub failed_turns: usize,
    /// Patches each reading client folded.
    pub patches: Vec<u64>,
    /// Snapshots each reading client re-read (after a gap or a resync).
    pub rereads: Vec<u64>,
    /// Resyncs the idle client was sent once it read.
    pub idle_resyncs: u64,
    /// Requests the idle client made on its own (unread, subscribed) connection during
    /// the run, one a second, every one answered (a reply stuck behind its unread
    /// events fails the run).
    pub idle_replies: u64,
    /// Daemon RSS samples (KiB), one a second.
    pub daemon_rss: Vec<u64>,
    /// This process's RSS samples (KiB): the clients.
    pub client_rss: Vec<u64>,
    /// Sessions whose snapshots (each client's, the daemon's, the store's) all agree.
    pub equal: usize,
    /// Sessions where they do not, and how.
    pub unequal: Vec<String>,
    /// Wall time.
    pub seconds: f64,
}

fn rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// The least-squares slope of `samples` (one a second) after the first `skip`, in KiB/s.
pub fn slope(samples: &[u64], skip: usize) -> f64 {
    let ys: Vec<f64> = samples.iter().skip(skip).map(|v| *v as f64).collect();
    let n = ys.len() as f64;
    if ys.len() < 2 {
        return 0.0;
    }
    let mx = (n - 1.0) / 2.0;
    let my = ys.iter().sum::<f64>() / n;
    let (mut num, mut den) = (0.0, 0.0);
    for (i, y) in ys.iter().enumerate() {
        let dx = i as f64 - mx;
        num += dx * (y - my);
        den += dx * dx;
    }
    if den == 0.0 {
        0.0
    } else {
        num / den
    }
}

/// A client subscribed to every session, folding each.
struct Watcher {
    /// Re-reads go over this connection too: its replies never wait behind pushed
    /// events it has not read.
    conn: Conn,
    snaps: HashMap<String, (UniversalSnapshot, u64)>,
    patches: u64,
    rereads: u64,
    resyncs: u64,
}

impl Watcher {
    async fn new(home: &Path, env: &[(String, String)]) -> Result<Watcher, String> {
        let conn = connect(home, env).await?;
        conn.client
            .request(ClientRequest::SubscribeAll {})
            .await
            .map_err(|e| e.to_string())?;
        Ok(Watcher {
            conn,
            snaps: HashMap::new(),
            patches: 0,
            rereads: 0,
            resyncs: 0,
        })
    }

    async fn reread(&mut self, key: &str) -> Result<(), String> {
        let at = self.conn.snapshot(key).await?;
        self.snaps.insert(key.to_string(), (at.snapshot, at.seq));
        self.rereads += 1;
        Ok(())
    }

    /// Folds what has arrived (at most a few thousand events), waiting at most `wait`
    /// for the first.
    async fn drain(&mut self, wait: Duration) -> Result<usize, String> {
        let mut first = true;
        for n in 0..4096 {
            let ev = if first {
                first = false;
                match tokio::time::timeout(wait, self.conn.events.recv()).await {
                    Ok(Some(ev)) => ev,
                    Ok(None) => return Err("events ended".into()),
                    Err(_) => return Ok(n),
                }
            } else {
                match self.conn.events.try_recv() {
                    Ok(ev) => ev,
                    Err(_) => return Ok(n),
                }
            };
            match ev {
                Event::Message(ServerMessage::Patch(p)) => {
                    let known = self.snaps.get(&p.session_key).map(|(_, seq)| *seq);
                    match known {
                        Some(seq) if p.first_seq() == seq + 1 => {
                            if let Some((snap, seq)) = self.snaps.get_mut(&p.session_key) {
                                apply_in_place(snap, &p.patch);
                                *seq = p.seq;
                            }
                            // A merged patch stands for several.
                            self.patches += p.seq - p.first_seq() + 1;
                        }
                        Some(seq) if p.seq <= seq => {}
                        _ => self.reread(&p.session_key).await?,
                    }
                }
                Event::Message(ServerMessage::Resync { session_key }) => {
                    self.resyncs += 1;
                    let keys: Vec<String> = match session_key {
                        Some(k) => vec![k],
                        None => self.snaps.keys().cloned().collect(),
                    };
                    for k in keys {
                        self.reread(&k).await?;
                    }
                }
                Event::Disconnected(why) => return Err(why),
                _ => {}
            }
        }
        Ok(4096)
    }
}

fn long_reply() -> Turn {
    let chunks: Vec<String> = (0..400)
        .map(|i| format!("chunk {i} of a long reply. "))
        .collect();
    let refs: Vec<&str> = chunks.iter().map(String::as_str).collect();
    Turn::new()
        .delta_delay(Duration::from_millis(5))
        .text_chunks(&refs)
}

/// Runs the load.
pub async fn run(config: &LoadConfig) -> Result<LoadReport, String> {
    let root = tempfile::Builder::new()
        .prefix("weft-load-")
        .tempdir()
        .map_err(|e| e.to_string())?;
    let home = root.path().join("home");
    let work = root.path().join("work");
    let claude_home = root.path().join("claude-home");
    for d in [&home, &work, &claude_home] {
        std::fs::create_dir_all(d).map_err(|e| e.to_string())?;
    }
    std::fs::write(
        claude_home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .map_err(|e| e.to_string())?;
    // No request is kept (the run reads none): each resumed claude turn sends its whole
    // conversation, so keeping them all was this process's growth (1.4 GiB in 10 min),
    // and even the newest 16 grew with the conversations (~90 KiB/s).
    let server = AnthropicServer::start_recording(
        Script::new().default_reply(long_reply()),
        std::future::pending(),
        Recorder::keeping_last(0),
    )
    .await
    .map_err(|e| e.to_string())?;
    let claude =
        weft_agent_process::find_agent("claude", &["WEFT_CLAUDE_BIN"], &|n| std::env::var(n).ok())
            .ok();
    let daemon = Daemon::start(&config.weft, &home, &root.path().join("daemon.log"))?;
    let mut env: Vec<(String, String)> = std::env::vars()
        .filter(|(k, _)| k != "WEFT_HOME" && !k.starts_with("ANTHROPIC_"))
        .collect();
    let s = |p: &Path| p.to_string_lossy().into_owned();
    for (k, v) in [
        ("WEFT_ECHO_DELAY_MS", "0".to_string()),
        ("HOME", s(&claude_home)),
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("ANTHROPIC_API_KEY", "sk-load-not-a-secret".into()),
        ("IS_SANDBOX", "1".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".into()),
    ] {
        env.push((k.to_string(), v));
    }
    if let Some(c) = &claude {
        env.push(("WEFT_CLAUDE_BIN".into(), s(c)));
    }
    let claude_sessions = if claude.is_some() { config.claude } else { 0 };

    let mut watchers = vec![
        Watcher::new(&home, &env).await?,
        Watcher::new(&home, &env).await?,
    ];
    // Subscribed to everything, never read until the end.
    let mut idle = Watcher::new(&home, &env).await?;
    let driver = connect(&home, &env).await?;
    let mut sessions: Vec<(String, &'static str, Option<String>)> = Vec::new();
    for i in 0..config.echo + claude_sessions {
        let agent = if i < config.echo { "echo" } else { "claude" };
        let acc = driver
            .prompt(agent, None, &work, &format!("load turn 0 of session {i}"))
            .await?;
        sessions.push((acc.session_key, agent, Some(acc.task_id)));
    }
    let mut report = LoadReport {
        sessions: sessions.len(),
        claude_sessions,
        ..Default::default()
    };
    let started = Instant::now();
    let mut next_sample = Instant::now();
    let mut turn_no = 1;
    let mut prompting = true;
    loop {
        if Instant::now() >= next_sample {
            report.daemon_rss.push(rss_kib(daemon.pid()));
            report.client_rss.push(rss_kib(std::process::id()));
            next_sample += Duration::from_secs(1);
            if prompting {
                let key = &sessions[report.daemon_rss.len() % sessions.len()].0;
                tokio::time::timeout(Duration::from_secs(20), idle.conn.snapshot(key))
                    .await
                    .map_err(|_| {
                        "the idle client's request waited 20 s behind its unread events".to_string()
                    })??;
                report.idle_replies += 1;
            }
        }
        if prompting
            && started.elapsed() >= config.duration
            && (watchers[0].patches >= config.min_patches
                || started.elapsed() > config.duration + Duration::from_secs(180))
        {
            prompting = false;
        }
        for w in &mut watchers {
            w.drain(Duration::from_millis(20)).await?;
        }
        // A session whose turn ended prompts again (until the run is over).
        let view = &watchers[0].snaps;
        let mut busy = 0;
        for (key, agent, task) in &mut sessions {
            let Some(t) = task.clone() else { continue };
            let Some((snap, _)) = view.get(key.as_str()) else {
                busy += 1;
                continue;
            };
            if !ended(snap, &t) {
                busy += 1;
                continue;
            }
            report.turns += 1;
            report.failed_turns += usize::from(snap.error.is_some());
            *task = None;
            if prompting {
                let acc = driver
                    .prompt(agent, Some(key), &work, &format!("load turn {turn_no}"))
                    .await?;
                turn_no += 1;
                *task = Some(acc.task_id);
                busy += 1;
            }
        }
        if !prompting && busy == 0 {
            break;
        }
        if started.elapsed() > config.duration + Duration::from_secs(360) {
            return Err("sessions still busy 3 minutes after the run".into());
        }
    }
    // Let the last patches land, then the idle client reads what it was sent.
    for w in &mut watchers {
        w.drain(Duration::from_millis(300)).await?;
    }
    // It learns of each session from that session's first patch (the first thousands
    // of events are still queued for it), and of what it missed from the resyncs.
    let mut quiet = 0;
    let idle_started = Instant::now();
    while quiet < 3 && idle_started.elapsed() < Duration::from_secs(60) {
        quiet = if idle.drain(Duration::from_millis(300)).await? == 0 {
            quiet + 1
        } else {
            0
        };
    }
    report.idle_resyncs = idle.resyncs;
    watchers.push(idle);

    // Every client's view, the daemon's and the store's.
    for (key, _, _) in &sessions {
        let daemon_snap = driver.snapshot(key).await?.snapshot;
        let stored = last_turn(&home, key)?;
        let mut why = Vec::new();
        for (i, w) in watchers.iter().enumerate() {
            if w.snaps.get(key).map(|(s, _)| s) != Some(&daemon_snap) {
                why.push(format!("client {i} differs"));
            }
        }
        if serde_json::to_value(&daemon_snap).ok() != stored {
            why.push("the store's last turn differs".into());
        }
        if why.is_empty() {
            report.equal += 1;
        } else {
            report.unequal.push(format!("{key}: {}", why.join(", ")));
        }
    }
    report.patches = watchers.iter().map(|w| w.patches).collect();
    report.rereads = watchers.iter().map(|w| w.rereads).collect();
    report.seconds = started.elapsed().as_secs_f64();
    drop(daemon);
    Ok(report)
}

/// The snapshot of the newest turn of `key` in the store.
fn last_turn(home: &Path, key: &str) -> Result<Option<serde_json::Value>, String> {
    let conn = rusqlite::Connection::open_with_flags(
        home.join("weft.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .map_err(|e| e.to_string())?;
    let _ = conn.busy_timeout(Duration::from_secs(10));
    let snap: Option<String> = conn
        .query_row(
            "SELECT snapshot FROM turns WHERE session_key = ?1 ORDER BY n DESC LIMIT 1",
            [key],
            |r| r.get(0),
        )
        .ok();
    Ok(snap.and_then(|s| serde_json::from_str(&s).ok()))
}
