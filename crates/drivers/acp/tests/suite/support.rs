//! Shared test plumbing: a TurnSink that records and answers, isolated homes for the
//! real agents pointed at the scripted model servers, and finding the binaries (or
//! saying loudly why a test skipped).

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot, Notify};
use tokio_util::sync::CancellationToken;
use weft_acp::{AcpDriver, AcpSpec};
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, TurnSink};
use weft_protocol::{
    Accumulator, DriverEvent, Interaction, InteractionResponse, Phase, UniversalSnapshot,
};

type Policy = Box<dyn Fn(&Interaction) -> Option<InteractionResponse> + Send + Sync>;

/// Records a turn's events into a snapshot and answers its questions.
pub struct TestSink {
    acc: Mutex<Accumulator>,
    pub events: Mutex<Vec<DriverEvent>>,
    pub asked: Mutex<Vec<Interaction>>,
    policy: Mutex<Option<Policy>>,
    held: Mutex<VecDeque<(Interaction, oneshot::Sender<InteractionResponse>)>>,
    changed: Notify,
}

impl TestSink {
    pub fn new() -> Arc<Self> {
        Arc::new(Self {
            acc: Mutex::new(Accumulator::new(UniversalSnapshot {
                phase: Phase::Streaming,
                agent: "acp".into(),
                ..Default::default()
            })),
            events: Mutex::new(Vec::new()),
            asked: Mutex::new(Vec::new()),
            policy: Mutex::new(None),
            held: Mutex::new(VecDeque::new()),
            changed: Notify::new(),
        })
    }

    /// Answers every interaction with `f` (None: hold it).
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
        if let Some(id) = &result.session_id {
            acc.apply(
                &DriverEvent::Session {
                    session_id: id.clone(),
                    model: None,
                },
                0,
            );
        }
        acc.finish(result.error.clone(), stopped || !result.ok, 0);
        acc.snapshot().clone()
    }

    /// Polls `pred` on the snapshot until it holds or `timeout` passes.
    pub async fn wait_for(
        &self,
        timeout: Duration,
        pred: impl Fn(&UniversalSnapshot) -> bool,
    ) -> bool {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.changed.notified();
            if pred(&self.snapshot()) {
                return true;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return pred(&self.snapshot());
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
        mpsc::unbounded_channel().1
    }
}

/// Runs one turn with `cancel`; returns the result and the finished snapshot.
pub async fn run_with(
    driver: &dyn AgentDriver,
    input: AgentTurnInput,
    sink: &Arc<TestSink>,
    cancel: CancellationToken,
) -> (DriverResult, UniversalSnapshot) {
    let ctx = DriverContext::new(cancel.clone(), sink.clone());
    let result = tokio::time::timeout(Duration::from_secs(120), driver.run(input, ctx))
        .await
        .expect("the turn did not end in 120 s");
    let snap = sink.finish(&result, cancel.is_cancelled());
    (result, snap)
}

/// Runs one turn to its end.
pub async fn run(
    driver: &dyn AgentDriver,
    input: AgentTurnInput,
    sink: &Arc<TestSink>,
) -> (DriverResult, UniversalSnapshot) {
    run_with(driver, input, sink, CancellationToken::new()).await
}

fn ci() -> bool {
    std::env::var("CI").is_ok_and(|v| v == "true" || v == "1")
}

/// A preset's real binary, or None after printing why the test is skipped. Under
/// CI=true a missing binary fails the test instead.
pub fn preset_binary(id: &str) -> Option<(AcpSpec, PathBuf)> {
    let spec = weft_acp::config::presets()
        .into_iter()
        .find(|s| s.id == id)
        .expect("preset");
    match spec.find_binary() {
        Ok(p) => Some((spec, p)),
        Err(why) => {
            if ci() {
                panic!("CI=true and the real `{id}` binary is missing: {why}");
            }
            eprintln!("SKIPPED (no {id} binary): {why}");
            None
        }
    }
}

/// The pinned Claude Code that claude-agent-acp should run (the one the claude
/// driver's tests use), when installed.
pub fn claude_code_executable() -> Option<PathBuf> {
    weft_acp::config::find_program("claude").and_then(|p| p.canonicalize().ok())
}

/// A driver for `spec` whose stop grace is short.
pub fn driver(mut spec: AcpSpec) -> AcpDriver {
    spec.stop_grace = Duration::from_secs(5);
    AcpDriver::new(spec)
}

/// An isolated home and working folder.
pub struct Home {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Home {
    pub fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn workdir(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    pub fn input(&self, key: &str, prompt: &str, env: Vec<(String, String)>) -> AgentTurnInput {
        AgentTurnInput {
            session_key: key.into(),
            task_id: format!("task-{prompt}"),
            prompt: prompt.into(),
            workdir: self.workdir(),
            env,
            state_dir: self.home.path().join(".weft"),
            ..Default::default()
        }
    }
}

/// Settings for the Gemini CLI in `home`: API-key auth (needed when the base URL is
/// overridden), no usage statistics.
pub fn gemini_home(home: &std::path::Path, extra: serde_json::Value) {
    let dir = home.join(".gemini");
    std::fs::create_dir_all(&dir).unwrap();
    let mut settings = serde_json::json!({
        "security": {"auth": {"selectedType": "gemini-api-key"}},
        "privacy": {"usageStatisticsEnabled": false}
    });
    if let (Some(s), Some(e)) = (settings.as_object_mut(), extra.as_object()) {
        for (k, v) in e {
            s.insert(k.clone(), v.clone());
        }
    }
    std::fs::write(dir.join("settings.json"), settings.to_string()).unwrap();
}

/// The Gemini CLI's environment: isolated HOME, the scripted server.
pub fn gemini_env(home: &std::path::Path, base_url: &str) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("GEMINI_API_KEY".into(), "test-key".into()),
        ("GOOGLE_GEMINI_BASE_URL".into(), base_url.into()),
        ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
    ]
}

/// claude-agent-acp's environment: isolated HOME, the scripted server, the pinned
/// Claude Code.
pub fn claude_env(home: &std::path::Path, base_url: &str) -> Vec<(String, String)> {
    std::fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .unwrap();
    let mut env = vec![
        ("HOME".into(), home.display().to_string()),
        ("IS_SANDBOX".into(), "1".into()),
        ("ANTHROPIC_BASE_URL".into(), base_url.into()),
        ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
        (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
            "1".into(),
        ),
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ("CLAUDE_CODE_ENABLE_TASKS".into(), "0".into()),
    ];
    if let Some(exe) = claude_code_executable() {
        env.push(("CLAUDE_CODE_EXECUTABLE".into(), exe.display().to_string()));
    }
    env
}
