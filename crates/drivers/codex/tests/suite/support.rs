//! Shared plumbing: the conformance harness for codex (the real `codex app-server`
//! against the scripted Responses server, in an isolated CODEX_HOME), and a recording
//! TurnSink for tests that drive the driver directly.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use weft_codex::{CodexDriver, Config};
use weft_kernel::AgentDriver;
use weft_protocol::{Accumulator, UniversalSnapshot};
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};
use weft_testkit::openai::{when, Script, Turn};
use weft_testkit::ResponsesServer;

/// Knobs for fast tests.
pub fn fast_config() -> Config {
    Config {
        stop_grace: Duration::from_secs(5),
        rpc_timeout: Duration::from_secs(60),
        stall: Duration::from_secs(120),
        ..Config::default()
    }
}

/// The real `codex`, or why it is missing.
pub fn codex_bin() -> Result<PathBuf, String> {
    weft_codex::spawn::find_binary(&Config::from_env(), &|n| std::env::var(n).ok())
}

/// The real `codex`, or None after saying why the test is skipped. Under CI=true a
/// missing binary fails the test instead.
pub fn require_codex() -> Option<PathBuf> {
    match codex_bin() {
        Ok(p) => Some(p),
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("CI=true and the real codex CLI is missing: {why}");
            }
            eprintln!("SKIPPED (no codex binary): {why}");
            None
        }
    }
}

/// A scripted Responses server and an isolated CODEX_HOME.
pub struct CodexModel {
    pub server: ResponsesServer,
    pub home: tempfile::TempDir,
    pub extra: Vec<(String, String)>,
}

impl CodexModel {
    pub async fn start(script: Script) -> Self {
        let server = ResponsesServer::start(script).await.expect("server");
        let home = tempfile::tempdir().expect("codex home");
        Self {
            server,
            home,
            extra: Vec::new(),
        }
    }

    /// Adds to the spawn environment.
    pub fn with(mut self, key: &str, value: &str) -> Self {
        self.extra.push((key.into(), value.into()));
        self
    }
}

impl ScriptedModel for CodexModel {
    fn env(&self) -> Vec<(String, String)> {
        let mut env = vec![
            (
                "CODEX_HOME".to_string(),
                self.home.path().display().to_string(),
            ),
            // codex runs commands in login shells: none of the user's profile.
            ("HOME".into(), self.home.path().display().to_string()),
            ("WEFT_CODEX_BASE_URL".into(), self.server.v1_url()),
            (
                "WEFT_CODEX_API_KEY_ENV".into(),
                "WEFT_TEST_OPENAI_KEY".into(),
            ),
            ("WEFT_TEST_OPENAI_KEY".into(), "sk-test".into()),
            ("WEFT_CODEX_MAX_RETRIES".into(), "0".into()),
            // A CODEX_HOME under /tmp cannot host the sandbox's helper (observed).
            ("WEFT_CODEX_SANDBOX".into(), "danger-full-access".into()),
            ("WEFT_CODEX_APPROVAL_POLICY".into(), "never".into()),
            ("WEFT_CODEX_CONFIG".into(), "model=\"mock-model\"".into()),
        ];
        for (k, v) in &self.extra {
            env.retain(|(key, _)| key != k);
            env.push((k.clone(), v.clone()));
        }
        env
    }

    fn requests(&self) -> Vec<String> {
        self.server.request_texts()
    }
}

/// The conformance harness.
pub struct CodexHarness;

fn tool_script(prompt: &str, call: &str, command: &str) -> Script {
    Script::new()
        .turn_when(
            when::user_text_contains(prompt),
            Turn::new().shell(call, command),
        )
        .turn_when(when::tool_output_for(call), Turn::text_reply(c::AFTER_TOOL))
}

#[async_trait]
impl Harness for CodexHarness {
    fn driver(&self) -> Arc<dyn AgentDriver> {
        Arc::new(CodexDriver::with_config(fast_config()))
    }

    fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
        Arc::new(CodexDriver::with_config(Config {
            bin: Some("/nonexistent/weft-test/codex".into()),
            ..fast_config()
        }))
    }

    fn binary(&self) -> Result<PathBuf, String> {
        codex_bin()
    }

    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
        let model = match behaviour {
            Behaviour::Text => CodexModel::start(c::text_script()).await,
            Behaviour::ToolCall => {
                CodexModel::start(tool_script("Run the tool", "call_tool", c::TOOL_COMMAND)).await
            }
            Behaviour::FailingTool => {
                CodexModel::start(tool_script("failing tool", "call_fail", c::FAILING_COMMAND))
                    .await
            }
            Behaviour::Permission => CodexModel::start(tool_script(
                "probe file",
                "call_perm",
                c::PERMISSION_COMMAND,
            ))
            .await
            .with("WEFT_CODEX_APPROVAL_POLICY", "untrusted"),
            Behaviour::Question => {
                let options: Vec<_> = c::QUESTION_CHOICES
                    .iter()
                    .map(|l| json!({"label": l, "description": format!("the color {l}")}))
                    .collect();
                let ask = json!({"questions": [{
                    "id": "color", "header": "Color", "question": "Which color?",
                    "options": options}]});
                CodexModel::start(
                    Script::new()
                        .turn_when(
                            when::user_text_contains("Ask me"),
                            Turn::new().function_call("call_ask", "request_user_input", ask),
                        )
                        .turn_when(
                            when::tool_output_for("call_ask"),
                            Turn::new().echo_tool_output(c::ANSWER_PREFIX),
                        ),
                )
                .await
            }
            Behaviour::Steer => {
                CodexModel::start(tool_script("slow tool", "call_slow", c::SLOW_COMMAND)).await
            }
            Behaviour::Stop | Behaviour::Crash => CodexModel::start(c::stall_script()).await,
            Behaviour::Resume => {
                CodexModel::start(
                    Script::new()
                        .turn_when(
                            when::user_text_contains("otter"),
                            Turn::text_reply(c::RESUME_FIRST),
                        )
                        .default_reply(Turn::text_reply(c::RESUME_SECOND)),
                )
                .await
            }
            Behaviour::Plan => {
                let text = format!(
                    "{}\n<proposed_plan>\n# Plan\n- {}\n- {}\n</proposed_plan>\n",
                    c::PLAN_DONE,
                    c::PLAN_STEPS[0],
                    c::PLAN_STEPS[1]
                );
                CodexModel::start(
                    Script::new()
                        .turn_when(when::user_text_contains("plan"), Turn::text_reply(&text)),
                )
                .await
                .with("WEFT_CODEX_COLLABORATION_MODE", "plan")
            }
        };
        Box::new(model)
    }
}

use weft_testkit::sink::SinkOptions;
pub use weft_testkit::sink::TestSink;

/// A sink for codex: its steer channel kept, an unanswered question cancelled.
pub fn new_sink() -> Arc<TestSink> {
    TestSink::with(
        SinkOptions::new()
            .agent("codex")
            .steer()
            .cancel_unanswered(),
    )
}

/// Runs one turn of `driver` against `sink`, returning the result and the finished
/// snapshot.
pub async fn run_turn(
    driver: &CodexDriver,
    input: weft_kernel::driver::AgentTurnInput,
    sink: &Arc<TestSink>,
) -> (weft_kernel::driver::DriverResult, UniversalSnapshot) {
    let ctx = weft_kernel::driver::DriverContext::new(
        tokio_util::sync::CancellationToken::new(),
        sink.clone(),
    );
    let result = tokio::time::timeout(c::TURN_TIMEOUT, driver.run(input, ctx))
        .await
        .expect("the turn did not end in time");
    let mut acc = Accumulator::new(sink.snapshot());
    acc.finish(result.error.clone(), !result.ok, 0);
    (result, acc.into_snapshot())
}

/// True when process `pid` is gone (or a zombie).
pub fn gone(pid: u32) -> bool {
    match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
        Err(_) => true,
        Ok(s) => {
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                == Some("Z")
        }
    }
}

/// Polls `pred` until it holds or `timeout` passes.
pub async fn eventually(timeout: Duration, mut pred: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        if pred() {
            return true;
        }
        if tokio::time::Instant::now() >= deadline {
            return false;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
}

/// The summaries of every rollout under `home`, as the session library's reader reads
/// them.
pub fn rollouts(home: &std::path::Path) -> Vec<weft_agent_spec::sessions::Meta> {
    use weft_agent_spec::sessions::{summary, NativeSessions};
    fn files(dir: &std::path::Path, out: &mut Vec<PathBuf>) {
        for e in std::fs::read_dir(dir).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                files(&p, out);
            } else {
                out.push(p);
            }
        }
    }
    let reader = weft_codex::native_sessions::CodexSessions;
    let mut found = Vec::new();
    for root in reader.session_roots(home) {
        files(&root, &mut found);
    }
    found.sort();
    found
        .iter()
        .filter(|p| reader.owns(home, p))
        .filter_map(|p| summary(&reader, home, p))
        .collect()
}
