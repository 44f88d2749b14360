//! Shared test plumbing: a TurnSink that records and answers, an isolated Claude
//! home per test, and finding the real binary (or saying loudly why a test skipped).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use weft_claude::{ClaudeDriver, Config};
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{DriverEvent, UniversalSnapshot};
use weft_testkit::{AnthropicServer, Script};

use weft_testkit::sink::SinkOptions;
pub use weft_testkit::sink::TestSink;

/// A sink for claude: its steer channel kept, an unanswered question held.
pub fn new_sink() -> Arc<TestSink> {
    TestSink::with(SinkOptions::new().agent("claude").steer())
}

/// Ends the turn as these tests always have: the result's text stands in for a
/// snapshot that streamed none (no session event is replayed).
pub fn finish(sink: &TestSink, result: &DriverResult, stopped: bool) -> UniversalSnapshot {
    sink.accumulate(|acc| {
        if acc.snapshot().text.is_empty() {
            if let Some(t) = &result.text {
                acc.apply(&DriverEvent::Text { delta: t.clone() }, 0);
            }
        }
        acc.finish(result.error.clone(), stopped || !result.ok, 0);
        acc.snapshot().clone()
    })
}

/// The real `claude`, or None after printing why the test is skipped. Under CI=true a
/// missing binary fails the test instead.
pub fn claude_bin() -> Option<PathBuf> {
    match weft_claude::spawn::find_binary(&Config::from_env(), &|n| std::env::var(n).ok()) {
        Ok(p) => Some(p),
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("CI=true and the real Claude Code CLI is missing: {why}");
            }
            // Straight to stderr, past the test harness's capture, so a skip is seen.
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "SKIPPED (no claude binary; CI=true would fail this): {why}"
            );
            None
        }
    }
}

/// An isolated Claude home and working folder, and a scripted model server.
pub struct ClaudeEnv {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
    pub server: AnthropicServer,
}

impl ClaudeEnv {
    pub async fn start(script: Script) -> Self {
        Self::start_in(|_| script).await
    }

    /// Like [`ClaudeEnv::start`], with a script that knows the working folder.
    pub async fn start_in(make: impl FnOnce(&Path) -> Script) -> Self {
        let home = tempfile::tempdir().unwrap();
        weft_testkit::claude_code::onboarded(home.path());
        let work = tempfile::tempdir().unwrap();
        let script = make(&work.path().canonicalize().unwrap());
        let server = AnthropicServer::start(script).await.unwrap();
        Self { home, work, server }
    }

    pub fn workdir(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    /// The spawn environment: isolated HOME, the scripted server, no side traffic.
    pub fn env(&self) -> Vec<(String, String)> {
        weft_testkit::claude_code::env(self.home.path(), &self.server.base_url())
    }

    pub fn input(&self, key: &str, prompt: &str) -> AgentTurnInput {
        AgentTurnInput {
            session_key: format!("claude:{key}"),
            task_id: format!("task-{prompt}"),
            prompt: prompt.into(),
            workdir: self.workdir(),
            env: self.env(),
            state_dir: self.home.path().join(".weft"),
            ..Default::default()
        }
    }

    pub fn claude_dir(&self) -> PathBuf {
        self.home.path().join(".claude")
    }
}

/// Knobs for fast tests.
pub fn fast_config() -> Config {
    Config {
        stop_grace: Duration::from_secs(5),
        bg_quiet: Duration::from_millis(1500),
        stall: Duration::from_secs(60),
        ..Config::default()
    }
}

/// Runs one turn, returning the result and the finished snapshot.
pub async fn run_turn(
    driver: &ClaudeDriver,
    input: AgentTurnInput,
    sink: &Arc<TestSink>,
) -> (DriverResult, UniversalSnapshot) {
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let result = tokio::time::timeout(Duration::from_secs(120), driver.run(input, ctx))
        .await
        .expect("turn did not end in 120 s");
    let snap = finish(sink, &result, false);
    (result, snap)
}

/// True when process `pid` is gone (or a zombie).
pub fn gone(pid: u32) -> bool {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat"));
    match stat {
        Err(_) => true,
        Ok(s) => s.split_whitespace().nth(2) == Some("Z"),
    }
}

/// Polls until `pred` or `timeout`.
pub async fn eventually(timeout: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if pred() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

pub fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name)
}
