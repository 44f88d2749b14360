//! The extra hop of the kernel service, measured: one 20,000-delta turn from a driver
//! that streams as fast as it can, to a subscribed client — in process (a `Loom`
//! subscription) and through the daemon (its Unix socket, framing and JSON, a
//! `weft-client` subscription). Both use the SQLite store. Each delta carries the
//! microsecond it was emitted at, so the client measures emit→receive latency.
//! With a `weft` binary given, also the resident memory of an idle daemon process.
//!
//!   cargo run --release -p weft-daemon --example hop [-- DELTAS [path/to/weft]]

use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use async_trait::async_trait;
use weft_client::{Client, Event, Home};
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Loom};
use weft_protocol::verb;
use weft_protocol::{
    AgentInfo, Capabilities, ClientRequest, DriverEvent, Phase, PromptAccepted, PromptRequest,
    ServerMessage, SnapshotAt, SnapshotPatch,
};

fn micros() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_micros() as u64)
}

/// Streams `n` deltas, each its own emit time, as fast as the kernel takes them.
struct Flood(usize);

#[async_trait]
impl AgentDriver for Flood {
    fn id(&self) -> &str {
        "flood"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn info(&self) -> AgentInfo {
        AgentInfo {
            id: "flood".into(),
            name: "flood".into(),
            installed: true,
            version: None,
            capabilities: self.capabilities(),
            problem: None,
            facts: Default::default(),
        }
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let n = if input.prompt == "warm up" {
            10
        } else {
            self.0
        };
        // "paced": 20 deltas a millisecond (20,000/s, far above any model's stream);
        // "flood": as fast as the kernel takes them.
        let paced = input.prompt == "paced";
        let mut tick = tokio::time::interval(Duration::from_millis(1));
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        for i in 0..n {
            ctx.emit(DriverEvent::Text {
                delta: format!("{:020} ", micros()),
            });
            if paced && i % 20 == 19 {
                tick.tick().await;
            } else if i % 64 == 63 {
                // Let the reader run, as a real agent's pipe would.
                tokio::task::yield_now().await;
            }
        }
        DriverResult::ok()
    }
}

#[derive(Default)]
struct Tally {
    latencies: Vec<u64>,
    /// Patches a lagging in-process subscriber missed.
    skipped: usize,
    /// Resyncs the daemon asked of a lagging client.
    resyncs: usize,
    deltas: usize,
    first: Option<Instant>,
    last: Option<Instant>,
}

impl Tally {
    /// Counts one patch; true once the turn is done.
    fn take(&mut self, patch: &SnapshotPatch) -> bool {
        let now = micros();
        let at = Instant::now();
        if let Some(text) = &patch.text_append {
            for word in text.split_whitespace() {
                if let Ok(sent) = word.parse::<u64>() {
                    self.latencies.push(now.saturating_sub(sent));
                    self.deltas += 1;
                }
            }
            self.first.get_or_insert(at);
            self.last = Some(at);
        }
        patch.phase == Some(Phase::Done)
    }

