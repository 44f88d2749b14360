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

use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};

pub use events::*;

use crate::playbook::Models;
use crate::served::{choose, items, model_of, stream_of, ScriptOf, Served, Wire};
use crate::server::{RecordedRequest, Reply};

crate::script::vendor_when! { ResponsesRequest;
    /// The latest user message's text contains `needle`.
    user_text_contains(needle) => user_text_contains;
    /// Any text anywhere in `input` (messages of every role, tool outputs) contains
    /// `needle`.
    any_text_contains(needle) => any_text_contains;
    /// The input carries the output of call `call_id`.
    tool_output_for(call_id) => tool_result_for;
    /// The model asked for contains `needle`.
    model_contains(needle) => model_contains;
    {
        /// The last input item is a tool output (the model is asked to go on after a
        /// call).
        pub fn after_tool_output() -> Matcher {
            Arc::new(|r: &ResponsesRequest| r.last_tool_output().is_some())
        }
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
        model_of(&self.body)
    }

    /// True for `stream: true`.
    pub fn stream(&self) -> bool {
        stream_of(&self.body)
    }

    /// The `input` items.
    pub fn input(&self) -> &[Value] {
        items(&self.body["input"])
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
pub type Script = ScriptOf<Responses>;

/// The OpenAI Responses wire.
pub struct Responses;

impl Wire for Responses {
    type Request = ResponsesRequest;
    type Turn = Turn;
    type Extra = Models;

    fn request(r: &RecordedRequest) -> Option<ResponsesRequest> {
        (r.method == "POST" && r.route() == "/v1/responses").then(|| ResponsesRequest {
            body: r.body.clone(),
        })
    }

    fn respond(script: &Mutex<Script>, request: &RecordedRequest) -> Reply {
        if request.method == "GET" && request.route() == "/v1/models" {
            return script
                .lock()
                .extra
                .list(|id| json!({"id": id, "object": "model", "owned_by": "weft-testkit"}));
        }
        let Some(req) = Self::request(request) else {
            return Reply::json(404, &error_body("not_found", "no such route"));
        };
        let (turn, served) = choose::<Self>(script, &req);
        turn.render(&req, served)
    }
}

/// A running scripted Responses server.
pub type ResponsesServer = Served<Responses>;

impl Served<Responses> {
    /// What a provider's `base_url` should be: `http://127.0.0.1:PORT/v1`.
    pub fn v1_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Every `POST /v1/responses` body so far, in order.
    pub fn responses_requests(&self) -> Vec<ResponsesRequest> {
        self.requests()
    }

    /// Waits until at least `n` responses requests arrived, or `timeout` passes.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.wait_for_answered(n, timeout).await
    }
}

crate::script::model_request_by_helpers!(ResponsesRequest, tool_result: tool_output);

crate::script::lower_into!(Turn, Script, thinking: reasoning_chunks, tool_call: function_call, delta_delay: delta_delay);
