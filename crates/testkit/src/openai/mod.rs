//! A scripted OpenAI Responses API: `POST /v1/responses` (streamed and not) and
//! `GET /v1/models`, as codex calls them with a custom model provider
//! (`base_url = <server>/v1`, `wire_api = "responses"`).
//!
//! A [`Script`] holds the replies. Each responses request is answered by, in order:
//! 1. the first [`Script::rule`] whose matcher takes the request;
//! 2. the next queued [`Script::turn`], if its own guard (if any) takes the request;
//! 3. the default reply (`Turn::text_reply("ok")` unless [`Script::default_reply`]).
//!
//! A request's `input` is the whole conversation as the agent sends it: developer and
//! user messages (codex adds its own `<environment_context>` user message), the
//! model's earlier items, and `function_call_output` / `custom_tool_call_output`
//! items. [`ResponsesRequest`] has the helpers matchers and assertions need.

mod events;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};

pub use events::*;

use crate::playbook::Models;
use crate::server::{RecordedRequest, Recorder, Reply, Responder, ScriptedServer};

/// A predicate over a responses request.
pub type Matcher = Arc<dyn Fn(&ResponsesRequest) -> bool + Send + Sync>;

/// Ready-made matchers.
pub mod when {
    use super::{Matcher, ResponsesRequest};
    use crate::script::{typed, when as neutral};
    use std::sync::Arc;

    /// The latest user message's text contains `needle`.
    pub fn user_text_contains(needle: &str) -> Matcher {
        typed(neutral::user_text_contains(needle))
    }

    /// Any text anywhere in `input` (messages of every role, tool outputs) contains
    /// `needle`.
    pub fn any_text_contains(needle: &str) -> Matcher {
        typed(neutral::any_text_contains(needle))
    }

    /// The input carries the output of call `call_id`.
    pub fn tool_output_for(call_id: &str) -> Matcher {
        typed(neutral::tool_result_for(call_id))
    }

    /// The last input item is a tool output (the model is asked to go on after a call).
    pub fn after_tool_output() -> Matcher {
        Arc::new(|r: &ResponsesRequest| r.last_tool_output().is_some())
    }

    /// The model asked for contains `needle`.
    pub fn model_contains(needle: &str) -> Matcher {
        typed(neutral::model_contains(needle))
    }

    /// Any custom predicate.
    pub fn custom(f: impl Fn(&ResponsesRequest) -> bool + Send + Sync + 'static) -> Matcher {
        Arc::new(f)
    }
}

/// A `POST /v1/responses` body, with helpers for matching and assertions.
#[derive(Debug, Clone)]
pub struct ResponsesRequest {
    /// The body as sent.
    pub body: Value,
}

impl ResponsesRequest {
    /// The model asked for.
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or_default()
    }

    /// True for `stream: true`.
    pub fn stream(&self) -> bool {
        self.body["stream"].as_bool().unwrap_or(false)
    }

    /// The `input` items.
    pub fn input(&self) -> &[Value] {
        self.body["input"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Names of the tools offered (hosted tools by their type, e.g. `web_search`).
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["name"].as_str().or(t["type"].as_str()))
                    .map(String::from)
                    .collect()
            })
            .unwrap_or_default()
    }

    /// The `type` of the offered tool `name` (`function`, `custom`, …).
    pub fn tool_type(&self, name: &str) -> Option<String> {
        self.body["tools"]
            .as_array()?
            .iter()
            .find(|t| t["name"] == name)
            .and_then(|t| t["type"].as_str().map(String::from))
    }

    /// Texts of every message with `role`, in order.
    pub fn texts_of(&self, role: &str) -> Vec<String> {
        self.input()
            .iter()
            .filter(|i| i["type"] == "message" && i["role"] == role)
            .map(|i| content_text(&i["content"]))
            .collect()
    }

    /// Text of the last user message.
    pub fn last_user_text(&self) -> String {
        self.texts_of("user").pop().unwrap_or_default()
    }

    /// All text in `input`: messages of every role, tool calls' arguments and outputs.
    pub fn all_text(&self) -> String {
        self.input()
            .iter()
            .map(item_text)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The output given for call `call_id`, anywhere in `input`.
    pub fn tool_output(&self, call_id: &str) -> Option<String> {
        self.input()
            .iter()
            .find(|i| is_tool_output(i) && i["call_id"] == call_id)
            .map(output_text)
    }

    /// The output, when the last input item is a tool output.
    pub fn last_tool_output(&self) -> Option<String> {
        self.input()
            .last()
            .filter(|i| is_tool_output(i))
            .map(output_text)
    }

    /// The last tool output anywhere in the input (a steer may follow it).
    pub fn latest_tool_output(&self) -> Option<String> {
        self.input()
            .iter()
            .rev()
            .find(|i| is_tool_output(i))
            .map(output_text)
    }

    /// `(call_id, name)` of every tool call the model made earlier in the input.
    pub fn calls(&self) -> Vec<(String, String)> {
        self.input()
            .iter()
            .filter(|i| i["type"] == "function_call" || i["type"] == "custom_tool_call")
            .map(|i| {
                (
                    i["call_id"].as_str().unwrap_or_default().to_string(),
                    i["name"].as_str().unwrap_or_default().to_string(),
                )
            })
            .collect()
    }
}

