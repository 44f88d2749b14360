//! A scripted driver whose behaviour the prompt picks, and helpers to watch sessions.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use tokio::sync::Notify;
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Loom, LoomBuilder};
use weft_protocol::{
    AgentInfo, Capabilities, DriverEvent, InteractAction, InteractRequest, Interaction,
    InteractionKind, InteractionResponse, Phase, PromptAccepted, PromptRequest, Question,
    QuestionType, SnapshotAt, UniversalSnapshot,
};

/// Prompts: `hold:NAME` streams "started NAME" then waits for `release(NAME)` or stop;
/// `ask` asks a permission and replies with the answer; `steerable` takes one steer and
/// replies with it (`steerable after:NAME`: once NAME is released); anything else
/// replies at once.
#[derive(Default)]
pub struct ScriptDriver {
    gates: Mutex<HashMap<String, Arc<Notify>>>,
    pub info_calls: std::sync::atomic::AtomicUsize,
    /// Sessions the kernel asked to close, in order.
    pub closed: Mutex<Vec<String>>,
    /// Say the agent takes no steers mid-turn (as ACP agents and Gemini).
    pub no_steer: std::sync::atomic::AtomicBool,
}

impl ScriptDriver {
    fn gate(&self, name: &str) -> Arc<Notify> {
        self.gates
            .lock()
            .entry(name.to_string())
            .or_default()
            .clone()
    }

    pub fn release(&self, name: &str) {
        self.gate(name).notify_one();
    }
}

#[async_trait]
impl AgentDriver for ScriptDriver {
    fn id(&self) -> &str {
        "script"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            steer: !self.no_steer.load(std::sync::atomic::Ordering::Relaxed),
            interact: true,
            resume: true,
            tui: false,
        }
    }

    async fn info(&self) -> AgentInfo {
        self.info_calls
            .fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        AgentInfo {
            id: "script".into(),
            name: "script".into(),
            installed: true,
            version: None,
            capabilities: self.capabilities(),
            problem: None,
            facts: Default::default(),
        }
    }

    async fn close_session(&self, session_key: &str) {
        self.closed.lock().push(session_key.to_string());
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let session_id = input
            .session_id
            .clone()
            .unwrap_or_else(|| format!("native-{}", input.task_id));
        ctx.emit(DriverEvent::Session {
            session_id: session_id.clone(),
            model: None,
        });
        let prompt = input.prompt.clone();
        if let Some(name) = prompt.strip_prefix("hold:") {
            ctx.emit(DriverEvent::Text {
                delta: format!("started {name}"),
            });
            let gate = self.gate(name);
            tokio::select! {
                _ = gate.notified() => {}
                _ = ctx.cancelled() => return DriverResult { ok: false, session_id: Some(session_id), ..Default::default() },
            }
            ctx.emit(DriverEvent::Text {
                delta: " finished".into(),
            });
        } else if prompt == "ask" {
            let answer = ctx
                .ask_user(Interaction {
                    verdict: None,
                    prompt_id: String::new(),
                    kind: InteractionKind::Permission,
                    title: "May I?".into(),
                    questions: vec![Question {
                        id: "q".into(),
                        text: "May I?".into(),
                        kind: QuestionType::Select,
                        choices: Vec::new(),
                        multiple: false,
                        free_text: false,
                    }],
                    ..Default::default()
                })
                .await;
            let text = match answer.action {
                InteractAction::Cancel => "cancelled".to_string(),
                _ => format!("answer={}", answer.value.unwrap_or_default()),
            };
            ctx.emit(DriverEvent::Text { delta: text });
        } else if let Some(gate) = prompt.strip_prefix("steerable") {
            // `steerable after:NAME` asks for steers only once NAME is released (an
            // agent still starting).
            if let Some(name) = gate.trim().strip_prefix("after:") {
                ctx.emit(DriverEvent::Text {
                    delta: "starting; ".into(),
                });
                let gate = self.gate(name);
                tokio::select! {
                    _ = gate.notified() => {}
                    _ = ctx.cancelled() => return DriverResult { ok: false, ..Default::default() },
                }
            }
            let mut steer = ctx.register_steer();
            ctx.emit(DriverEvent::Text {
                delta: "waiting for steer".into(),
            });
            tokio::select! {
                Some(msg) = steer.recv() => ctx.emit(DriverEvent::Text { delta: format!(" got {}", msg.text) }),
                _ = ctx.cancelled() => return DriverResult { ok: false, ..Default::default() },
            }
        } else if prompt == "fail" {
            return DriverResult::failed("scripted failure");
        } else if prompt == "panic" {
            panic!("scripted panic");
        } else {
            ctx.emit(DriverEvent::Text {
                delta: format!("reply to {prompt}"),
            });
        }
        DriverResult {
            ok: true,
            session_id: Some(session_id),
            ..Default::default()
        }
    }
}

