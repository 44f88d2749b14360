//! Helpers for driving an agent's own terminal UI through the kernel in tests: open
//! the session's terminal, run its spec in a [`PtyBridge`], read the screen and the
//! snapshot back with deadlines (never fixed sleeps).
//!
//! The tests themselves (`tests/`) drive the real codex and gemini TUIs against the
//! testkit's scripted model servers; Claude's live in its driver crate.

use std::sync::Arc;
use std::time::{Duration, Instant};

use weft_kernel::ports::Accounts;
use weft_kernel::{AgentTurnInput, KernelError, Loom, TerminalOpened};
use weft_protocol::UniversalSnapshot;
use weft_pty::{PtyBridge, PtyError, PtySize, PtySpec};

/// How long any one wait may take.
pub const WAIT: Duration = Duration::from_secs(60);

/// The same spawn environment for every turn (the account/endpoint port in a test).
pub struct FixedEnv(pub Vec<(String, String)>);

impl Accounts for FixedEnv {
    fn resolve(&self, _input: &AgentTurnInput) -> Result<weft_kernel::ports::SpawnAccount, String> {
        Ok(weft_kernel::ports::SpawnAccount {
            env: self.0.clone(),
            ..Default::default()
        })
    }
}

/// A kernel with one driver and the test's environment, keeping nothing on disk.
pub fn loom(
    state: &std::path::Path,
    driver: Arc<dyn weft_kernel::AgentDriver>,
    env: Vec<(String, String)>,
) -> Result<Arc<Loom>, KernelError> {
    Loom::builder(state)
        .driver(driver)
        .accounts(Arc::new(FixedEnv(env)))
        .in_memory()
        .open()
}

/// Runs an opened terminal's program in a PTY of 40 rows by 120 columns.
pub fn spawn(opened: &TerminalOpened) -> Result<PtyBridge, PtyError> {
    PtyBridge::spawn(
        &PtySpec {
            program: opened.spec.program.clone(),
            args: opened.spec.args.clone(),
            base_env: None,
            env: opened.spec.env.clone(),
            cwd: opened.spec.cwd.clone(),
            ..PtySpec::default()
        },
        PtySize {
            rows: 40,
            cols: 120,
        },
    )
}

/// Polls the screen until `pred` holds; panics with the screen after [`WAIT`].
pub async fn wait_screen(bridge: &PtyBridge, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let text = bridge.screen_text();
        if pred(&text) {
            return text;
        }
        if Instant::now() >= deadline {
            panic!("timed out waiting for {what}; screen:\n{text}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Polls the session's snapshot until `pred` holds; panics with it after [`WAIT`].
pub async fn wait_snapshot(
    loom: &Loom,
    key: &str,
    what: &str,
    pred: impl Fn(&UniversalSnapshot) -> bool,
) -> UniversalSnapshot {
    let deadline = Instant::now() + WAIT;
    loop {
        let snap = match loom.get_snapshot(key).await {
            Ok(at) => at.snapshot,
            Err(e) => panic!("no snapshot for {key}: {e}"),
        };
        if pred(&snap) {
            return snap;
        }
        if Instant::now() >= deadline {
            panic!("timed out waiting for {what}; snapshot:\n{snap:#?}");
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Waits until the program has written nothing for `quiet` (a TUI done starting up),
/// at most [`WAIT`].
pub async fn settle(bridge: &PtyBridge, quiet: Duration) {
    let deadline = Instant::now() + WAIT;
    let mut len = bridge.output_len();
    let mut since = Instant::now();
    while Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
        let now = bridge.output_len();
        if now != len {
            len = now;
            since = Instant::now();
        } else if since.elapsed() >= quiet {
            return;
        }
    }
}

/// Types `text` a key at a time (as a person does: a TUI takes a burst of keys for a
/// paste, and some then ignore the Enter that follows) and presses Enter. Keys a TUI
/// still starting up dropped (the gemini CLI resets its terminal modes late, which
/// discards pending input) are noticed: the text is erased and typed again. An Enter
/// it dropped (the screen unchanged a moment later) is pressed again; on an empty
/// prompt it does nothing.
pub async fn submit(bridge: &PtyBridge, text: &str) {
    let write = |bytes: &[u8]| {
        if let Err(e) = bridge.write(bytes) {
            panic!("typing into the terminal failed: {e}");
        }
    };
    let mut shown = false;
    for _ in 0..3 {
        let mut buf = [0u8; 4];
        for c in text.chars() {
            write(c.encode_utf8(&mut buf).as_bytes());
            tokio::time::sleep(Duration::from_millis(15)).await;
        }
        let deadline = Instant::now() + Duration::from_secs(3);
        while !shown && Instant::now() < deadline {
            shown = bridge.screen_text().contains(text);
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        if shown {
            break;
        }
        write(&vec![0x7f; text.chars().count() + 8]);
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    if !shown {
        panic!(
            "the typed prompt never showed; screen:\n{}",
            bridge.screen_text()
        );
    }
    tokio::time::sleep(Duration::from_millis(200)).await;
    let typed = bridge.screen_text();
    for _ in 0..3 {
        write(b"\r");
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if bridge.screen_text() != typed {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

/// True when process `pid` is gone (or a zombie).
pub fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => s.split_whitespace().nth(2) == Some("Z"),
    }
}

/// Says loudly that a test is skipped for want of a binary, or fails under CI=true.
pub fn require(bin: Result<std::path::PathBuf, String>, what: &str) -> Option<std::path::PathBuf> {
    match bin {
        Ok(p) => Some(p),
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("CI=true and the real {what} CLI is missing: {why}");
            }
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (no {what} binary; CI=true would fail this): {why}"
            );
            None
        }
    }
}
