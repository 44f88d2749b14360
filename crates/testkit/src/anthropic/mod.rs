//! A scripted Anthropic Messages API: `POST /v1/messages` (streamed and not) and
//! `POST /v1/messages/count_tokens`, as Claude Code calls them
//! (`$ANTHROPIC_BASE_URL/v1/messages?beta=true`).
//!
//! A [`Script`] holds the replies. Each messages request is answered by, in order:
//! 1. the first [`Script::rule`] whose matcher takes the request (rules may repeat:
//!    side requests, keyword replies);
//! 2. the next queued [`Script::turn`], if its own guard (if any) takes the request;
//! 3. the default reply (`Turn::text_reply("ok")` unless [`Script::default_reply`]).
//!
//! Requests may carry `role: "system"` entries inside `messages` (Claude Code sends
//! agent listings and steering that way); they are accepted and visible to matchers.

mod events;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};

pub use events::*;

use crate::server::{RecordedRequest, Recorder, Reply, Responder, ScriptedServer};

/// A predicate over a messages request.
pub type Matcher = Arc<dyn Fn(&MessagesRequest) -> bool + Send + Sync>;

/// Ready-made matchers.
pub mod when {
    use super::{Matcher, MessagesRequest};
    use crate::script::{typed, when as neutral};
    use std::sync::Arc;

    /// The latest user text (the last `user` message's text blocks) contains `needle`.
    pub fn user_text_contains(needle: &str) -> Matcher {
        typed(neutral::user_text_contains(needle))
    }

    /// Any text anywhere in `messages` (user, assistant, system entries, tool results)
    /// contains `needle`.
    pub fn any_text_contains(needle: &str) -> Matcher {
        typed(neutral::any_text_contains(needle))
    }

    /// The model asked for contains `needle` (e.g. `haiku`).
    pub fn model_contains(needle: &str) -> Matcher {
        typed(neutral::model_contains(needle))
    }

    /// The last user message carries a tool_result for `tool_use_id`.
    pub fn tool_result_for(tool_use_id: &str) -> Matcher {
        typed(neutral::tool_result_for(tool_use_id))
    }

    /// The request offers no tools (title generation and other side calls).
    pub fn no_tools() -> Matcher {
        typed(neutral::no_tools())
    }

    /// Any custom predicate.
    pub fn custom(f: impl Fn(&MessagesRequest) -> bool + Send + Sync + 'static) -> Matcher {
        Arc::new(f)
    }
}

/// A `POST /v1/messages` body, with helpers for matching and assertions.
#[derive(Debug, Clone)]
pub struct MessagesRequest {
    /// The body as sent.
    pub body: Value,
}

impl MessagesRequest {
    /// The model asked for.
    pub fn model(&self) -> &str {
        self.body["model"].as_str().unwrap_or_default()
    }

    /// True for `stream: true`.
    pub fn stream(&self) -> bool {
        self.body["stream"].as_bool().unwrap_or(false)
    }

