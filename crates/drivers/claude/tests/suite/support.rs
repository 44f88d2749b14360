//! Shared test plumbing: a TurnSink that records and answers, an isolated Claude
//! home per test, and finding the real binary (or saying loudly why a test skipped).

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;
use weft_claude::{ClaudeDriver, Config};
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, TurnSink};
use weft_protocol::{
    Accumulator, DriverEvent, Interaction, InteractionResponse, Phase, UniversalSnapshot,
};
use weft_testkit::{AnthropicServer, Script};

type Policy = Box<dyn Fn(&Interaction) -> Option<InteractionResponse> + Send + Sync>;

/// Records a turn's events into a snapshot and answers its questions.
pub struct TestSink {
    acc: Mutex<Accumulator>,
    pub events: Mutex<Vec<DriverEvent>>,
    pub asked: Mutex<Vec<Interaction>>,
    policy: Mutex<Option<Policy>>,
    held: Mutex<VecDeque<(Interaction, oneshot::Sender<InteractionResponse>)>>,
    steer: Mutex<Option<mpsc::UnboundedSender<String>>>,
    changed: Notify,
}

impl TestSink {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            acc: Mutex::new(Accumulator::new(UniversalSnapshot {
                phase: Phase::Streaming,
                agent: "claude".into(),
                ..Default::default()
            })),
            events: Mutex::new(Vec::new()),
            asked: Mutex::new(Vec::new()),
            policy: Mutex::new(None),
            held: Mutex::new(VecDeque::new()),
            steer: Mutex::new(None),
            changed: Notify::new(),
        })
    }

    /// Answers every interaction with `f` (None: hold it until [`TestSink::answer`]).
    pub fn answer_with(
        &self,
        f: impl Fn(&Interaction) -> Option<InteractionResponse> + Send + Sync + 'static,
    ) {
        *self.policy.lock() = Some(Box::new(f));
    }

    pub fn snapshot(&self) -> UniversalSnapshot {
        self.acc.lock().snapshot().clone()
    }

    pub fn finish(&self, result: &DriverResult, stopped: bool) -> UniversalSnapshot {
        let mut acc = self.acc.lock();
        if acc.snapshot().text.is_empty() {
            if let Some(t) = &result.text {
                acc.apply(&DriverEvent::Text { delta: t.clone() }, 0);
            }
        }
        acc.finish(result.error.clone(), stopped || !result.ok, 0);
        acc.snapshot().clone()
    }

    pub fn steer(&self, text: &str) -> bool {
        match self.steer.lock().as_ref() {
            Some(tx) => tx.send(text.to_string()).is_ok(),
            None => false,
        }
    }

    /// Polls `pred` on the snapshot until it holds or `timeout` passes.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        pred: impl Fn(&UniversalSnapshot, usize) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            if pred(&self.snapshot(), self.held.lock().len()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return pred(&self.snapshot(), self.held.lock().len());
            }
        }
    }
}

impl TurnSink for TestSink {
    fn emit(&self, event: DriverEvent) {
        self.acc.lock().apply(&event, 0);
        self.events.lock().push(event);
        self.changed.notify_waiters();
    }

    fn ask(&self, interaction: Interaction) -> oneshot::Receiver<InteractionResponse> {
        let (tx, rx) = oneshot::channel();
        self.asked.lock().push(interaction.clone());
        let answer = self.policy.lock().as_ref().and_then(|p| p(&interaction));
        match answer {
            Some(a) => {
                let _ = tx.send(a);
            }
            None => self.held.lock().push_back((interaction, tx)),
        }
        self.changed.notify_waiters();
        rx
    }

    fn register_steer(&self) -> mpsc::UnboundedReceiver<String> {
        let (tx, rx) = mpsc::unbounded_channel();
        *self.steer.lock() = Some(tx);
        rx
    }
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
        std::fs::write(
            home.path().join(".claude.json"),
            r#"{"hasCompletedOnboarding":true}"#,
        )
        .unwrap();
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
        vec![
            ("HOME".into(), self.home.path().display().to_string()),
            ("IS_SANDBOX".into(), "1".into()),
            ("ANTHROPIC_BASE_URL".into(), self.server.base_url()),
            ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ]
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
    let snap = sink.finish(&result, false);
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