    fn report(mut self, what: &str) {
        self.latencies.sort_unstable();
        let pick = |q: f64| {
            let i = ((self.latencies.len() as f64 - 1.0) * q).round() as usize;
            self.latencies.get(i).copied().unwrap_or(0)
        };
        let span = match (self.first, self.last) {
            (Some(a), Some(b)) => b.duration_since(a),
            _ => Duration::ZERO,
        };
        let rate = self.deltas as f64 / span.as_secs_f64().max(1e-9);
        println!(
            "{what:<22} {:>6} deltas  {:>9.0} events/s  latency p50 {:>6} µs  p99 {:>6} µs  max {:>7} µs  (missed {}, resyncs {})",
            self.deltas,
            rate,
            pick(0.5),
            pick(0.99),
            self.latencies.last().copied().unwrap_or(0),
            self.skipped,
            self.resyncs
        );
    }
}

async fn in_process(n: usize, dir: &std::path::Path, prompt: &str) -> Tally {
    let store = weft_store_port::open(&dir.join("weft.db")).unwrap_or_else(|e| panic!("{e}"));
    let loom = Loom::builder(dir)
        .driver(Arc::new(Flood(n)))
        .default_agent("flood")
        .store(store)
        .open()
        .unwrap_or_else(|e| panic!("{e}"));
    let workdir = Some(dir.to_string_lossy().into_owned());
    let warm = loom
        .prompt(PromptRequest {
            prompt: "warm up".into(),
            workdir: workdir.clone(),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    while loom
        .get_snapshot(&warm.session_key)
        .await
        .map_or(true, |at| at.snapshot.phase != Phase::Done)
    {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let mut sub = loom
        .subscribe(&warm.session_key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    loom.prompt(PromptRequest {
        prompt: prompt.into(),
        session_key: Some(warm.session_key.clone()),
        ..Default::default()
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let mut tally = Tally::default();
    let mut started = false;
    loop {
        let ev = match sub.patches.recv().await {
            Ok(ev) => ev,
            Err(weft_kernel::feed::RecvError::Overflowed(n)) => {
                tally.skipped += n as usize;
                continue;
            }
            Err(e) => panic!("{e}"),
        };
        if ev.patch.phase == Some(Phase::Streaming) {
            started = true;
        }
        if started && tally.take(&ev.patch) {
            break;
        }
    }
    loom.shutdown().await;
    tally
}

async fn through_daemon(n: usize, dir: &std::path::Path, prompt: &str) -> Tally {
    let home = Home::at(dir.join("home"));
    let options = weft_daemon::Options {
        home: home.clone(),
        idle: Duration::from_secs(600),
        listen: Vec::new(),
        extra_drivers: vec![Arc::new(Flood(n))],
    };
    let daemon = tokio::spawn(weft_daemon::run(options));
    let hello = weft_client::hello_with_env("bench");
    let (client, mut events) = loop {
        match Client::connect(&home, hello.clone()).await {
            Ok(c) => break c,
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    let workdir = Some(dir.to_string_lossy().into_owned());
    let warm: PromptAccepted = client
        .send(PromptRequest {
            prompt: "warm up".into(),
            agent: Some("flood".into()),
            workdir,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = warm.session_key;
    loop {
        let at: SnapshotAt = client
            .send(verb::GetSnapshot {
                session_key: key.clone(),
            })
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if at.snapshot.phase == Phase::Done {
            break;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let _: SnapshotAt = client
        .send(verb::Subscribe {
            session_key: key.clone(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let _: PromptAccepted = client
        .send(PromptRequest {
            prompt: prompt.into(),
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut tally = Tally::default();
    let mut started = false;
    loop {
        match events.recv().await {
            Some(Event::Message(ServerMessage::Patch(ev))) => {
                if ev.patch.phase == Some(Phase::Streaming) {
                    started = true;
                }
                if started && tally.take(&ev.patch) {
                    break;
                }
            }
            Some(Event::Message(ServerMessage::Resync { .. })) => tally.resyncs += 1,
            Some(_) => {}
            None => panic!("the daemon went away"),
        }
    }
    let _ = client.request(ClientRequest::DaemonStop {}).await;
    let _ = daemon.await;
    tally
}

/// VmRSS of an idle `weft daemon` process, 3 s after it started.
async fn idle_rss(weft: &str, dir: &std::path::Path) {
    let home = Home::at(dir.join("rss-home"));
    let connected = weft_client::start::connect_or_start(
        &home,
        weft_client::hello_with_env("bench"),
        Some(std::path::Path::new(weft)),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let pid = connected.client.welcome().pid;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    for line in status.lines() {
        if line.starts_with("VmRSS") || line.starts_with("RssAnon") {
            println!("idle daemon {line}");
        }
    }
    let _ = connected.client.request(ClientRequest::DaemonStop {}).await;
    tokio::time::sleep(Duration::from_millis(500)).await;
}

#[tokio::main]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n: usize = args.first().and_then(|a| a.parse().ok()).unwrap_or(20_000);
    for prompt in ["paced", "flood"] {
        for round in 1..=3 {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            in_process(n, dir.path(), prompt)
                .await
                .report(&format!("{prompt} in process #{round}"));
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            through_daemon(n, dir.path(), prompt)
                .await
                .report(&format!("{prompt} via daemon #{round}"));
        }
    }
    if let Some(weft) = args.get(1) {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let weft = std::path::absolute(weft).unwrap_or_else(|_| weft.into());
        idle_rss(&weft.to_string_lossy(), dir.path()).await;
    }
}
