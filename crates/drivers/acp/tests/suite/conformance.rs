//! The conformance suite every driver runs, against the real claude-agent-acp (which
//! runs the pinned Claude Code underneath) through the kernel's verbs. `steer` is
//! skipped by the suite itself: ACP has no steer. The `gemini-acp` preset runs the
//! suite in the weft-gemini crate, beside the Gemini driver.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use weft_acp::{AcpDriver, AcpSpec};
use weft_kernel::AgentDriver;
use weft_testkit::anthropic::when;
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};
use weft_testkit::{claude_code, AnthropicServer, Script, Turn};

use super::support::claude_env;

/// A scripted Anthropic server and an isolated HOME (past onboarding, Bash allowed
/// unless the behaviour is about permissions).
struct ClaudeModel {
    home: tempfile::TempDir,
    server: AnthropicServer,
}

impl ScriptedModel for ClaudeModel {
    fn env(&self) -> Vec<(String, String)> {
        claude_env(self.home.path(), &self.server.base_url())
    }

    fn requests(&self) -> Vec<String> {
        self.server.request_texts()
    }
}

fn spec() -> AcpSpec {
    let mut spec = weft_acp::config::presets()
        .into_iter()
        .find(|s| s.id == "claude-acp")
        .expect("the claude-acp preset");
    spec.stop_grace = Duration::from_secs(5);
    spec
}

/// The `claude-acp` preset of the ACP driver.
pub struct ClaudeAcpHarness;

#[async_trait]
impl Harness for ClaudeAcpHarness {
    fn driver(&self) -> Arc<dyn AgentDriver> {
        Arc::new(AcpDriver::new(spec()))
    }

    fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
        let mut spec = spec();
        spec.command = "/nonexistent/weft-test/claude-agent-acp".into();
        spec.bin_env.clear();
        Arc::new(AcpDriver::new(spec))
    }

    fn binary(&self) -> Result<PathBuf, String> {
        spec().find_binary(&|n| std::env::var(n).ok())
    }

    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
        let script = match behaviour {
            Behaviour::Question => claude_code::question("toolu_a4"),
            Behaviour::Plan => {
                // TodoWrite (CLAUDE_CODE_ENABLE_TASKS=0) is what claude-agent-acp turns
                // into an ACP `plan` update.
                let todos = json!({"todos": [
                    {"content": c::PLAN_STEPS[0], "status": "in_progress", "activeForm": "Reading the code"},
                    {"content": c::PLAN_STEPS[1], "status": "pending", "activeForm": "Writing the fix"}]});
                Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().tool_use("toolu_a6", "TodoWrite", todos),
                    )
                    .rule(
                        when::tool_result_for("toolu_a6"),
                        Turn::text_reply(c::PLAN_DONE),
                    )
            }
            other => c::common_script(other, "toolu_a", claude_code::bash),
        };
        let home = claude_code::home(behaviour);
        let server = AnthropicServer::start(script).await.expect("server");
        Box::new(ClaudeModel { home, server })
    }
}

weft_testkit::conformance_tests!(ClaudeAcpHarness);