    /// The `messages` array.
    pub fn messages(&self) -> &[Value] {
        self.body["messages"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or(&[])
    }

    /// Names of the tools offered.
    pub fn tool_names(&self) -> Vec<String> {
        self.body["tools"]
            .as_array()
            .map(|t| {
                t.iter()
                    .filter_map(|t| t["name"].as_str().map(String::from))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Text of the last `user` message (its text blocks joined by newlines).
    pub fn last_user_text(&self) -> String {
        self.messages()
            .iter()
            .rev()
            .find(|m| m["role"] == "user")
            .map(|m| content_text(&m["content"]))
            .unwrap_or_default()
    }

    /// All text in `messages`, every role, tool results included.
    pub fn all_text(&self) -> String {
        self.messages()
            .iter()
            .map(|m| content_text(&m["content"]))
            .collect::<Vec<_>>()
            .join("\n")
    }

    /// Content of `role: "system"` entries inside `messages`.
    pub fn system_entries(&self) -> Vec<String> {
        self.messages()
            .iter()
            .filter(|m| m["role"] == "system")
            .map(|m| content_text(&m["content"]))
            .collect()
    }

    /// The text of the tool_result for `tool_use_id` in the last user message.
    pub fn last_tool_result(&self, tool_use_id: &str) -> Option<String> {
        let last = self.messages().iter().rev().find(|m| m["role"] == "user")?;
        last["content"].as_array()?.iter().find_map(|b| {
            (b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)
                .then(|| content_text(&b["content"]))
        })
    }

    /// Whether the tool_result for `tool_use_id` anywhere in `messages` is an error.
    pub fn tool_result_is_error(&self, tool_use_id: &str) -> Option<bool> {
        self.messages().iter().find_map(|m| {
            m["content"].as_array()?.iter().find_map(|b| {
                (b["type"] == "tool_result" && b["tool_use_id"] == tool_use_id)
                    .then(|| b["is_error"].as_bool().unwrap_or(false))
            })
        })
    }
}

/// Text of a `content` value: a string, or the text of its blocks (tool results'
/// content included), joined by newlines.
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .map(|b| match b["type"].as_str() {
                Some("text") => b["text"].as_str().unwrap_or_default().to_string(),
                Some("tool_result") => content_text(&b["content"]),
                _ => String::new(),
            })
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    }
}

/// The model's replies, in order, with rules for requests outside the order.
pub type Script = crate::playbook::Script<MessagesRequest, Turn>;

struct AnthropicResponder {
    script: Mutex<Script>,
}

impl Responder for AnthropicResponder {
    fn respond(&self, request: &RecordedRequest) -> Reply {
        let route = request.route();
        if request.method != "POST" {
            return Reply::json(404, &error_body("not_found_error", "no such route"));
        }
        if route.ends_with("/count_tokens") {
            // A rough count: enough for the CLI's budgeting, stable for tests.
            let tokens = (request.raw.len() / 4).max(1);
            return Reply::json(200, &json!({ "input_tokens": tokens }));
        }
        if route != "/v1/messages" {
            return Reply::json(404, &error_body("not_found_error", "no such route"));
        }
        let req = MessagesRequest {
            body: request.body.clone(),
        };
        let mut script = self.script.lock();
        let turn = script.choose(&req);
        turn.render(req.model(), req.stream(), script.served)
    }
}

/// A running scripted Anthropic server.
pub struct AnthropicServer {
    server: ScriptedServer,
    responder: Arc<AnthropicResponder>,
}

impl AnthropicServer {
    /// Serves `script` on 127.0.0.1, a free port, until dropped.
    pub async fn start(script: impl Into<Script>) -> io::Result<Self> {
        Self::start_with_shutdown(script, std::future::pending()).await
    }

    /// Like [`AnthropicServer::start`], also stopping when `shutdown` resolves.
    pub async fn start_with_shutdown(
        script: impl Into<Script>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> io::Result<Self> {
        Self::start_recording(script, shutdown, Recorder::default()).await
    }

    /// Like [`AnthropicServer::start_with_shutdown`], recording into `recorder` (one
    /// [`Recorder::keeping_last`] a few for a long run: a resumed Claude session sends
    /// its whole conversation in every request).
    pub async fn start_recording(
        script: impl Into<Script>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
        recorder: Recorder,
    ) -> io::Result<Self> {
        let responder = Arc::new(AnthropicResponder {
            script: Mutex::new(script.into()),
        });
        let server = ScriptedServer::start_recording(responder.clone(), shutdown, recorder).await?;
        Ok(Self { server, responder })
    }

    /// What `ANTHROPIC_BASE_URL` should be.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The recorder of every request (count_tokens and 404s included).
    pub fn recorder(&self) -> &Recorder {
        self.server.recorder()
    }

    /// Every `POST /v1/messages` body so far, in order.
    pub fn messages_requests(&self) -> Vec<MessagesRequest> {
        self.recorder()
            .requests()
            .into_iter()
            .filter(|r| r.method == "POST" && r.route() == "/v1/messages")
            .map(|r| MessagesRequest { body: r.body })
            .collect()
    }

    /// Waits until at least `n` messages requests arrived, or `timeout` passes.
    pub async fn wait_for_messages(&self, n: usize, timeout: Duration) -> bool {
        self.recorder()
            .wait_until(timeout, |reqs| {
                reqs.iter()
                    .filter(|r| r.method == "POST" && r.route() == "/v1/messages")
                    .count()
                    >= n
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

impl crate::script::ModelRequest for MessagesRequest {
    fn model(&self) -> &str {
        MessagesRequest::model(self)
    }
    fn last_user_text(&self) -> String {
        MessagesRequest::last_user_text(self)
    }
    fn all_text(&self) -> String {
        MessagesRequest::all_text(self)
    }
    fn tool_names(&self) -> Vec<String> {
        MessagesRequest::tool_names(self)
    }
    fn tool_result(&self, call_id: &str) -> Option<String> {
        self.last_tool_result(call_id)
    }
}

crate::script::lower_into!(Turn, Script, thinking: thinking_chunks, tool_call: tool_use, delta_delay: delta_delay);
