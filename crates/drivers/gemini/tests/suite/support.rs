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

/// The real `gemini`, or None after printing why the test is skipped. Under CI=true a
/// missing binary fails the test instead.
pub fn gemini_bin() -> Option<PathBuf> {
    match weft_gemini::acp_spec().find_binary() {
        Ok(p) => Some(p),
        Err(why) => {
            if ci() {
                panic!("CI=true and the real Gemini CLI is missing: {why}");
            }
            eprintln!("SKIPPED (no gemini binary): {why}");
            None
        }
    }
}

/// A driver with a short stop grace.
pub fn driver() -> weft_gemini::GeminiDriver {
    let cfg = weft_gemini::Config {
        stop_grace: Duration::from_secs(5),
        ..Default::default()
    };
    let mut spec = weft_gemini::acp_spec();
    spec.stop_grace = cfg.stop_grace;
    weft_gemini::GeminiDriver::with(spec, cfg)
}

/// An isolated home (with Gemini's settings) and working folder.
pub struct Home {
    pub home: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Home {
    pub fn new(settings: serde_json::Value) -> Self {
        let home = tempfile::tempdir().unwrap();
        let dir = home.path().join(".gemini");
        std::fs::create_dir_all(&dir).unwrap();
        let mut all = serde_json::json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false}
        });
        if let (Some(s), Some(e)) = (all.as_object_mut(), settings.as_object()) {
            for (k, v) in e {
                s.insert(k.clone(), v.clone());
            }
        }
        std::fs::write(dir.join("settings.json"), all.to_string()).unwrap();
        Self {
            home,
            work: tempfile::tempdir().unwrap(),
        }
    }

    pub fn workdir(&self) -> PathBuf {
        self.work.path().canonicalize().unwrap()
    }

    /// The CLI's environment: isolated HOME, the scripted server.
    pub fn env(&self, base_url: &str) -> Vec<(String, String)> {
        vec![
            ("HOME".into(), self.home.path().display().to_string()),
            ("GEMINI_API_KEY".into(), "test-key".into()),
            ("GOOGLE_GEMINI_BASE_URL".into(), base_url.into()),
            ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
        ]
    }

    pub fn input(&self, key: &str, prompt: &str, base_url: &str) -> AgentTurnInput {
        AgentTurnInput {
            session_key: key.into(),
            task_id: format!("task-{prompt}"),
            prompt: prompt.into(),
            workdir: self.workdir(),
            env: self.env(base_url),
            state_dir: self.home.path().join(".weft"),
            ..Default::default()
        }
    }
}
