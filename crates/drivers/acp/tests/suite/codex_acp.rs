//! The conformance suite against the real codex-acp (Codex over ACP, Zed's adapter)
//! pointed at the scripted OpenAI Responses server through a custom model provider in
//! an isolated CODEX_HOME.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use weft_acp::AcpDriver;
use weft_kernel::AgentDriver;
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};
use weft_testkit::openai::{when, Script, Turn};
use weft_testkit::ResponsesServer;

use super::chat_agents::preset;

struct CodexModel {
    home: tempfile::TempDir,
    server: ResponsesServer,
}

impl ScriptedModel for CodexModel {
    fn env(&self) -> Vec<(String, String)> {
        let home = self.home.path().display().to_string();
        vec![
            ("CODEX_HOME".into(), home.clone()),
            ("HOME".into(), home),
            ("WEFT_TEST_OPENAI_KEY".into(), "sk-test".into()),
        ]
    }

    fn requests(&self) -> Vec<String> {
        self.server.request_texts()
    }
}

/// `$CODEX_HOME/config.toml`: the scripted server as the model provider; commands run
/// without asking unless `ask`.
pub fn config(base: &str, ask: bool) -> String {
    let approval = if ask { "untrusted" } else { "never" };
    format!(
        "model = \"mock-model\"\nmodel_provider = \"weft\"\napproval_policy = \"{approval}\"\n\
         sandbox_mode = \"danger-full-access\"\n\
         [model_providers.weft]\nname = \"weft\"\nbase_url = \"{base}\"\n\
         env_key = \"WEFT_TEST_OPENAI_KEY\"\nwire_api = \"responses\"\n\
         request_max_retries = 0\nstream_max_retries = 0\n"
    )
}

/// The `codex-acp` preset.
pub struct CodexAcpHarness;

#[async_trait]
impl Harness for CodexAcpHarness {
    fn driver(&self) -> Arc<dyn AgentDriver> {
        Arc::new(AcpDriver::new(preset("codex-acp")))
    }

    fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
        let mut spec = preset("codex-acp");
        spec.command = "/nonexistent/weft-test/codex-acp".into();
        spec.bin_env.clear();
        Arc::new(AcpDriver::new(spec))
    }

    fn binary(&self) -> Result<PathBuf, String> {
        preset("codex-acp").find_binary(&|n| std::env::var(n).ok())
    }

    fn deny_ends_turn(&self) -> Option<&'static str> {
        Some(
            "codex-acp 0.16.0's reject option aborts the turn (stopReason cancelled), \
             the model is not asked again",
        )
    }

    fn tokens_unreported(&self) -> Option<&'static str> {
        Some("codex-acp 0.16.0 reports only the context window (usage_update), no token counts")
    }

    fn unsupported(&self, behaviour: Behaviour) -> Option<&'static str> {
        match behaviour {
            // Seen: request_user_input is offered, but calling it answers "request_user_input
            // is unavailable in Default mode"; codex-acp's ACP modes are approval presets,
            // not codex's plan collaboration mode where the tool works.
            Behaviour::Question => Some(
                "codex-acp 0.16.0 refuses request_user_input outside codex's plan \
                 collaboration mode, which it offers no ACP way to choose",
            ),
            _ => None,
        }
    }

    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
        let script = match behaviour {
            Behaviour::Plan => {
                let plan = json!({"plan": [
                    {"step": c::PLAN_STEPS[0], "status": "in_progress"},
                    {"step": c::PLAN_STEPS[1], "status": "pending"}]});
                Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().function_call("call_c6", "update_plan", plan),
                    )
                    .rule(
                        when::tool_output_for("call_c6"),
                        Turn::text_reply(c::PLAN_DONE),
                    )
            }
            other => c::common_script(other, "call_c", |id, command| {
                Turn::new().shell(id, command)
            }),
        };
        let server = ResponsesServer::start(script).await.expect("server");
        let home = tempfile::tempdir().expect("codex home");
        std::fs::write(
            home.path().join("config.toml"),
            config(&server.v1_url(), behaviour == Behaviour::Permission),
        )
        .expect("config.toml");
        Box::new(CodexModel { home, server })
    }
}

weft_testkit::conformance_tests!(CodexAcpHarness);
