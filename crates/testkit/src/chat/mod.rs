//! A scripted OpenAI Chat Completions API: `POST /v1/chat/completions` (streamed as
//! `chat.completion.chunk` SSE frames ending in `data: [DONE]`, or one
//! `chat.completion` object) and `GET /v1/models`: the wire every "OpenAI-compatible
//! base URL" setting speaks (Qwen Code, Hermes, Kimi, Weft's own native agent, …).
//! The same routes without `/v1` are served too, for clients given the bare host.
//!
//! # Scripting it
//!
//! ```no_run
//! # async fn demo() -> std::io::Result<()> {
//! use serde_json::json;
//! use weft_testkit::chat::{when, ChatServer, Script, Turn};
//!
//! let script = Script::new()
//!     // The first request whose last user message mentions "hello": streamed text.
//!     .turn_when(when::user_text_contains("hello"), Turn::new().text_chunks(&["Hel", "lo"]))
//!     // A tool call; its arguments stream as several deltas.
//!     .turn(Turn::new().tool_call("call_1", "read_file", json!({"path": "a.txt"})))
//!     // Every request that carries call_1's result gets this reply.
//!     .rule(when::tool_output_for("call_1"), Turn::text_reply("Read it."));
//! let server = ChatServer::start(script).await?;
//! let base_url = server.v1_url(); // http://127.0.0.1:PORT/v1
//! # let _ = base_url;
//! // … run the agent against it, then check what it sent:
//! let sent = server.chat_requests();
//! assert_eq!(sent[0].bearer(), Some("sk-test"));
//! # Ok(()) }
//! ```
//!
//! Each chat request is answered by, in order:
//! 1. the first [`Script::rule`] whose matcher takes the request;
//! 2. the next queued [`Script::turn`], if its own guard (if any) takes the request;
//! 3. the default reply (`Turn::text_reply("ok")` unless [`Script::default_reply`]).
//!
//! A [`Turn`] renders to what the real API sends for the request it answers: a stream
//! when the request says `stream: true` (with the `usage` chunk only when it also says
//! `stream_options.include_usage`), else one JSON object with `usage`.
//! [`Turn::shell`] picks the agent's own shell tool from the tools the request offers.
//! [`ChatRequest`] has the helpers matchers and assertions need, headers included (so
//! a test can check the key an agent sent).

mod events;

use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};

pub use events::*;

use crate::playbook::Models;
use crate::served::{choose, items, model_of, stream_of, ScriptOf, Served, Wire};
use crate::server::{RecordedRequest, Reply};

crate::script::vendor_when! { ChatRequest;
    /// The latest user message's text contains `needle`.
    user_text_contains(needle) => user_text_contains;
    /// Any text anywhere in `messages` (every role, tool results, call arguments)
    /// contains `needle`.
    any_text_contains(needle) => any_text_contains;
    /// The messages carry the result of call `call_id`.
    tool_output_for(call_id) => tool_result_for;
    /// The model asked for contains `needle`.
    model_contains(needle) => model_contains;
    /// The request offers no tools (titles, summaries and other side calls).
    no_tools() => no_tools;
    {
        /// The last message is a tool result (the model is asked to go on after a
        /// call).
        pub fn after_tool_output() -> Matcher {
            Arc::new(|r: &ChatRequest| r.last_tool_output().is_some())
        }
    }
}

/// A `POST /v1/chat/completions` request, with helpers for matching and assertions.
#[derive(Debug, Clone)]
pub struct ChatRequest {
    /// The body as sent.
    pub body: Value,
    /// Headers, names lower-cased, in arrival order.
    pub headers: Vec<(String, String)>,
}

impl ChatRequest {
    fn from_recorded(r: &RecordedRequest) -> Self {
        Self {
            body: r.body.clone(),
            headers: r.headers.clone(),
        }
    }

    /// The first header named `name` (case-insensitive).
    pub fn header(&self, name: &str) -> Option<&str> {
        crate::server::header(&self.headers, name)
    }

    /// The token of `Authorization: Bearer <token>`.
    pub fn bearer(&self) -> Option<&str> {
        self.header("authorization")?.strip_prefix("Bearer ")
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        model_of(&self.body)
    }

    /// True for `stream: true`.
    pub fn stream(&self) -> bool {
        stream_of(&self.body)
    }

    /// True when a streamed reply should end with a usage chunk.
    pub fn include_usage(&self) -> bool {
        self.body["stream_options"]["include_usage"]
            .as_bool()
            .unwrap_or(false)
    }

    /// The `messages` array.
    pub fn messages(&self) -> &[Value] {
        items(&self.body["messages"])
    }

