//! Anthropic Messages stream events and the [`Turn`]s built from them.
//!
//! `ev_*` build single SSE events exactly as the API sends them; [`Turn`] strings them
//! into one model reply (blocks of text, thinking and tool_use, a stop reason, usage),
//! with pauses, errors and dropped connections where a test wants them. A turn renders
//! as an SSE stream for `stream: true` requests and as one message JSON otherwise.

use serde_json::{json, Value};

use crate::server::{Reply, Step};
use crate::stream::{owned, turn_builders, Body};
use std::sync::OnceLock;
use std::time::{SystemTime, UNIX_EPOCH};

/// `message_start`.
pub fn ev_message_start(id: &str, model: &str, input_tokens: u64) -> Value {
    json!({"type": "message_start", "message": {
        "id": id, "type": "message", "role": "assistant", "model": model, "content": [],
        "stop_reason": null, "stop_sequence": null,
        "usage": {"input_tokens": input_tokens, "output_tokens": 1,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}})
}

/// `content_block_start` of a text block.
pub fn ev_text_start(index: usize) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "text", "text": ""}})
}

/// `content_block_delta` with a `text_delta`.
pub fn ev_text_delta(index: usize, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "text_delta", "text": text}})
}

/// `content_block_start` of a thinking block.
pub fn ev_thinking_start(index: usize) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "thinking", "thinking": "", "signature": ""}})
}

/// `content_block_delta` with a `thinking_delta`.
pub fn ev_thinking_delta(index: usize, text: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "thinking_delta", "thinking": text}})
}

/// `content_block_delta` with a `signature_delta` (closes a thinking block).
pub fn ev_signature_delta(index: usize, signature: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "signature_delta", "signature": signature}})
}

/// `content_block_start` of a tool_use block.
pub fn ev_tool_use_start(index: usize, id: &str, name: &str) -> Value {
    json!({"type": "content_block_start", "index": index,
           "content_block": {"type": "tool_use", "id": id, "name": name, "input": {}}})
}

/// `content_block_delta` with an `input_json_delta`.
pub fn ev_input_json_delta(index: usize, partial_json: &str) -> Value {
    json!({"type": "content_block_delta", "index": index,
           "delta": {"type": "input_json_delta", "partial_json": partial_json}})
}

/// `content_block_stop`.
pub fn ev_block_stop(index: usize) -> Value {
    json!({"type": "content_block_stop", "index": index})
}

/// `message_delta` with the stop reason and final output tokens.
pub fn ev_message_delta(stop_reason: &str, output_tokens: u64) -> Value {
    json!({"type": "message_delta",
           "delta": {"stop_reason": stop_reason, "stop_sequence": null},
           "usage": {"output_tokens": output_tokens}})
}

/// `message_stop`.
pub fn ev_message_stop() -> Value {
    json!({"type": "message_stop"})
}

/// `ping`.
pub fn ev_ping() -> Value {
    json!({"type": "ping"})
}

