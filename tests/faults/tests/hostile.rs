//! No input takes the daemon down, and no client holds up the others (issue 32 §4).
//! Each test runs a real `weft daemon` on a home of its own and stops it.

use std::path::PathBuf;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_util::codec::Framed;
use weft_faults::follow::{connect, Conn};
use weft_faults::procs::Daemon;
use weft_protocol::{
    AddAccountRequest, ClientRequest, ErrorCode, OpenTerminalRequest, PromptRequest, SecretInput,
};

struct Setup {
    dir: tempfile::TempDir,
    home: PathBuf,
    daemon: Daemon,
}

fn start() -> Setup {
    let weft = weft_faults::procs::weft_bin().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = dir.path().join("home");
    let daemon = Daemon::start(&weft, &home, &dir.path().join("daemon.log"))
        .unwrap_or_else(|e| panic!("{e}"));
    Setup { dir, home, daemon }
}

async fn client(home: &std::path::Path) -> Conn {
    connect(home, &[]).await.unwrap_or_else(|e| panic!("{e}"))
}

/// The daemon's resident memory, in KiB.
fn rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()
        .and_then(|s| {
            s.lines()
                .find(|l| l.starts_with("VmRSS:"))
                .and_then(|l| l.split_whitespace().nth(1))
                .and_then(|n| n.parse().ok())
        })
        .unwrap_or(0)
}