    /// The `tools` offered, as sent (`{type: "function", function: {name, parameters}}`).
    pub fn tools(&self) -> &[Value] {
        items(&self.body["tools"])
    }

    /// Names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.tools()
            .iter()
            .filter_map(|t| t["function"]["name"].as_str().map(String::from))
            .collect()
    }

    /// The JSON schema of offered tool `name`'s parameters.
    pub fn tool_parameters(&self, name: &str) -> Option<&Value> {
        self.tools()
            .iter()
            .find(|t| t["function"]["name"] == name)
            .map(|t| &t["function"]["parameters"])
    }

    /// Texts of every message with `role`, in order.
    pub fn texts_of(&self, role: &str) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m["role"] == role)
            .map(|m| content_text(&m["content"]))
            .collect()
    }

    /// Text of the last user message.
    pub fn last_user_text(&self) -> String {
        self.texts_of("user").pop().unwrap_or_default()
    }

    /// All text in `messages`: every role's content, tool calls' arguments, results.
    pub fn all_text(&self) -> String {
        self.messages()
            .iter()
            .map(message_text)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// The result given for call `call_id` (a `role: "tool"` message), anywhere.
    pub fn tool_output(&self, call_id: &str) -> Option<String> {
        self.messages()
            .iter()
            .find(|m| m["role"] == "tool" && m["tool_call_id"] == call_id)
            .map(|m| content_text(&m["content"]))
    }

    /// The result, when the last message is a tool result.
    pub fn last_tool_output(&self) -> Option<String> {
        self.messages()
            .last()
            .filter(|m| m["role"] == "tool")
            .map(|m| content_text(&m["content"]))
    }

    /// The last tool result anywhere (a user message may follow it).
    pub fn latest_tool_output(&self) -> Option<String> {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "tool")
            .map(|m| content_text(&m["content"]))
    }

    /// `(id, name)` of every tool call the model made earlier in the conversation.
    pub fn calls(&self) -> Vec<(String, String)> {
        self.messages()
            .iter()
            .filter_map(|m| m["tool_calls"].as_array())
            .flatten()
            .map(|c| {
                (
                    c["id"].as_str().unwrap_or_default().to_string(),
                    c["function"]["name"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                )
            })
            .collect()
    }
}

fn message_text(m: &Value) -> String {
    let mut parts = vec![content_text(&m["content"])];
    if let Some(calls) = m["tool_calls"].as_array() {
        for c in calls {
            parts.push(
                c["function"]["arguments"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            );
        }
    }
    parts.retain(|s| !s.is_empty());
    parts.join("\n")
}

/// Text of a `content` value: a string, or its `text` parts joined by newlines.
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
pub type Script = ScriptOf<Completions>;

fn is_route(r: &RecordedRequest, method: &str, path: &str) -> bool {
    let route = r.route();
    r.method == method && (route == path || route.strip_prefix("/v1") == Some(path))
}

/// The OpenAI Chat Completions wire.
pub struct Completions;

impl Wire for Completions {
    type Request = ChatRequest;
    type Turn = Turn;
    type Extra = Models;

    fn request(r: &RecordedRequest) -> Option<ChatRequest> {
        is_route(r, "POST", "/chat/completions").then(|| ChatRequest::from_recorded(r))
    }

    fn respond(script: &Mutex<Script>, request: &RecordedRequest) -> Reply {
        if is_route(request, "GET", "/models") {
            return script.lock().extra.list(|id| {
                json!({"id": id, "object": "model", "created": CREATED,
                       "owned_by": "weft-testkit"})
            });
        }
        let Some(req) = Self::request(request) else {
            return Reply::json(404, &error_body("not_found", "no such route"));
        };
        if request.body.is_null() {
            return Reply::json(
                400,
                &error_body("invalid_request_error", "the body is not JSON"),
            );
        }
        let (turn, served) = choose::<Self>(script, &req);
        turn.render(&req, served)
    }
}

/// A running scripted Chat Completions server.
pub type ChatServer = Served<Completions>;

impl Served<Completions> {
    /// What an OpenAI-compatible `base_url` setting should be: `http://127.0.0.1:PORT/v1`.
    pub fn v1_url(&self) -> String {
        format!("{}/v1", self.base_url())
    }

    /// Every chat completions request so far, in order, with its headers.
    pub fn chat_requests(&self) -> Vec<ChatRequest> {
        self.requests()
    }

    /// Waits until at least `n` chat requests arrived, or `timeout` passes.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.wait_for_answered(n, timeout).await
    }
}

crate::script::model_request_by_helpers!(ChatRequest, tool_result: tool_output);

crate::script::lower_into!(Turn, Script, thinking: reasoning_chunks, tool_call: tool_call, delta_delay: delta_delay);