/// An in-stream `error` event.
pub fn ev_error(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

/// The error body the API sends with a failing status.
pub fn error_body(kind: &str, message: &str) -> Value {
    json!({"type": "error", "error": {"type": kind, "message": message}})
}

#[derive(Debug, Clone)]
enum Block {
    Text(Vec<String>),
    Thinking(Vec<String>),
    ToolUse {
        id: String,
        name: String,
        input: Value,
    },
}

/// One scripted model reply.
///
/// ```
/// use serde_json::json;
/// use weft_testkit::Turn;
/// let turn = Turn::new()
///     .thinking("let me see")
///     .text("Calling Bash.")
///     .tool_use("toolu_1", "Bash", json!({"command": "echo hi"}));
/// // stop reason `tool_use` is implied by the tool_use block
/// # let _ = turn;
/// ```
#[derive(Debug, Clone)]
pub struct Turn {
    body: Body<Block>,
    id: Option<String>,
    model: Option<String>,
    stop_reason: Option<String>,
    input_tokens: u64,
    output_tokens: u64,
    cache_read: u64,
    cache_creation: u64,
}

turn_builders!(Turn, Block::Text, raw: event, delta_delay: delta_delay);

impl Turn {
    /// An empty reply (add blocks to it).
    pub fn new() -> Self {
        Self {
            body: Body::default(),
            id: None,
            model: None,
            stop_reason: None,
            input_tokens: 12,
            output_tokens: 5,
            cache_read: 0,
            cache_creation: 0,
        }
    }

    /// An HTTP error status with the API's error body (500 → `api_error`).
    pub fn status(code: u16) -> Self {
        let kind = match code {
            429 => "rate_limit_error",
            529 => "overloaded_error",
            400 => "invalid_request_error",
            401 => "authentication_error",
            _ => "api_error",
        };
        Self::status_body(code, error_body(kind, "scripted failure"))
    }

    /// Appends a thinking block streamed as one delta.
    pub fn thinking(self, text: &str) -> Self {
        self.thinking_chunks(&[text])
    }

    /// Appends a thinking block streamed as these deltas.
    pub fn thinking_chunks(mut self, chunks: &[&str]) -> Self {
        self.body.push_item(Block::Thinking(owned(chunks)));
        self
    }

    /// Appends a tool_use block.
    pub fn tool_use(mut self, id: &str, name: &str, input: Value) -> Self {
        self.body.push_item(Block::ToolUse {
            id: id.into(),
            name: name.into(),
            input,
        });
        self
    }

    /// The stop reason (default: `tool_use` when there is a tool_use block, else
    /// `end_turn`).
    pub fn stop_reason(mut self, reason: &str) -> Self {
        self.stop_reason = Some(reason.into());
        self
    }

    /// Usage figures reported.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }

    /// Cache figures reported.
    pub fn cache(mut self, read: u64, creation: u64) -> Self {
        self.cache_read = read;
        self.cache_creation = creation;
        self
    }

    /// The message id (default: `msg_<n>` from the server's counter).
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The model reported (default: the model asked for).
    pub fn model(mut self, model: &str) -> Self {
        self.model = Some(model.into());
        self
    }

    fn effective_stop(&self) -> String {
        if let Some(s) = &self.stop_reason {
            return s.clone();
        }
        let has_tool = self
            .body
            .items()
            .any(|b| matches!(b, Block::ToolUse { .. }));
        if has_tool { "tool_use" } else { "end_turn" }.into()
    }

    /// Renders the reply to a request for `model`; `n` numbers default message ids.
    pub fn render(&self, model: &str, stream: bool, n: usize) -> Reply {
        if let Some(reply) = self.body.early_reply() {
            return reply;
        }
        let id = self.id.clone().unwrap_or_else(|| default_message_id(n));
        let model = self.model.clone().unwrap_or_else(|| model.to_string());
        if stream {
            Reply::sse(self.sse_steps(&id, &model))
        } else {
            Reply::json(200, &self.message_json(&id, &model))
        }
    }

    fn usage_json(&self) -> Value {
        json!({"input_tokens": self.input_tokens, "output_tokens": self.output_tokens,
               "cache_read_input_tokens": self.cache_read,
               "cache_creation_input_tokens": self.cache_creation})
    }

    /// The whole reply as one non-streamed message.
    pub fn message_json(&self, id: &str, model: &str) -> Value {
        let content: Vec<Value> = self
            .body
            .items()
            .map(|b| match b {
                Block::Text(c) => json!({"type": "text", "text": c.concat()}),
                Block::Thinking(c) => {
                    json!({"type": "thinking", "thinking": c.concat(), "signature": "sig"})
                }
                Block::ToolUse { id, name, input } => {
                    json!({"type": "tool_use", "id": id, "name": name, "input": input})
                }
            })
            .collect();
        json!({"id": id, "type": "message", "role": "assistant", "model": model,
               "content": content, "stop_reason": self.effective_stop(),
               "stop_sequence": null, "usage": self.usage_json()})
    }

    fn sse_steps(&self, id: &str, model: &str) -> Vec<Step> {
        let mut start = ev_message_start(id, model, self.input_tokens);
        start["message"]["usage"]["cache_read_input_tokens"] = json!(self.cache_read);
        start["message"]["usage"]["cache_creation_input_tokens"] = json!(self.cache_creation);
        let mut steps = vec![sse(&start)];
        let mut index = 0;
        let finished = self.body.stream(&mut steps, sse, |block, steps| {
            match block {
                Block::Text(chunks) => {
                    steps.push(sse(&ev_text_start(index)));
                    for c in chunks {
                        self.body.delta(steps, sse(&ev_text_delta(index, c)));
                    }
                }
                Block::Thinking(chunks) => {
                    steps.push(sse(&ev_thinking_start(index)));
                    for c in chunks {
                        self.body.delta(steps, sse(&ev_thinking_delta(index, c)));
                    }
                    steps.push(sse(&ev_signature_delta(index, "sig")));
                }
                Block::ToolUse { id, name, input } => {
                    steps.push(sse(&ev_tool_use_start(index, id, name)));
                    let partial = ev_input_json_delta(index, &input.to_string());
                    self.body.delta(steps, sse(&partial));
                }
            }
            steps.push(sse(&ev_block_stop(index)));
            index += 1;
        });
        if !finished {
            return steps;
        }
        let mut delta = ev_message_delta(&self.effective_stop(), self.output_tokens);
        delta["usage"]["input_tokens"] = json!(self.input_tokens);
        delta["usage"]["cache_read_input_tokens"] = json!(self.cache_read);
        delta["usage"]["cache_creation_input_tokens"] = json!(self.cache_creation);
        steps.push(sse(&delta));
        steps.push(sse(&ev_message_stop()));
        steps
    }
}

/// One SSE frame: `event: <type>` and `data: <json>`.
pub use crate::stream::sse_named as sse;

/// A message id unique across servers and runs, as the vendor's are: `msg_` and this
/// process's stamp, then `n`. A library that counts each model call once by its id
/// merged one run's calls into another's when every server began again at `msg_1`.
fn default_message_id(n: usize) -> String {
    static STAMP: OnceLock<String> = OnceLock::new();
    let stamp = STAMP.get_or_init(|| {
        let nanos = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map_or(0, |d| d.as_nanos());
        format!("{:x}{:08x}", std::process::id(), nanos as u32)
    });
    format!("msg_{stamp}_{n}")
}

#[cfg(test)]
mod id_tests {
    #[test]
    fn default_ids_differ_per_call_and_carry_the_process_stamp() {
        let (a, b) = (super::default_message_id(1), super::default_message_id(2));
        assert_ne!(a, b);
        assert!(a.starts_with("msg_") && a.ends_with("_1"), "{a}");
        assert_ne!(a, "msg_1");
    }
}