fn is_tool_output(item: &Value) -> bool {
    item["type"] == "function_call_output" || item["type"] == "custom_tool_call_output"
}

/// A tool output's text: a string, or the text of its content items.
fn output_text(item: &Value) -> String {
    match &item["output"] {
        Value::String(s) => s.clone(),
        other => content_text(other),
    }
}

fn item_text(item: &Value) -> String {
    match item["type"].as_str() {
        Some("message") => content_text(&item["content"]),
        Some("function_call") => item["arguments"].as_str().unwrap_or_default().to_string(),
        Some("custom_tool_call") => item["input"].as_str().unwrap_or_default().to_string(),
        Some("function_call_output" | "custom_tool_call_output") => output_text(item),
        _ => String::new(),
    }
}

/// Text of a `content` value: a string, or its `input_text` / `output_text` /
/// `text` parts joined by newlines.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(parts) => parts
            .iter()
            .filter_map(|p| p["text"].as_str())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The model's replies, in order, with rules for requests outside the order.
pub type Script = crate::playbook::Script<ResponsesRequest, Turn, Models>;

struct ResponsesResponder {
    script: Mutex<Script>,
}

impl Responder for ResponsesResponder {
    fn respond(&self, request: &RecordedRequest) -> Reply {
        let route = request.route();
        if request.method == "GET" && route == "/v1/models" {
            let script = self.script.lock();
            let data: Vec<Value> = script
                .extra
                .0
                .iter()
                .map(|id| json!({"id": id, "object": "model", "owned_by": "weft-testkit"}))
                .collect();
            return Reply::json(200, &json!({"object": "list", "data": data}));
        }
        if request.method != "POST" || route != "/v1/responses" {
            return Reply::json(404, &error_body("not_found", "no such route"));
        }
        let req = ResponsesRequest {
            body: request.body.clone(),
        };
        let mut script = self.script.lock();
        let turn = script.choose(&req);
        turn.render(&req, script.served)
    }
}

/// A running scripted Responses server.
pub struct ResponsesServer {
    server: ScriptedServer,
    responder: Arc<ResponsesResponder>,
}

impl ResponsesServer {
    /// Serves `script` on 127.0.0.1, a free port, until dropped.
    pub async fn start(script: impl Into<Script>) -> io::Result<Self> {
        Self::start_with_shutdown(script, std::future::pending()).await
    }

    /// Like [`ResponsesServer::start`], also stopping when `shutdown` resolves.
    pub async fn start_with_shutdown(
        script: impl Into<Script>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> io::Result<Self> {
        let responder = Arc::new(ResponsesResponder {
            script: Mutex::new(script.into()),
        });
        let server = ScriptedServer::start_with_shutdown(responder.clone(), shutdown).await?;
        Ok(Self { server, responder })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// What a provider's `base_url` should be: `http://127.0.0.1:PORT/v1`.
    pub fn v1_url(&self) -> String {
        format!("{}/v1", self.server.base_url())
    }

    /// The recorder of every request (404s included).
    pub fn recorder(&self) -> &Recorder {
        self.server.recorder()
    }

    /// Every `POST /v1/responses` body so far, in order.
    pub fn responses_requests(&self) -> Vec<ResponsesRequest> {
        self.recorder()
            .requests()
            .into_iter()
            .filter(is_responses)
            .map(|r| ResponsesRequest { body: r.body })
            .collect()
    }

    /// Waits until at least `n` responses requests arrived, or `timeout` passes.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.recorder()
            .wait_until(timeout, |reqs| {
                reqs.iter().filter(|r| is_responses(r)).count() >= n
            })
            .await
    }

    /// Queues one more turn while running.
    pub fn push_turn(&self, turn: impl Into<Turn>) {
        self.responder.script.lock().book.queue(None, turn.into());
    }

    /// Turns still queued.
    pub fn queued_turns(&self) -> usize {
        self.responder.script.lock().book.queued()
    }

    /// Stops the server at once, cutting open streams (a crashed model server).
    pub async fn shutdown(self) {
        self.server.shutdown().await
    }
}

fn is_responses(r: &RecordedRequest) -> bool {
    r.method == "POST" && r.route() == "/v1/responses"
}

impl crate::script::ModelRequest for ResponsesRequest {
    fn model(&self) -> &str {
        ResponsesRequest::model(self)
    }
    fn last_user_text(&self) -> String {
        ResponsesRequest::last_user_text(self)
    }
    fn all_text(&self) -> String {
        ResponsesRequest::all_text(self)
    }
    fn tool_names(&self) -> Vec<String> {
        ResponsesRequest::tool_names(self)
    }
    fn tool_result(&self, call_id: &str) -> Option<String> {
        self.tool_output(call_id)
    }
}

crate::script::lower_into!(Turn, Script, thinking: reasoning_chunks, tool_call: function_call, delta_delay: delta_delay);
