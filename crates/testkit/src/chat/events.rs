//! Chat Completions stream chunks and the [`Turn`]s built from them.
//!
//! `chunk_*` build single `chat.completion.chunk` objects as the API streams them; a
//! [`Turn`] strings them into one model reply: the assistant role, reasoning
//! (`reasoning_content`, as DeepSeek/Qwen/Kimi endpoints stream it), text, tool calls
//! (the first chunk of each carries `index`, `id`, `type` and the function's name with
//! empty arguments; the arguments follow as deltas over several chunks), a chunk with
//! `finish_reason`, a usage chunk (`choices: []`) when the request asked for one, then
//! `data: [DONE]`. A turn can also be an HTTP error, a pause, a stall or a cut
//! connection.

use bytes::Bytes;
use serde_json::{json, Value};

use super::ChatRequest;
use crate::server::{Reply, Step};
use crate::stream::{owned, turn_builders, Body};

/// The `created` time every reply carries (fixed, so transcripts compare equal).
pub const CREATED: u64 = 1_764_547_200;

/// A `chat.completion.chunk` with one choice carrying `delta` (and `finish_reason`).
pub fn chunk(id: &str, model: &str, delta: Value, finish_reason: Option<&str>) -> Value {
    json!({"id": id, "object": "chat.completion.chunk", "created": CREATED, "model": model,
           "system_fingerprint": null,
           "choices": [{"index": 0, "delta": delta, "logprobs": null,
                        "finish_reason": finish_reason}]})
}

/// The usage chunk that ends a stream under `stream_options.include_usage`.
pub fn chunk_usage(id: &str, model: &str, usage: &Value) -> Value {
    json!({"id": id, "object": "chat.completion.chunk", "created": CREATED, "model": model,
           "system_fingerprint": null, "choices": [], "usage": usage})
}

/// The first delta of a tool call: its index, id and name, no arguments yet.
pub fn delta_call_start(index: usize, id: &str, name: &str) -> Value {
    json!({"tool_calls": [{"index": index, "id": id, "type": "function",
                           "function": {"name": name, "arguments": ""}}]})
}

/// A later delta of tool call `index`: a piece of its arguments.
pub fn delta_call_arguments(index: usize, piece: &str) -> Value {
    json!({"tool_calls": [{"index": index, "function": {"arguments": piece}}]})
}

/// The API's error body.
pub fn error_body(kind: &str, message: &str) -> Value {
    json!({"error": {"message": message, "type": kind, "param": null, "code": kind}})
}

/// One SSE frame: `data: <json>` (Chat Completions names no event types).
pub fn sse(data: &Value) -> Step {
    Step::Bytes(Bytes::from(format!("data: {data}\n\n")))
}

/// The stream's last frame.
pub fn sse_done() -> Step {
    Step::Bytes(Bytes::from_static(b"data: [DONE]\n\n"))
}

/// Splits `s` into `n` pieces of about equal length at char boundaries (fewer when it
/// is short); never an empty piece.
pub fn split_pieces(s: &str, n: usize) -> Vec<String> {
    let chars: Vec<char> = s.chars().collect();
    if chars.is_empty() {
        return Vec::new();
    }
    let size = chars.len().div_ceil(n.max(1));
    chars.chunks(size).map(|c| c.iter().collect()).collect()
}

/// Names agents give their shell tool, most specific first.
const SHELL_TOOLS: [&str; 10] = [
    "run_shell_command",
    "execute_command",
    "exec_command",
    "shell_command",
    "bash",
    "Bash",
    "shell",
    "Shell",
    "terminal",
    "run_command",
];

#[derive(Debug, Clone)]
enum Item {
    Text(Vec<String>),
    Reasoning(Vec<String>),
    Call {
        id: String,
        name: String,
        pieces: Vec<String>,
    },
    Shell {
        id: String,
        command: String,
    },
    EchoToolOutput(String),
}

/// One scripted model reply (one `POST /v1/chat/completions`).
///
/// ```
/// use serde_json::json;
/// use weft_testkit::chat::Turn;
/// let turn = Turn::new()
///     .reasoning("let me see")
///     .text_chunks(&["Running ", "it."])
///     .shell("call_1", "echo hi")
///     .usage(120, 9);
/// # let _ = turn;
/// ```
#[derive(Debug, Clone)]
pub struct Turn {
    body: Body<Item>,
    id: Option<String>,
    finish_reason: Option<String>,
    prompt_tokens: u64,
    cached_tokens: u64,
    completion_tokens: u64,
    reasoning_tokens: u64,
}

