//! The conformance suite every driver runs, against the real `claude` CLI through the
//! kernel's verbs. It replaced the kernel scenarios this crate had of its own (text,
//! Bash, permissions allowed and denied, a question, stop then continue, steer during a
//! running tool, resume in a new kernel, usage); the driver-level tests in `e2e.rs` and
//! the `weft run` tests in `cli.rs` keep the rest (artifacts, subagents, server crashes).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use weft_claude::{ClaudeDriver, Config};
use weft_kernel::AgentDriver;
use weft_testkit::anthropic::when;
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};
use weft_testkit::{claude_code, AnthropicServer, Script, Turn};

use super::support::fast_config;

/// A scripted Anthropic server and an isolated HOME (with `~/.claude.json` past
/// onboarding, and settings allowing Bash unless the behaviour is about permissions).
struct ClaudeModel {
    home: tempfile::TempDir,
    server: AnthropicServer,
}

impl ScriptedModel for ClaudeModel {
    fn env(&self) -> Vec<(String, String)> {
        claude_code::env(self.home.path(), &self.server.base_url())
    }

    fn requests(&self) -> Vec<String> {
        self.server.request_texts()
    }
}

/// The conformance harness for Claude Code.
pub struct ClaudeHarness;

#[async_trait]
impl Harness for ClaudeHarness {
    fn driver(&self) -> Arc<dyn AgentDriver> {
        Arc::new(ClaudeDriver::with_config(fast_config()))
    }

    fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
        Arc::new(ClaudeDriver::with_config(Config {
            bin: Some("/nonexistent/weft-test/claude".into()),
            ..fast_config()
        }))
    }

    fn binary(&self) -> Result<PathBuf, String> {
        weft_claude::spawn::find_binary(&Config::from_env(), &|n| std::env::var(n).ok())
    }

    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
        let script = match behaviour {
            Behaviour::Question => claude_code::question("toolu_c4"),
            Behaviour::Steer => Script::new()
                .turn_when(
                    when::user_text_contains("slow tool"),
                    claude_code::bash("toolu_c5", c::SLOW_COMMAND),
                )
                .rule(
                    when::any_text_contains(c::STEER_TEXT),
                    Turn::text_reply(c::AFTER_TOOL),
                )
                .rule(
                    when::tool_result_for("toolu_c5"),
                    Turn::text_reply(c::AFTER_TOOL),
                ),
            Behaviour::Plan => {
                let (first, second) = (c::PLAN_STEPS[0], c::PLAN_STEPS[1]);
                Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new()
                            .tool_use(
                                "toolu_c6",
                                "TaskCreate",
                                json!({"subject": first, "description": first}),
                            )
                            .tool_use(
                                "toolu_c7",
                                "TaskCreate",
                                json!({"subject": second, "description": second}),
                            ),
                    )
                    .rule(
                        when::tool_result_for("toolu_c7"),
                        Turn::text_reply(c::PLAN_DONE),
                    )
            }
            other => c::common_script(other, "toolu_c", claude_code::bash),
        };
        let home = claude_code::home(behaviour);
        let server = AnthropicServer::start(script).await.expect("server");
        Box::new(ClaudeModel { home, server })
    }
}

weft_testkit::conformance_tests!(ClaudeHarness);
