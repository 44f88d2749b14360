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
use weft_testkit::{AnthropicServer, Script, Turn};

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
        self.server
            .messages_requests()
            .iter()
            .map(|r| r.all_text())
            .collect()
    }
}

fn bash(id: &str, command: &str) -> Turn {
    Turn::new().tool_use(
        id,
        "Bash",
        json!({"command": command, "description": "conformance command"}),
    )
}

fn tool_then(prompt: &str, id: &str, command: &str) -> Script {
    Script::new()
        .turn_when(when::user_text_contains(prompt), bash(id, command))
        .rule(when::tool_result_for(id), Turn::text_reply(c::AFTER_TOOL))
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
            Behaviour::Text => Script::new().turn_when(
                when::user_text_contains("Say hello"),
                Turn::new()
                    .text_chunks(&c::TEXT_CHUNKS)
                    .usage(c::USAGE.0, c::USAGE.1),
            ),
            Behaviour::ToolCall => tool_then("Run the tool", "toolu_a1", c::TOOL_COMMAND),
            Behaviour::FailingTool => tool_then("failing tool", "toolu_a2", c::FAILING_COMMAND),
            Behaviour::Permission => tool_then("probe file", "toolu_a3", c::PERMISSION_COMMAND),
            Behaviour::Question => {
                let options: Vec<_> = c::QUESTION_CHOICES
                    .iter()
                    .map(|l| json!({"label": l, "description": format!("the color {l}")}))
                    .collect();
                let pick = c::QUESTION_CHOICES[1];
                Script::new()
                    .turn_when(
                        when::user_text_contains("Ask me"),
                        Turn::new().tool_use(
                            "toolu_a4",
                            "AskUserQuestion",
                            json!({"questions": [{"question": "Which color?", "header": "Color",
                                "options": options, "multiSelect": false}]}),
                        ),
                    )
                    // Only the right answer gets the reply that names it.
                    .rule(
                        when::custom(move |r| {
                            r.last_tool_result("toolu_a4")
                                .is_some_and(|t| t.contains(pick))
                        }),
                        Turn::text_reply(&format!("{} {pick}", c::ANSWER_PREFIX)),
                    )
            }
            Behaviour::Steer => tool_then("slow tool", "toolu_a5", c::SLOW_COMMAND),
            Behaviour::Stop | Behaviour::Crash => Script::new()
                .turn_when(
                    when::user_text_contains("long time"),
                    Turn::new().text(c::STALL_TEXT).then_hang(),
                )
                .default_reply(Turn::text_reply(c::CONTINUED)),
            Behaviour::Resume => Script::new()
                .rule(
                    when::user_text_contains("otter"),
                    Turn::text_reply(c::RESUME_FIRST),
                )
                .default_reply(Turn::text_reply(c::RESUME_SECOND)),
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
        };
        let home = tempfile::tempdir().expect("home");
        if behaviour != Behaviour::Permission {
            let dir = home.path().join(".claude");
            std::fs::create_dir_all(&dir).expect("claude dir");
            std::fs::write(
                dir.join("settings.json"),
                r#"{"permissions":{"allow":["Bash"]}}"#,
            )
            .expect("settings");
        }
        let server = AnthropicServer::start(script).await.expect("server");
        Box::new(ClaudeModel { home, server })
    }
}

weft_testkit::conformance_tests!(ClaudeAcpHarness);