turn_builders!(Turn, Item::Text, raw: chunk, delta_delay: delta_delay);

impl Turn {
    /// An empty reply (add items to it).
    pub fn new() -> Self {
        Self {
            body: Body::default(),
            id: None,
            finish_reason: None,
            prompt_tokens: 20,
            cached_tokens: 0,
            completion_tokens: 7,
            reasoning_tokens: 0,
        }
    }

    /// An HTTP error status with the API's error body.
    pub fn status(code: u16) -> Self {
        let kind = match code {
            429 => "rate_limit_exceeded",
            400 => "invalid_request_error",
            401 => "invalid_api_key",
            404 => "model_not_found",
            _ => "server_error",
        };
        Self::status_body(code, error_body(kind, "scripted failure"))
    }

    /// Appends reasoning (`delta.reasoning_content`) streamed as one delta.
    pub fn reasoning(self, text: &str) -> Self {
        self.reasoning_chunks(&[text])
    }

    /// Appends reasoning streamed as these deltas.
    pub fn reasoning_chunks(mut self, chunks: &[&str]) -> Self {
        self.body.push_item(Item::Reasoning(owned(chunks)));
        self
    }

    /// Appends a call of function `name`; its serialized arguments stream as three
    /// deltas (fewer when short).
    pub fn tool_call(self, id: &str, name: &str, arguments: Value) -> Self {
        let pieces = split_pieces(&arguments.to_string(), 3);
        self.push_call(id, name, pieces)
    }

    /// Appends a call whose arguments stream as exactly these pieces (their
    /// concatenation may be malformed JSON on purpose).
    pub fn tool_call_chunks(self, id: &str, name: &str, pieces: &[&str]) -> Self {
        self.push_call(id, name, owned(pieces))
    }

    fn push_call(mut self, id: &str, name: &str, pieces: Vec<String>) -> Self {
        self.body.push_item(Item::Call {
            id: id.into(),
            name: name.into(),
            pieces,
        });
        self
    }

    /// Appends a call of the shell tool the request offers (by name: `run_shell_command`,
    /// `bash`, `shell`, …), with `command` under the parameter its schema names
    /// (`command` or `cmd`; an argv when the schema says array).
    pub fn shell(mut self, id: &str, command: &str) -> Self {
        self.body.push_item(Item::Shell {
            id: id.into(),
            command: command.into(),
        });
        self
    }

    /// Appends text quoting the request's latest tool result after `prefix` (the model
    /// "read" the result).
    pub fn echo_tool_output(mut self, prefix: &str) -> Self {
        self.body.push_item(Item::EchoToolOutput(prefix.into()));
        self
    }

