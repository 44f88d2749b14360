//! The whole kernel path, measured: a scripted in-process driver emits one turn of N
//! text deltas of 20 characters, with a tool call (started, then done) every 1,000,
//! through `Loom` with the SQLite store inside the daemon, to one client subscribed over
//! the daemon's Unix socket (length-prefixed JSON frames, a `weft-client` subscription
//! folding every patch into its snapshot as a surface does).
//!
//! Reported per N: end-to-end events/s (prompt accepted → the client holds the whole
//! text, every patch having waited for the store's commit), the per-event cost of late
//! vs early events (at the driver, and at the client), bytes written to storage per
//! delta (`/proc/self/io` write_bytes: the database, its WAL and checkpoints) and the
//! event rows' own bytes, patch bytes per delta on the wire (each received message
//! re-encoded with the daemon's own encoder, plus the 4-byte length prefix), the
//! resyncs the daemon asked of the client, and this process's peak RSS (daemon and
//! client together).
//!
//!   cargo run --release -p weft-daemon --example fullpath [-- N...]
//!   (default 1000 20000 1000000)

// The allocator the `weft` binary runs the daemon with (crates/cli/src/main.rs).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_client::{Client, Event, Home};
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::verb;
use weft_protocol::{
    apply_in_place, AgentInfo, Capabilities, ClientRequest, DriverEvent, Phase, PromptAccepted,
    PromptRequest, ServerMessage, SnapshotAt, ToolCall, ToolStatus, UniversalSnapshot,
};

/// Deltas between the driver's progress marks and the client's.
const MARKS: usize = 100;

/// The scripted driver: `n` deltas, a tool call every 1,000, its emit times recorded at
/// every 1/MARKS of the turn.
struct Scripted {
    n: usize,
    marks: Arc<Mutex<Vec<Instant>>>,
}

