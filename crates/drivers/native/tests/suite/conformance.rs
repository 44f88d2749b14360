//! The shared conformance suite for `native`, against each scripted model server
//! (Anthropic Messages, OpenAI Chat Completions).

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use weft_kernel::AgentDriver;
use weft_native::{Config, NativeDriver};
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};

use super::support::{driver, endpoint_env, fast_config};

const IN_PROCESS: &str = "the native agent runs inside the kernel: it has no process of its \
own to kill (a model connection dropped mid-stream is tested in the protocol tests)";

fn permission_for(b: Behaviour) -> &'static str {
    if b == Behaviour::Permission {
        "ask"
    } else {
        "auto"
    }
}

fn no_endpoint_driver() -> Arc<dyn AgentDriver> {
    Arc::new(NativeDriver::with_config(Config {
        home: Some("/nonexistent/weft-test/home".into()),
        ..fast_config()
    }))
}

mod anthropic {
    use super::*;
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};

    struct Model {
        server: AnthropicServer,
        env: Vec<(String, String)>,
    }

    impl ScriptedModel for Model {
        fn env(&self) -> Vec<(String, String)> {
            self.env.clone()
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
        Turn::new().tool_use(id, "bash", json!({"command": command}))
    }

    fn tool_then(prompt: &str, id: &str, command: &str) -> Script {
        Script::new()
            .turn_when(when::user_text_contains(prompt), bash(id, command))
            .rule(when::tool_result_for(id), Turn::text_reply(c::AFTER_TOOL))
    }

    pub struct AnthropicHarness;

    #[async_trait]
    impl Harness for AnthropicHarness {
        fn driver(&self) -> Arc<dyn AgentDriver> {
            Arc::new(driver())
        }
        fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
            no_endpoint_driver()
        }
        fn binary(&self) -> Result<PathBuf, String> {
            Ok(PathBuf::from("(in process)"))
        }
        fn unsupported(&self, b: Behaviour) -> Option<&'static str> {
            (b == Behaviour::Crash).then_some(IN_PROCESS)
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
                    let pick = c::QUESTION_CHOICES[1];
                    Script::new()
                        .turn_when(
                            when::user_text_contains("Ask me"),
                            Turn::new().tool_use(
                                "toolu_c4",
                                "ask_user",
                                json!({"question": "Which color?", "choices": c::QUESTION_CHOICES}),
                            ),
                        )
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
                Behaviour::Plan => Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().tool_use(
                            "toolu_c6",
                            "update_plan",
                            json!({"steps": [
                            {"text": c::PLAN_STEPS[0], "status": "in_progress"},
                            {"text": c::PLAN_STEPS[1]}]}),
                        ),
                    )
                    .rule(
                        when::tool_result_for("toolu_c6"),
                        Turn::text_reply(c::PLAN_DONE),
                    ),
            };
            let server = AnthropicServer::start(script).await.expect("server");
            let env = endpoint_env(
                "anthropic-messages",
                &server.base_url(),
                permission_for(behaviour),
            );
            Box::new(Model { server, env })
        }
    }

    weft_testkit::conformance_tests!(AnthropicHarness);
}

mod chat {
    use super::*;
    use weft_testkit::chat::{when, ChatServer, Script, Turn};

    struct Model {
        server: ChatServer,
        env: Vec<(String, String)>,
    }

    impl ScriptedModel for Model {
        fn env(&self) -> Vec<(String, String)> {
            self.env.clone()
        }
        fn requests(&self) -> Vec<String> {
            self.server
                .chat_requests()
                .iter()
                .map(|r| r.all_text())
                .collect()
        }
    }

    fn bash(id: &str, command: &str) -> Turn {
        Turn::new().tool_call(id, "bash", json!({"command": command}))
    }

    fn tool_then(prompt: &str, id: &str, command: &str) -> Script {
        Script::new()
            .turn_when(when::user_text_contains(prompt), bash(id, command))
            .rule(when::tool_output_for(id), Turn::text_reply(c::AFTER_TOOL))
    }

    pub struct ChatHarness;

