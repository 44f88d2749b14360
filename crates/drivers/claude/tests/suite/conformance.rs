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
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::fast_config;

/// A scripted Anthropic server and an isolated HOME (with `~/.claude.json` past
/// onboarding, and settings allowing Bash unless the behaviour is about permissions).
struct ClaudeModel {
    home: tempfile::TempDir,
    server: AnthropicServer,
}

impl ScriptedModel for ClaudeModel {
    fn env(&self) -> Vec<(String, String)> {
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
            Behaviour::Text => Script::new().turn_when(
                when::user_text_contains("Say hello"),
                Turn::new()
                    .text_chunks(&c::TEXT_CHUNKS)
                    .usage(c::USAGE.0, c::USAGE.1),
            ),
            Behaviour::ToolCall => tool_then("Run the tool", "toolu_c1", c::TOOL_COMMAND),
            Behaviour::FailingTool => tool_then("failing tool", "toolu_c2", c::FAILING_COMMAND),
            Behaviour::Permission => tool_then("probe file", "toolu_c3", c::PERMISSION_COMMAND),
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
                            "toolu_c4",
                            "AskUserQuestion",
                            json!({"questions": [{"question": "Which color?", "header": "Color",
                                "options": options, "multiSelect": false}]}),
                        ),
                    )
                    // Only the right answer gets the reply that names it.
                    .rule(
                        when::custom(move |r| {
                            r.last_tool_result("toolu_c4")
                                .is_some_and(|t| t.contains(pick))
                        }),
                        Turn::text_reply(&format!("{} {pick}", c::ANSWER_PREFIX)),
                    )
            }
            Behaviour::Steer => Script::new()
                .turn_when(
                    when::user_text_contains("slow tool"),
                    bash("toolu_c5", c::SLOW_COMMAND),
                )
                .rule(
                    when::any_text_contains(c::STEER_TEXT),
                    Turn::text_reply(c::AFTER_TOOL),
                )
                .rule(
                    when::tool_result_for("toolu_c5"),
                    Turn::text_reply(c::AFTER_TOOL),
                ),
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
        };
        let home = tempfile::tempdir().expect("home");
        std::fs::write(
            home.path().join(".claude.json"),
            r#"{"hasCompletedOnboarding":true}"#,
        )
        .expect("claude.json");
        if behaviour != Behaviour::Permission {
            // Commands run without asking, except where asking is the point.
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

weft_testkit::conformance_tests!(ClaudeHarness);
