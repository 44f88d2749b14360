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

use std::time::Duration;

use parking_lot::Mutex;
use serde_json::{json, Value};

pub use events::*;

use crate::served::{choose, items, model_of, stream_of, ScriptOf, Served, Wire};
use crate::server::{RecordedRequest, Reply};

crate::script::vendor_when! { MessagesRequest;
    /// The latest user text (the last `user` message's text blocks) contains `needle`.
    user_text_contains(needle) => user_text_contains;
    /// Any text anywhere in `messages` (user, assistant, system entries, tool results)
    /// contains `needle`.
    any_text_contains(needle) => any_text_contains;
    /// The model asked for contains `needle` (e.g. `haiku`).
    model_contains(needle) => model_contains;
    /// The last user message carries a tool_result for `tool_use_id`.
    tool_result_for(tool_use_id) => tool_result_for;
    /// The request offers no tools (title generation and other side calls).
    no_tools() => no_tools;
    {}
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
        model_of(&self.body)
    }

    /// True for `stream: true`.
    pub fn stream(&self) -> bool {
        stream_of(&self.body)
    }

    /// The `messages` array.
    pub fn messages(&self) -> &[Value] {
        items(&self.body["messages"])
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
pub type Script = ScriptOf<Messages>;

/// The Anthropic Messages wire.
pub struct Messages;

impl Wire for Messages {
    type Request = MessagesRequest;
    type Turn = Turn;
    type Extra = ();

    fn request(r: &RecordedRequest) -> Option<MessagesRequest> {
        (r.method == "POST" && r.route() == "/v1/messages").then(|| MessagesRequest {
            body: r.body.clone(),
        })
    }

    fn respond(script: &Mutex<Script>, request: &RecordedRequest) -> Reply {
        if request.method == "POST" && request.route().ends_with("/count_tokens") {
            // A rough count: enough for the CLI's budgeting, stable for tests.
            let tokens = (request.raw.len() / 4).max(1);
            return Reply::json(200, &json!({ "input_tokens": tokens }));
        }
        let Some(req) = Self::request(request) else {
            return Reply::json(404, &error_body("not_found_error", "no such route"));
        };
        let (turn, served) = choose::<Self>(script, &req);
        turn.render(req.model(), req.stream(), served)
    }
}

/// A running scripted Anthropic server: its base URL is what `ANTHROPIC_BASE_URL`
/// should be.
pub type AnthropicServer = Served<Messages>;

impl Served<Messages> {
    /// Every `POST /v1/messages` body so far, in order.
    pub fn messages_requests(&self) -> Vec<MessagesRequest> {
        self.requests()
    }

    /// Waits until at least `n` messages requests arrived, or `timeout` passes.
    pub async fn wait_for_messages(&self, n: usize, timeout: Duration) -> bool {
        self.wait_for_answered(n, timeout).await
    }
}

crate::script::model_request_by_helpers!(MessagesRequest, tool_result: last_tool_result);

crate::script::lower_into!(Turn, Script, thinking: thinking_chunks, tool_call: tool_use, delta_delay: delta_delay);