/// A prompt in the temp folder, to a new session or to `key`.
pub fn prompt(text: &str, key: Option<&str>) -> PromptRequest {
    PromptRequest {
        prompt: text.into(),
        session_key: key.map(Into::into),
        workdir: Some(std::env::temp_dir().to_string_lossy().into_owned()),
        ..Default::default()
    }
}

pub fn loom_with(driver: Arc<ScriptDriver>) -> Arc<Loom> {
    loom_in(driver, None)
}

/// `driver` as the default agent; the caller picks the store and any other port.
pub fn script_loom(dir: impl Into<std::path::PathBuf>, driver: Arc<ScriptDriver>) -> LoomBuilder {
    Loom::builder(dir).driver(driver).default_agent("script")
}

pub fn open(builder: LoomBuilder) -> Arc<Loom> {
    builder.open().unwrap_or_else(|e| panic!("open loom: {e}"))
}

/// A prompt the kernel must accept.
pub async fn send(loom: &Loom, request: PromptRequest) -> PromptAccepted {
    loom.prompt(request).await.unwrap_or_else(|e| panic!("{e}"))
}

/// Sends `request` and waits until its turn is done.
pub async fn finish(loom: &Loom, request: PromptRequest) -> (PromptAccepted, SnapshotAt) {
    let what = format!("{} done", request.prompt);
    let accepted = send(loom, request).await;
    let at = wait_for(
        loom,
        &accepted.session_key,
        &what,
        done_with(&accepted.task_id),
    )
    .await;
    (accepted, at)
}

/// Sends `hold:NAME` and waits until its turn runs; `driver.release(NAME)` ends it.
pub async fn hold(loom: &Loom, name: &str, key: Option<&str>) -> PromptAccepted {
    let accepted = send(loom, prompt(&format!("hold:{name}"), key)).await;
    let what = format!("{name} running");
    wait_for(
        loom,
        &accepted.session_key,
        &what,
        running(&accepted.task_id),
    )
    .await;
    accepted
}

pub async fn snapshot(loom: &Loom, key: &str) -> SnapshotAt {
    loom.get_snapshot(key)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

pub async fn history(loom: &Loom, key: &str) -> Vec<UniversalSnapshot> {
    loom.get_history(key)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Answers the pending interaction `prompt_id`, which must still be pending.
pub async fn answer(loom: &Loom, key: &str, prompt_id: &str, response: InteractionResponse) {
    loom.interact(InteractRequest {
        session_key: key.into(),
        prompt_id: prompt_id.into(),
        response,
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"))
}

pub fn has_notice(s: &UniversalSnapshot, needle: &str) -> bool {
    s.notices.iter().any(|n| n.contains(needle))
}

pub fn loom_in(driver: Arc<ScriptDriver>, state: Option<&std::path::Path>) -> Arc<Loom> {
    let dir = state
        .map(|p| p.to_path_buf())
        .unwrap_or_else(std::env::temp_dir);
    let builder = script_loom(dir, driver);
    let builder = if let Some(state) = state {
        let store = weft_store_port::open(&state.join("weft.db"))
            .unwrap_or_else(|e| panic!("open store: {e}"));
        builder.store(store)
    } else {
        builder.in_memory()
    };
    open(builder)
}

/// Polls `get_snapshot` until `pred` holds (10 s deadline).
pub async fn wait_for(
    loom: &Loom,
    key: &str,
    what: &str,
    pred: impl Fn(&UniversalSnapshot) -> bool,
) -> SnapshotAt {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        let at = loom
            .get_snapshot(key)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        if pred(&at.snapshot) {
            return at;
        }
        if tokio::time::Instant::now() > deadline {
            panic!("timed out waiting for {what}; snapshot: {:#?}", at.snapshot);
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

pub fn done_with(task_id: &str) -> impl Fn(&UniversalSnapshot) -> bool + '_ {
    move |s| s.task_id.as_deref() == Some(task_id) && s.phase == Phase::Done
}

pub fn running(task_id: &str) -> impl Fn(&UniversalSnapshot) -> bool + '_ {
    move |s| s.task_id.as_deref() == Some(task_id) && s.phase == Phase::Streaming
}