    #[async_trait]
    impl Harness for ChatHarness {
        fn driver(&self) -> Arc<dyn AgentDriver> {
            Arc::new(driver())
        }
        fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
            no_endpoint_driver()
        }
        fn binary(&self) -> Result<PathBuf, String> {
            Ok(PathBuf::from("(in process)"))
        }
        fn unsupported(&self, b: Behaviour) -> Option<&'static str> {
            (b == Behaviour::Crash).then_some(IN_PROCESS)
        }
        async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
            let script = match behaviour {
                Behaviour::Text => Script::new().turn_when(
                    when::user_text_contains("Say hello"),
                    Turn::new()
                        .text_chunks(&c::TEXT_CHUNKS)
                        .usage(c::USAGE.0, c::USAGE.1),
                ),
                Behaviour::ToolCall => tool_then("Run the tool", "call_c1", c::TOOL_COMMAND),
                Behaviour::FailingTool => tool_then("failing tool", "call_c2", c::FAILING_COMMAND),
                Behaviour::Permission => tool_then("probe file", "call_c3", c::PERMISSION_COMMAND),
                Behaviour::Question => {
                    let pick = c::QUESTION_CHOICES[1];
                    Script::new()
                        .turn_when(
                            when::user_text_contains("Ask me"),
                            Turn::new().tool_call(
                                "call_c4",
                                "ask_user",
                                json!({"question": "Which color?", "choices": c::QUESTION_CHOICES}),
                            ),
                        )
                        .rule(
                            when::custom(move |r| {
                                r.tool_output("call_c4").is_some_and(|t| t.contains(pick))
                            }),
                            Turn::text_reply(&format!("{} {pick}", c::ANSWER_PREFIX)),
                        )
                }
                Behaviour::Steer => Script::new()
                    .turn_when(
                        when::user_text_contains("slow tool"),
                        bash("call_c5", c::SLOW_COMMAND),
                    )
                    .rule(
                        when::any_text_contains(c::STEER_TEXT),
                        Turn::text_reply(c::AFTER_TOOL),
                    )
                    .rule(
                        when::tool_output_for("call_c5"),
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
                Behaviour::Plan => Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().tool_call(
                            "call_c6",
                            "update_plan",
                            json!({"steps": [
                            {"text": c::PLAN_STEPS[0], "status": "in_progress"},
                            {"text": c::PLAN_STEPS[1]}]}),
                        ),
                    )
                    .rule(
                        when::tool_output_for("call_c6"),
                        Turn::text_reply(c::PLAN_DONE),
                    ),
            };
            let server = ChatServer::start(script).await.expect("server");
            let env = endpoint_env("openai-chat", &server.v1_url(), permission_for(behaviour));
            Box::new(Model { server, env })
        }
    }

    weft_testkit::conformance_tests!(ChatHarness);
}

mod responses {
    use super::*;
    use weft_testkit::openai::{when, Script, Turn};
    use weft_testkit::ResponsesServer;

    struct Model {
        server: ResponsesServer,
        env: Vec<(String, String)>,
    }

    impl ScriptedModel for Model {
        fn env(&self) -> Vec<(String, String)> {
            self.env.clone()
        }
        fn requests(&self) -> Vec<String> {
            self.server
                .responses_requests()
                .iter()
                .map(|r| r.all_text())
                .collect()
        }
    }

    fn bash(id: &str, command: &str) -> Turn {
        Turn::new().function_call(id, "bash", json!({"command": command}))
    }

    fn tool_then(prompt: &str, id: &str, command: &str) -> Script {
        Script::new()
            .turn_when(when::user_text_contains(prompt), bash(id, command))
            .rule(when::tool_output_for(id), Turn::text_reply(c::AFTER_TOOL))
    }

    pub struct ResponsesHarness;

    #[async_trait]
    impl Harness for ResponsesHarness {
        fn driver(&self) -> Arc<dyn AgentDriver> {
            Arc::new(driver())
        }
        fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
            no_endpoint_driver()
        }
        fn binary(&self) -> Result<PathBuf, String> {
            Ok(PathBuf::from("(in process)"))
        }
        fn unsupported(&self, b: Behaviour) -> Option<&'static str> {
            (b == Behaviour::Crash).then_some(IN_PROCESS)
        }
        async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
            let script = match behaviour {
                Behaviour::Text => Script::new().turn_when(
                    when::user_text_contains("Say hello"),
                    Turn::new()
                        .text_chunks(&c::TEXT_CHUNKS)
                        .usage(c::USAGE.0, c::USAGE.1),
                ),
                Behaviour::ToolCall => tool_then("Run the tool", "call_c1", c::TOOL_COMMAND),
                Behaviour::FailingTool => tool_then("failing tool", "call_c2", c::FAILING_COMMAND),
                Behaviour::Permission => tool_then("probe file", "call_c3", c::PERMISSION_COMMAND),
                Behaviour::Question => {
                    let pick = c::QUESTION_CHOICES[1];
                    Script::new()
                        .turn_when(
                            when::user_text_contains("Ask me"),
                            Turn::new().function_call(
                                "call_c4",
                                "ask_user",
                                json!({"question": "Which color?", "choices": c::QUESTION_CHOICES}),
                            ),
                        )
                        .rule(
                            when::custom(move |r| {
                                r.tool_output("call_c4").is_some_and(|t| t.contains(pick))
                            }),
                            Turn::text_reply(&format!("{} {pick}", c::ANSWER_PREFIX)),
                        )
                }
                Behaviour::Steer => Script::new()
                    .turn_when(
                        when::user_text_contains("slow tool"),
                        bash("call_c5", c::SLOW_COMMAND),
                    )
                    .rule(
                        when::any_text_contains(c::STEER_TEXT),
                        Turn::text_reply(c::AFTER_TOOL),
                    )
                    .rule(
                        when::tool_output_for("call_c5"),
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
                Behaviour::Plan => Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().function_call(
                            "call_c6",
                            "update_plan",
                            json!({"steps": [
                            {"text": c::PLAN_STEPS[0], "status": "in_progress"},
                            {"text": c::PLAN_STEPS[1]}]}),
                        ),
                    )
                    .rule(
                        when::tool_output_for("call_c6"),
                        Turn::text_reply(c::PLAN_DONE),
                    ),
            };
            let server = ResponsesServer::start(script).await.expect("server");
            let env = endpoint_env(
                "openai-responses",
                &server.v1_url(),
                permission_for(behaviour),
            );
            Box::new(Model { server, env })
        }
    }

    weft_testkit::conformance_tests!(ResponsesHarness);
}