#[async_trait]
impl AgentDriver for Scripted {
    fn id(&self) -> &str {
        "scripted"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn info(&self) -> AgentInfo {
        AgentInfo {
            id: "scripted".into(),
            name: "scripted".into(),
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
            self.n
        };
        let step = (n / MARKS).max(1);
        let mut marks = Vec::with_capacity(MARKS + 1);
        for i in 0..n {
            if i % step == 0 {
                marks.push(Instant::now());
            }
            ctx.emit(DriverEvent::Text {
                delta: format!("{i:019} "),
            });
            if i % 1000 == 999 {
                let mut call = ToolCall {
                    id: format!("call-{i}"),
                    name: "Bash".into(),
                    summary: "true".into(),
                    input: serde_json::json!({"command": "true"}),
                    ..Default::default()
                };
                ctx.emit(DriverEvent::Tool { call: call.clone() });
                call.status = ToolStatus::Done;
                call.result = Some(String::new());
                ctx.emit(DriverEvent::Tool { call });
            }
            if i % 64 == 63 {
                // Let the rest of the kernel run, as a real agent's pipe would.
                tokio::task::yield_now().await;
            }
        }
        marks.push(Instant::now());
        if input.prompt != "warm up" {
            *self.marks.lock() = marks;
        }
        DriverResult::ok()
    }
}

fn proc_field(file: &str, key: &str) -> u64 {
    std::fs::read_to_string(format!("/proc/self/{file}"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.trim().trim_end_matches(" kB").trim().parse().ok())
        .unwrap_or(0)
}

/// Mean time per delta over marks `a..b` (each mark 1/MARKS of the turn).
fn per_delta(marks: &[Instant], a: usize, b: usize, n: usize) -> f64 {
    let span = marks[b].duration_since(marks[a]).as_secs_f64();
    span * 1e9 / ((b - a) as f64 * (n / MARKS).max(1) as f64)
}

async fn snapshot(client: &Client, key: &str) -> SnapshotAt {
    client
        .send(verb::GetSnapshot {
            session_key: key.to_string(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

async fn one(n: usize) {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = Home::at(dir.path().join("home"));
    let marks = Arc::new(Mutex::new(Vec::new()));
    let options = weft_daemon::Options {
        home: home.clone(),
        idle: Duration::from_secs(600),
        listen: Vec::new(),
        extra_drivers: vec![Arc::new(Scripted {
            n,
            marks: marks.clone(),
        })],
    };
    let daemon = tokio::spawn(weft_daemon::run(options));
    let hello = weft_client::hello_with_env("bench");
    let (client, mut events) = loop {
        match Client::connect(&home, hello.clone()).await {
            Ok(c) => break c,
            Err(_) => tokio::time::sleep(Duration::from_millis(10)).await,
        }
    };
    // Re-reads after a resync go over a connection of their own: a reply on the
    // subscribed one would queue behind the pushed patches not yet read.
    let (ask, mut ask_events) = Client::connect(&home, hello.clone())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // Whatever the daemon pushes to it is read, so its replies never wait behind it.
    tokio::spawn(async move { while ask_events.recv().await.is_some() {} });
    let workdir = Some(dir.path().to_string_lossy().into_owned());
    let warm: PromptAccepted = client
        .send(PromptRequest {
            prompt: "warm up".into(),
            agent: Some("scripted".into()),
            workdir,
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = warm.session_key;
    while snapshot(&client, &key).await.snapshot.phase != Phase::Done {
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let sub: SnapshotAt = client
        .send(verb::Subscribe {
            session_key: key.clone(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut snap: UniversalSnapshot = sub.snapshot;
    let mut seq = sub.seq;
    let rss_before = proc_field("status", "VmRSS:");
    let written_before = proc_field("io", "write_bytes:");
    let started = Instant::now();
    let turn: PromptAccepted = client
        .send(PromptRequest {
            prompt: "go".into(),
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    // The client's progress: the time its folded text first held each 1/MARKS of it.
    let step = (n / MARKS).max(1);
    let mut seen: Vec<Instant> = Vec::with_capacity(MARKS + 1);
    let wire = AtomicU64::new(0);
    let mut patches = 0u64;
    let mut resyncs = 0u64;
    let mut begun = false;
    loop {
        let next = match tokio::time::timeout(Duration::from_secs(10), events.recv()).await {
            Ok(next) => next,
            Err(_) => {
                // Nothing for 10 s: say where the client and the daemon stand.
                let at = snapshot(&ask, &key).await;
                panic!(
                    "N={n}: no patch for 10 s; client at seq {seq}, {:?}, {} bytes of text, {resyncs} resyncs; daemon at seq {}, {:?}, {} bytes",
                    snap.phase,
                    snap.text.len(),
                    at.seq,
                    at.snapshot.phase,
                    at.snapshot.text.len()
                );
            }
        };
        match next {
            Some(Event::Message(message)) => {
                wire.fetch_add(
                    4 + weft_client::frame::encode_json(&message).len() as u64,
                    Ordering::Relaxed,
                );
                match message {
                    ServerMessage::Patch(ev) if ev.session_key == key => {
                        if ev.seq <= seq {
                            // Already in the snapshot re-read after a resync.
                            continue;
                        }
                        if ev.first_seq() == seq + 1 {
                            patches += 1;
                            apply_in_place(&mut snap, &ev.patch);
                            seq = ev.seq;
                        } else {
                            let at = snapshot(&ask, &key).await;
                            (snap, seq) = (at.snapshot, at.seq);
                        }
                    }
                    ServerMessage::Resync { .. } => {
                        resyncs += 1;
                        let at = snapshot(&ask, &key).await;
                        (snap, seq) = (at.snapshot, at.seq);
                    }
                    _ => continue,
                }
            }
            Some(_) => continue,
            None => panic!("the daemon went away"),
        }
        if snap.task_id.as_deref() == Some(turn.task_id.as_str()) {
            begun = true;
        }
        let deltas = snap.text.len() / 20;
        while seen.len() <= MARKS && deltas >= seen.len() * step {
            seen.push(Instant::now());
        }
        if begun && snap.phase == Phase::Done {
            break;
        }
    }
    let total = started.elapsed();
    let written = proc_field("io", "write_bytes:").saturating_sub(written_before);
    let rss_peak = proc_field("status", "VmHWM:");
    let tools = n / 1000;
    assert_eq!(
        snap.text.len(),
        20 * n,
        "the client's text is the whole reply"
    );
    assert_eq!(
        snap.tool_calls.len(),
        tools,
        "every tool call reached the client"
    );
    // Unread pushed events would hold back the stop's reply on this connection.
    drop(events);
    let _ = client.request(ClientRequest::DaemonStop {}).await;
    let _ = daemon.await;
    let db = dir.path().join("home").join("weft.db");
    let (rows, stored_events, row_bytes, db_size) = stored(&db);
    let events_total = n + 2 * tools;
    let marks = marks.lock().clone();
    let (a, b) = (MARKS / 10, MARKS / 5);
    let (c, d) = (MARKS * 4 / 5, MARKS * 9 / 10);
    let drv_early = per_delta(&marks, a, b, n);
    let drv_late = per_delta(&marks, c, d, n);
    let cli_early = per_delta(&seen, a, b, n);
    let cli_late = per_delta(&seen, c, d, n);
    println!(
        "N={n}: {events_total} events in {:.3} s = {:.0} events/s end to end ({} patches, {resyncs} resyncs)",
        total.as_secs_f64(),
        events_total as f64 / total.as_secs_f64(),
        patches,
    );
    // A resynced client skips patches, so its own per-delta times say nothing then.
    let client = if resyncs == 0 {
        format!(
            "client {cli_early:.0} → {cli_late:.0} ns ({:.2}×)",
            cli_late / cli_early
        )
    } else {
        "client resynced".to_string()
    };
    println!(
        "  per delta, 10-20% vs 80-90% of the turn: driver (kernel and store queue) {drv_early:.0} → {drv_late:.0} ns ({:.2}×), {client}",
        drv_late / drv_early,
    );
    assert_eq!(
        stored_events,
        events_total as u64 + 10,
        "every event is in the store (this turn's and the warm-up's 10)"
    );
    println!(
        "  storage written {:.1} B/delta (write_bytes {written}); {stored_events} events in {rows} rows, {:.1} B/delta of rows, database {:.1} B/delta; wire {:.1} B/delta",
        written as f64 / n as f64,
        row_bytes as f64 / n as f64,
        db_size as f64 / n as f64,
        wire.load(Ordering::Relaxed) as f64 / n as f64,
    );
    println!("  RSS {rss_before} kB before the turn, peak {rss_peak} kB (daemon and client in one process)");
}

/// The event rows as stored, the events they hold, their bytes, read back from SQLite directly (as the
/// fault harness does), and the database's size on disk once the daemon has closed it.
fn stored(db: &std::path::Path) -> (u64, u64, u64, u64) {
    let conn = rusqlite::Connection::open(db).unwrap_or_else(|e| panic!("{e}"));
    let (rows, events, bytes): (i64, i64, i64) = conn
        .query_row(
            &format!(
                "SELECT COUNT(*), {}, COALESCE(SUM(LENGTH(event) + LENGTH(task_id) + 16), 0) FROM events",
                weft_store::EVENT_COUNT_SQL
            ),
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .unwrap_or_else(|e| panic!("{e}"));
    let _ = conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()));
    drop(conn);
    let size = std::fs::metadata(db).map_or(0, |m| m.len());
    (rows as u64, events as u64, bytes as u64, size)
}

#[tokio::main]
async fn main() {
    let mut ns: Vec<usize> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    if ns.is_empty() {
        ns = vec![1_000, 20_000, 1_000_000];
    }
    for n in ns {
        one(n).await;
    }
}
