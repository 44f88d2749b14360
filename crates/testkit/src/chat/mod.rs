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

use std::io;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};

pub use events::*;

use crate::playbook::Models;
use crate::server::{RecordedRequest, Recorder, Reply, Responder, ScriptedServer};

/// A predicate over a chat request.
pub type Matcher = Arc<dyn Fn(&ChatRequest) -> bool + Send + Sync>;

/// Ready-made matchers.
pub mod when {
    use super::{ChatRequest, Matcher};
    use crate::script::{typed, when as neutral};
    use std::sync::Arc;

    /// The latest user message's text contains `needle`.
    pub fn user_text_contains(needle: &str) -> Matcher {
        typed(neutral::user_text_contains(needle))
    }

    /// Any text anywhere in `messages` (every role, tool results, call arguments)
    /// contains `needle`.
    pub fn any_text_contains(needle: &str) -> Matcher {
        typed(neutral::any_text_contains(needle))
    }

    /// The messages carry the result of call `call_id`.
    pub fn tool_output_for(call_id: &str) -> Matcher {
        typed(neutral::tool_result_for(call_id))
    }

    /// The last message is a tool result (the model is asked to go on after a call).
    pub fn after_tool_output() -> Matcher {
        Arc::new(|r: &ChatRequest| r.last_tool_output().is_some())
    }

    /// The model asked for contains `needle`.
    pub fn model_contains(needle: &str) -> Matcher {
        typed(neutral::model_contains(needle))
    }

    /// The request offers no tools (titles, summaries and other side calls).
    pub fn no_tools() -> Matcher {
        typed(neutral::no_tools())
    }

    /// Any custom predicate.
    pub fn custom(f: impl Fn(&ChatRequest) -> bool + Send + Sync + 'static) -> Matcher {
        Arc::new(f)
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
        let name = name.to_ascii_lowercase();
        self.headers
            .iter()
            .find(|(k, _)| *k == name)
            .map(|(_, v)| v.as_str())
    }

    /// The token of `Authorization: Bearer <token>`.
    pub fn bearer(&self) -> Option<&str> {
        self.header("authorization")?.strip_prefix("Bearer ")
    }

    /// The model asked for.
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or_default()
    }

    /// True for `stream: true`.
    pub fn stream(&self) -> bool {
        self.body["stream"].as_bool().unwrap_or(false)
    }

    /// True when a streamed reply should end with a usage chunk.
    pub fn include_usage(&self) -> bool {
        self.body["stream_options"]["include_usage"]
            .as_bool()
            .unwrap_or(false)
    }

    /// The `messages` array.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// The `tools` offered, as sent (`{type: "function", function: {name, parameters}}`).
    pub fn tools(&self) -> &[Value] {
        self.body["tools"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
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
pub type Script = crate::playbook::Script<ChatRequest, Turn, Models>;

struct ChatResponder {
    script: Mutex<Script>,
}

fn is_route(r: &RecordedRequest, method: &str, path: &str) -> bool {
    let route = r.route();
    r.method == method && (route == path || route.strip_prefix("/v1") == Some(path))
}

impl Responder for ChatResponder {
    fn respond(&self, request: &RecordedRequest) -> Reply {
        if is_route(request, "GET", "/models") {
            let script = self.script.lock();
            let data: Vec<Value> = script
                .extra
                .0
                .iter()
                .map(|id| {
                    json!({"id": id, "object": "model", "created": CREATED,
                           "owned_by": "weft-testkit"})
                })
                .collect();
            return Reply::json(200, &json!({"object": "list", "data": data}));
        }
        if !is_chat(request) {
            return Reply::json(404, &error_body("not_found", "no such route"));
        }
        if request.body.is_null() {
            return Reply::json(
                400,
                &error_body("invalid_request_error", "the body is not JSON"),
            );
        }
        let req = ChatRequest::from_recorded(request);
        let mut script = self.script.lock();
        let turn = script.choose(&req);
        turn.render(&req, script.served)
    }
}

/// A running scripted Chat Completions server.
pub struct ChatServer {
    server: ScriptedServer,
    responder: Arc<ChatResponder>,
}

impl ChatServer {
    /// Serves `script` on 127.0.0.1, a free port, until dropped.
    pub async fn start(script: impl Into<Script>) -> io::Result<Self> {
        Self::start_with_shutdown(script, std::future::pending()).await
    }

    /// Like [`ChatServer::start`], also stopping when `shutdown` resolves.
    pub async fn start_with_shutdown(
        script: impl Into<Script>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> io::Result<Self> {
        let responder = Arc::new(ChatResponder {
            script: Mutex::new(script.into()),
        });
        let server = ScriptedServer::start_with_shutdown(responder.clone(), shutdown).await?;
        Ok(Self { server, responder })
    }

    /// `http://127.0.0.1:PORT`.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// What an OpenAI-compatible `base_url` setting should be: `http://127.0.0.1:PORT/v1`.
    pub fn v1_url(&self) -> String {
        format!("{}/v1", self.server.base_url())
    }

    /// The recorder of every request (404s and model listings included).
    pub fn recorder(&self) -> &Recorder {
        self.server.recorder()
    }

    /// Every chat completions request so far, in order, with its headers.
    pub fn chat_requests(&self) -> Vec<ChatRequest> {
        self.recorder()
            .requests()
            .iter()
            .filter(|r| is_chat(r))
            .map(ChatRequest::from_recorded)
            .collect()
    }

    /// Waits until at least `n` chat requests arrived, or `timeout` passes.
    pub async fn wait_for_requests(&self, n: usize, timeout: Duration) -> bool {
        self.recorder()
            .wait_until(timeout, |reqs| {
                reqs.iter().filter(|r| is_chat(r)).count() >= n
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

fn is_chat(r: &RecordedRequest) -> bool {
    is_route(r, "POST", "/chat/completions")
}

impl crate::script::ModelRequest for ChatRequest {
    fn model(&self) -> &str {
        ChatRequest::model(self)
    }
    fn last_user_text(&self) -> String {
        ChatRequest::last_user_text(self)
    }
    fn all_text(&self) -> String {
        ChatRequest::all_text(self)
    }
    fn tool_names(&self) -> Vec<String> {
        ChatRequest::tool_names(self)
    }
    fn tool_result(&self, call_id: &str) -> Option<String> {
        self.tool_output(call_id)
    }
}

crate::script::lower_into!(Turn, Script, thinking: reasoning_chunks, tool_call: tool_call, delta_delay: delta_delay);