mod gemini {
    use super::*;
    use weft_testkit::gemini::{when, Script, Turn};
    use weft_testkit::GeminiServer;

    struct Model {
        server: GeminiServer,
        env: Vec<(String, String)>,
    }

    impl ScriptedModel for Model {
        fn env(&self) -> Vec<(String, String)> {
            self.env.clone()
        }
        fn requests(&self) -> Vec<String> {
            self.server
                .main_requests()
                .iter()
                .map(|r| r.all_text())
                .collect()
        }
    }

    fn bash(id: &str, command: &str) -> Turn {
        Turn::new().function_call_id(id, "bash", json!({"command": command}))
    }

    fn tool_then(prompt: &str, id: &str, command: &str) -> Script {
        Script::new()
            .turn_when(when::user_text_contains(prompt), bash(id, command))
            .rule(
                when::function_response_for("bash"),
                Turn::text_reply(c::AFTER_TOOL),
            )
    }

    pub struct GeminiHarness;

    #[async_trait]
    impl Harness for GeminiHarness {
        fn driver(&self) -> Arc<dyn AgentDriver> {
            Arc::new(driver())
        }
        fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
            no_endpoint_driver()
        }
        fn binary(&self) -> Result<PathBuf, String> {
            Ok(PathBuf::from("(in process)"))
        }
        fn unsupported(&self, b: Behaviour) -> Option<&'static str> {
            (b == Behaviour::Crash).then_some(IN_PROCESS)
        }
        async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
            let script = match behaviour {
                Behaviour::Text => Script::new().turn_when(
                    when::user_text_contains("Say hello"),
                    Turn::new()
                        .text_chunks(&c::TEXT_CHUNKS)
                        .usage(c::USAGE.0, c::USAGE.1),
                ),
                Behaviour::ToolCall => tool_then("Run the tool", "call_c1", c::TOOL_COMMAND),
                Behaviour::FailingTool => tool_then("failing tool", "call_c2", c::FAILING_COMMAND),
                Behaviour::Permission => tool_then("probe file", "call_c3", c::PERMISSION_COMMAND),
                Behaviour::Question => {
                    let pick = c::QUESTION_CHOICES[1];
                    Script::new()
                        .turn_when(
                            when::user_text_contains("Ask me"),
                            Turn::new().function_call_id(
                                "call_c4",
                                "ask_user",
                                json!({"question": "Which color?", "choices": c::QUESTION_CHOICES}),
                            ),
                        )
                        .rule(
                            when::custom(move |r| {
                                r.last_function_response("ask_user")
                                    .is_some_and(|t| t.to_string().contains(pick))
                            }),
                            Turn::text_reply(&format!("{} {pick}", c::ANSWER_PREFIX)),
                        )
                }
                Behaviour::Steer => Script::new()
                    .turn_when(
                        when::user_text_contains("slow tool"),
                        bash("call_c5", c::SLOW_COMMAND),
                    )
                    .rule(
                        when::any_text_contains(c::STEER_TEXT),
                        Turn::text_reply(c::AFTER_TOOL),
                    )
                    .rule(
                        when::function_response_for("bash"),
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
                Behaviour::Plan => Script::new()
                    .turn_when(
                        when::user_text_contains("Make a plan"),
                        Turn::new().function_call_id(
                            "call_c6",
                            "update_plan",
                            json!({"steps": [
                            {"text": c::PLAN_STEPS[0], "status": "in_progress"},
                            {"text": c::PLAN_STEPS[1]}]}),
                        ),
                    )
                    .rule(
                        when::function_response_for("update_plan"),
                        Turn::text_reply(c::PLAN_DONE),
                    ),
            };
            let server = GeminiServer::start(script).await.expect("server");
            let env = endpoint_env("gemini", &server.base_url(), permission_for(behaviour));
            Box::new(Model { server, env })
        }
    }

    weft_testkit::conformance_tests!(GeminiHarness);
}