    /// The finish reason (default: `tool_calls` when the turn calls a tool, else `stop`).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        self.finish_reason = Some(reason.into());
        self
    }

    /// Usage figures: prompt and completion tokens.
    pub fn usage(mut self, prompt_tokens: u64, completion_tokens: u64) -> Self {
        self.prompt_tokens = prompt_tokens;
        self.completion_tokens = completion_tokens;
        self
    }

    /// Cached prompt tokens and reasoning tokens.
    pub fn usage_details(mut self, cached_tokens: u64, reasoning_tokens: u64) -> Self {
        self.cached_tokens = cached_tokens;
        self.reasoning_tokens = reasoning_tokens;
        self
    }

    /// The completion id (default: `chatcmpl-<n>` from the server's counter).
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The `usage` object.
    pub fn usage_json(&self) -> Value {
        json!({"prompt_tokens": self.prompt_tokens,
               "completion_tokens": self.completion_tokens,
               "total_tokens": self.prompt_tokens + self.completion_tokens,
               "prompt_tokens_details": {"cached_tokens": self.cached_tokens},
               "completion_tokens_details": {"reasoning_tokens": self.reasoning_tokens}})
    }

    /// Renders the reply to `req`; `n` numbers the default id.
    pub fn render(&self, req: &ChatRequest, n: usize) -> Reply {
        if let Some(reply) = self.body.early_reply() {
            return reply;
        }
        let id = self.id.clone().unwrap_or_else(|| format!("chatcmpl-{n}"));
        if req.stream() {
            Reply::sse(self.sse_steps(req, &id))
        } else {
            Reply::json(200, &self.completion_json(req, &id))
        }
    }

    fn items(&self, req: &ChatRequest) -> Vec<Item> {
        self.body.items().map(|i| resolve(i, req)).collect()
    }

    fn finish(&self, items: &[Item]) -> String {
        self.finish_reason.clone().unwrap_or_else(|| {
            if items.iter().any(|i| matches!(i, Item::Call { .. })) {
                "tool_calls".into()
            } else {
                "stop".into()
            }
        })
    }

    /// The whole reply as one non-streamed `chat.completion` object.
    pub fn completion_json(&self, req: &ChatRequest, id: &str) -> Value {
        let items = self.items(req);
        let mut text = String::new();
        let mut reasoning = String::new();
        let mut calls = Vec::new();
        for item in &items {
            match item {
                Item::Text(c) => text.push_str(&c.concat()),
                Item::Reasoning(c) => reasoning.push_str(&c.concat()),
                Item::Call { id, name, pieces } => calls.push(json!({"id": id,
                    "type": "function", "function": {"name": name, "arguments": pieces.concat()}})),
                Item::Shell { .. } | Item::EchoToolOutput(_) => {}
            }
        }
        let mut message = json!({"role": "assistant",
            "content": if text.is_empty() && !calls.is_empty() { Value::Null } else { json!(text) }});
        if !reasoning.is_empty() {
            message["reasoning_content"] = json!(reasoning);
        }
        if !calls.is_empty() {
            message["tool_calls"] = json!(calls);
        }
        json!({"id": id, "object": "chat.completion", "created": CREATED, "model": req.model(),
               "system_fingerprint": null,
               "choices": [{"index": 0, "message": message, "logprobs": null,
                            "finish_reason": self.finish(&items)}],
               "usage": self.usage_json()})
    }

    fn sse_steps(&self, req: &ChatRequest, id: &str) -> Vec<Step> {
        let model = req.model();
        let mut steps = vec![sse(&chunk(
            id,
            model,
            json!({"role": "assistant", "content": ""}),
            None,
        ))];
        let mut calls = 0;
        let mut items = Vec::new();
        let finished = self.body.stream(&mut steps, sse, |item, steps| {
            let item = resolve(item, req);
            let mut delta = |d: Value| self.body.delta(steps, sse(&chunk(id, model, d, None)));
            match &item {
                Item::Text(c) => {
                    for piece in c {
                        delta(json!({"content": piece}));
                    }
                }
                Item::Reasoning(c) => {
                    for piece in c {
                        delta(json!({"reasoning_content": piece}));
                    }
                }
                Item::Call {
                    id: call_id,
                    name,
                    pieces,
                } => {
                    delta(delta_call_start(calls, call_id, name));
                    for piece in pieces {
                        delta(delta_call_arguments(calls, piece));
                    }
                    calls += 1;
                }
                Item::Shell { .. } | Item::EchoToolOutput(_) => {}
            }
            items.push(item);
        });
        if !finished {
            return steps;
        }
        steps.push(sse(&chunk(
            id,
            model,
            json!({}),
            Some(&self.finish(&items)),
        )));
        if req.include_usage() {
            steps.push(sse(&chunk_usage(id, model, &self.usage_json())));
        }
        steps.push(sse_done());
        steps
    }
}

/// The offered shell tool and how its schema takes the command.
fn shell_call(req: &ChatRequest, id: &str, command: &str) -> Item {
    let names = req.tool_names();
    let name = SHELL_TOOLS
        .iter()
        .find(|n| names.iter().any(|t| t == *n))
        .map_or("shell", |n| *n);
    let props = req
        .tool_parameters(name)
        .and_then(|p| p["properties"].as_object());
    let key = props
        .and_then(|p| ["command", "cmd"].into_iter().find(|k| p.contains_key(*k)))
        .unwrap_or("command");
    let argv = props.is_some_and(|p| p[key]["type"] == "array");
    let value = if argv {
        json!(["bash", "-lc", command])
    } else {
        json!(command)
    };
    let mut args = serde_json::Map::new();
    args.insert(key.into(), value);
    let arguments = Value::Object(args).to_string();
    Item::Call {
        id: id.into(),
        name: name.into(),
        pieces: split_pieces(&arguments, 3),
    }
}

fn resolve(item: &Item, req: &ChatRequest) -> Item {
    match item {
        Item::Shell { id, command } => shell_call(req, id, command),
        Item::EchoToolOutput(prefix) => {
            let output = req.latest_tool_output().unwrap_or_default();
            Item::Text(vec![format!("{prefix} {output}")])
        }
        other => other.clone(),
    }
}
