//! The shared conformance suite for `native`, against each scripted model server
//! (Anthropic Messages, OpenAI Chat Completions and Responses, Gemini): one script per
//! behaviour, served in each wire format.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use serde_json::json;
use weft_kernel::AgentDriver;
use weft_native::{Config, NativeDriver};
use weft_testkit::conformance::{self as c, Behaviour, Harness, ScriptedModel};
use weft_testkit::script::{when, ModelServer, Protocol, Script, Turn};

use super::support::{driver, endpoint_env, fast_config};

const IN_PROCESS: &str = "the native agent runs inside the kernel: it has no process of its \
own to kill (a model connection dropped mid-stream is tested in the protocol tests)";

struct Model {
    server: ModelServer,
    env: Vec<(String, String)>,
}

impl ScriptedModel for Model {
    fn env(&self) -> Vec<(String, String)> {
        self.env.clone()
    }
    fn requests(&self) -> Vec<String> {
        self.server.request_texts()
    }
}

fn bash(id: &str, command: &str) -> Turn {
    Turn::new().tool_call(id, "bash", json!({"command": command}))
}

fn tool_then(prompt: &str, id: &str, command: &str) -> Script {
    Script::new()
        .turn_when(when::user_text_contains(prompt), bash(id, command))
        .rule(when::tool_result_for(id), Turn::text_reply(c::AFTER_TOOL))
}

/// The model's side of `behaviour`, whatever the wire.
fn script(behaviour: Behaviour) -> Script {
    match behaviour {
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
                    when::tool_result_contains("call_c4", pick),
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
                when::tool_result_for("call_c5"),
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
                when::tool_result_for("call_c6"),
                Turn::text_reply(c::PLAN_DONE),
            ),
    }
}

/// The native driver against a scripted server speaking `protocol`.
pub struct NativeHarness(Protocol);

#[async_trait]
impl Harness for NativeHarness {
    fn driver(&self) -> Arc<dyn AgentDriver> {
        Arc::new(driver())
    }
    fn driver_without_binary(&self) -> Arc<dyn AgentDriver> {
        Arc::new(NativeDriver::with_config(Config {
            home: Some("/nonexistent/weft-test/home".into()),
            ..fast_config()
        }))
    }
    fn binary(&self) -> Result<PathBuf, String> {
        Ok(PathBuf::from("(in process)"))
    }
    fn unsupported(&self, b: Behaviour) -> Option<&'static str> {
        (b == Behaviour::Crash).then_some(IN_PROCESS)
    }
    async fn model(&self, behaviour: Behaviour) -> Box<dyn ScriptedModel> {
        let server = ModelServer::start(self.0, script(behaviour))
            .await
            .expect("server");
        let (protocol, url) = match self.0 {
            Protocol::Anthropic => ("anthropic-messages", server.base_url()),
            Protocol::Chat => ("openai-chat", format!("{}/v1", server.base_url())),
            Protocol::Responses => ("openai-responses", format!("{}/v1", server.base_url())),
            Protocol::Gemini => ("gemini", server.base_url()),
        };
        let permission = if behaviour == Behaviour::Permission {
            "ask"
        } else {
            "auto"
        };
        let env = endpoint_env(protocol, &url, permission);
        Box::new(Model { server, env })
    }
}

macro_rules! per_protocol {
    ($($module:ident: $protocol:ident),*) => {
        $(mod $module {
            use super::*;
            weft_testkit::conformance_tests!(NativeHarness(Protocol::$protocol));
        })*
    };
}

per_protocol!(anthropic: Anthropic, chat: Chat, responses: Responses, gemini: Gemini);