/// `daemon status` from a fresh client, within `within`.
async fn status_within(home: &std::path::Path, within: Duration) -> Result<Value, String> {
    tokio::time::timeout(within, async {
        let c = client(home).await;
        c.client
            .request(ClientRequest::DaemonStatus {})
            .await
            .map_err(|e| e.to_string())
    })
    .await
    .map_err(|_| format!("no answer within {} s", within.as_secs()))?
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_terminal_past_the_limits_is_refused_and_the_daemon_stays_up() {
    let mut s = start();
    let c = client(&s.home).await;
    let open = |cols, rows| {
        ClientRequest::OpenTerminal(OpenTerminalRequest {
            agent: Some("echo".into()),
            workdir: Some(s.dir.path().to_string_lossy().into_owned()),
            cols: Some(cols),
            rows: Some(rows),
            ..Default::default()
        })
    };
    let refused = c.client.request(open(65535, 65535)).await;
    let e = refused
        .err()
        .unwrap_or_else(|| panic!("a 65535x65535 terminal opened"));
    assert_eq!(e.code, ErrorCode::BadRequest, "{e:?}");
    assert!(e.message.contains("1000 columns × 500 rows"), "{e:?}");
    let opened = c
        .client
        .request(open(80, 24))
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let key = opened["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let resize = c
        .client
        .request(ClientRequest::ResizeTerminal {
            session_key: key.clone(),
            cols: 65535,
            rows: 65535,
        })
        .await;
    let e = resize
        .err()
        .unwrap_or_else(|| panic!("resized to 65535x65535"));
    assert_eq!(e.code, ErrorCode::BadRequest, "{e:?}");
    assert!(e.message.contains("1000 columns × 500 rows"), "{e:?}");
    c.client
        .request(ClientRequest::ResizeTerminal {
            session_key: key.clone(),
            cols: 1000,
            rows: 500,
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    status_within(&s.home, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("the daemon is gone: {e}"));
    c.client
        .request(ClientRequest::CloseTerminal { session_key: key })
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    s.daemon.stop();
}

/// A connection that sends requests as fast as it can and reads no reply: the daemon
/// stops reading it instead of growing (200,000 requests once left 1.4 GB resident),
/// and answers another client meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_flood_on_one_connection_leaves_the_daemon_small_and_answering() {
    const FLOOD: u64 = 200_000;
    /// Far above what the daemon needs (about 60 MB here), far below what the flood
    /// once made (1.4 to 1.9 GB).
    const BOUND_KIB: u64 = 600 * 1024;
    let mut s = start();
    let pid = s.daemon.pid();
    let before = rss_kib(pid);
    let stream = tokio::net::UnixStream::connect(weft_client::Home::at(&s.home).socket())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut sink, mut replies) = Framed::new(stream, weft_client::frame::codec()).split();
    // Said by hand: a client of this version reads its proof of being outside the
    // sandbox from the home, where there is one.
    let proof = std::fs::read_to_string(s.home.join("client.key")).ok();
    let hello = json!({
        "id": 0, "type": "hello", "version": weft_client::VERSION, "surface": "flood",
        "proof": proof.map(|p| p.trim().to_string()),
    });
    sink.send(bytes::Bytes::from(hello.to_string()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let welcome = replies.next().await;
    assert!(
        matches!(&welcome, Some(Ok(b)) if !String::from_utf8_lossy(b).contains("\"error\"")),
        "{welcome:?}"
    );
    let flooder = tokio::spawn(async move {
        for id in 1..=FLOOD {
            let frame = json!({"id": id, "type": "listAgentInstalls"}).to_string();
            if sink.feed(bytes::Bytes::from(frame)).await.is_err() {
                return id;
            }
            if id.is_multiple_of(256) && sink.flush().await.is_err() {
                return id;
            }
        }
        let _ = sink.flush().await;
        FLOOD
    });
    // Meanwhile another client is answered, again and again, and memory stays put.
    let mut peak = rss_kib(pid);
    for _ in 0..100 {
        status_within(&s.home, Duration::from_secs(30))
            .await
            .unwrap_or_else(|e| panic!("another client was not answered: {e}"));
        peak = peak.max(rss_kib(pid));
        if flooder.is_finished() {
            break;
        }
    }
    // Then every request of the flood is answered once its replies are read.
    let mut answered = 0u64;
    let deadline = Instant::now() + Duration::from_secs(300);
    while answered < FLOOD {
        match tokio::time::timeout_at(deadline, replies.next()).await {
            Ok(Some(Ok(_))) => answered += 1,
            other => panic!("after {answered} replies: {other:?}"),
        }
        if answered.is_multiple_of(1000) {
            peak = peak.max(rss_kib(pid));
        }
    }
    assert_eq!(flooder.await.unwrap_or_else(|e| panic!("{e}")), FLOOD);
    // What scripts/bench-flood.sh reports.
    println!(
        "flood rss_kib before={before} peak={peak} after={}",
        rss_kib(pid)
    );
    assert!(
        peak < BOUND_KIB,
        "the daemon grew to {} MiB under the flood",
        peak / 1024
    );
    s.daemon.stop();
}

/// An account whose secret command takes 12 s: prompts on it (as many as the daemon
/// has workers) do not hold up another client (the command once ran on the async
/// workers, twice per prompt).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_slow_secret_command_holds_up_no_other_client() {
    let mut s = start();
    let c = client(&s.home).await;
    let account = c
        .client
        .send(AddAccountRequest {
            agent: "claude".into(),
            kind: "api-key".into(),
            label: "slow".into(),
            secret: Some(SecretInput::Command {
                command: "sleep 12; echo k".into(),
            }),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e:?}"));
    let id = account.id;
    // As many as the daemon has workers (one per core), and at least two.
    let prompts = std::thread::available_parallelism().map_or(2, |n| n.get().max(2));
    for _ in 0..prompts {
        let (c2, id) = (client(&s.home).await, id.clone());
        let workdir = s.dir.path().to_string_lossy().into_owned();
        tokio::spawn(async move {
            let _ = c2
                .client
                .request(ClientRequest::Prompt(PromptRequest {
                    prompt: "hi".into(),
                    agent: Some("claude".into()),
                    account: Some(id),
                    workdir: Some(workdir),
                    ..Default::default()
                }))
                .await;
            // Kept open until the test ends.
            std::future::pending::<()>().await;
        });
    }
    // Every prompt reaches its secret command before the status is asked.
    let mut busy = 0;
    let deadline = Instant::now() + Duration::from_secs(10);
    while busy < prompts as u64 && Instant::now() < deadline {
        let st = status_within(&s.home, Duration::from_secs(5))
            .await
            .unwrap_or_else(|e| panic!("status while the commands run: {e}"));
        busy = st["busySessions"].as_u64().unwrap_or(0);
    }
    for _ in 0..5 {
        status_within(&s.home, Duration::from_secs(5))
            .await
            .unwrap_or_else(|e| panic!("status while the commands run: {e}"));
    }
    s.daemon.stop();
}

/// `weft daemon run --listen` says where it serves but not the UI's address with its
/// token: its stderr is the journal under systemd (security-3 L6). Its reader then
/// goes away, as a journal or a terminal may: the daemon still logs, answers and stops
/// (a closed stderr once made every later log line panic, and `daemon stop` hung).
#[test]
fn a_listening_daemon_prints_no_token() {
    use std::io::{BufRead, BufReader};
    let weft = weft_faults::procs::weft_bin().unwrap_or_else(|e| panic!("{e}"));
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = dir.path().join("home");
    let mut child = std::process::Command::new(&weft)
        .args(["daemon", "run", "--listen", "127.0.0.1:0"])
        .env("WEFT_HOME", &home)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let (tx, rx) = std::sync::mpsc::channel();
    // Reads until the UI's line, then drops the pipe's only reader.
    std::thread::spawn(move || {
        let mut said = Vec::new();
        for line in BufReader::new(stderr).lines().map_while(Result::ok) {
            let done = line.contains("browser UI at");
            said.push(line);
            if done {
                break;
            }
        }
        let _ = tx.send(said.join("\n"));
    });
    let said = rx.recv_timeout(Duration::from_secs(30));
    let weft_ = |args: &[&str]| {
        let mut c = std::process::Command::new(&weft);
        c.args(args)
            .env("WEFT_HOME", &home)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null());
        weft_faults::procs::status_within(&mut c, Duration::from_secs(40))
    };
    let listed = weft_(&["daemon", "status"]);
    let stopped = weft_(&["daemon", "stop"]);
    let _ = child.kill();
    let _ = child.wait();
    let said = said.unwrap_or_else(|_| panic!("the daemon said nothing of its UI within 30 s"));
    assert!(said.contains("browser UI at"), "{said}");
    assert_eq!(listed, Some(true), "daemon status with stderr closed");
    assert_eq!(stopped, Some(true), "daemon stop with stderr closed");
    // The listener's own token lives only in the daemon's memory, as a hash: stderr
    // names no token (a token is 64 hex digits), and no file holds one in clear.
    assert!(!said.contains("#token="), "{said}");
    let hex_run = said
        .split(|c: char| !c.is_ascii_hexdigit())
        .any(|w| w.len() >= 64);
    assert!(!hex_run, "a token is on stderr: {said}");
    let tokens = std::fs::read_to_string(home.join("tokens")).unwrap_or_default();
    assert!(
        tokens.lines().all(|l| l
            .split_whitespace()
            .nth(2)
            .is_some_and(|h| h.starts_with("sha256:"))),
        "a token in clear: {tokens:?}"
    );
}
