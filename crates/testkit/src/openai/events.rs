//! OpenAI Responses stream events and the [`Turn`]s built from them.
//!
//! `ev_*` build single SSE events as the Responses API sends them (the subset codex
//! 0.171.0 was seen to accept); [`Turn`] strings them into one model reply: output
//! items of text, reasoning, function calls, custom (freeform) tool calls and web
//! searches, then `response.completed` with usage. A turn can also be an HTTP error,
//! an in-stream `response.failed`, a pause, a stall or a cut connection.
//!
//! Tool names differ between codex builds and model metadata (`exec_command` with
//! `{cmd}`, `shell_command` with `{command}`, `shell` with an argv; `apply_patch` as a
//! freeform or a function tool, or not offered at all). [`Turn::shell`] and
//! [`Turn::patch`] pick the form from the tools the request offers, at render time.

use serde_json::{json, Value};

use super::ResponsesRequest;
use crate::server::{Reply, Step};
use crate::stream::{owned, turn_builders, Body, Start};

/// `response.created`.
pub fn ev_created(id: &str, model: &str) -> Value {
    json!({"type": "response.created", "response": {
        "id": id, "object": "response", "model": model, "status": "in_progress", "output": []}})
}

/// `response.output_item.added`.
pub fn ev_item_added(index: usize, item: &Value) -> Value {
    json!({"type": "response.output_item.added", "output_index": index, "item": item})
}

/// `response.output_item.done`.
pub fn ev_item_done(index: usize, item: &Value) -> Value {
    json!({"type": "response.output_item.done", "output_index": index, "item": item})
}

/// `response.output_text.delta`.
pub fn ev_text_delta(index: usize, item_id: &str, delta: &str) -> Value {
    json!({"type": "response.output_text.delta", "output_index": index,
           "content_index": 0, "item_id": item_id, "delta": delta})
}

/// `response.output_text.done`.
pub fn ev_text_done(index: usize, item_id: &str, text: &str) -> Value {
    json!({"type": "response.output_text.done", "output_index": index,
           "content_index": 0, "item_id": item_id, "text": text})
}

/// `response.reasoning_summary_part.added`.
pub fn ev_summary_part_added(index: usize, item_id: &str, summary_index: usize) -> Value {
    json!({"type": "response.reasoning_summary_part.added", "output_index": index,
           "item_id": item_id, "summary_index": summary_index,
           "part": {"type": "summary_text", "text": ""}})
}

/// `response.reasoning_summary_text.delta`.
pub fn ev_summary_delta(index: usize, item_id: &str, summary_index: usize, delta: &str) -> Value {
    json!({"type": "response.reasoning_summary_text.delta", "output_index": index,
           "item_id": item_id, "summary_index": summary_index, "delta": delta})
}

/// `response.function_call_arguments.delta`.
pub fn ev_arguments_delta(index: usize, item_id: &str, delta: &str) -> Value {
    json!({"type": "response.function_call_arguments.delta", "output_index": index,
           "item_id": item_id, "delta": delta})
}

/// `response.function_call_arguments.done`.
pub fn ev_arguments_done(index: usize, item_id: &str, arguments: &str) -> Value {
    json!({"type": "response.function_call_arguments.done", "output_index": index,
           "item_id": item_id, "arguments": arguments})
}

/// `response.completed` with usage.
pub fn ev_completed(id: &str, usage: &Value) -> Value {
    json!({"type": "response.completed", "response": {
        "id": id, "object": "response", "status": "completed", "output": [], "usage": usage}})
}

/// `response.failed` with an error.
pub fn ev_failed(id: &str, code: &str, message: &str) -> Value {
    json!({"type": "response.failed", "response": {
        "id": id, "object": "response", "status": "failed",
        "error": {"code": code, "message": message}}})
}

/// The error body the API sends with a failing status.
pub fn error_body(kind: &str, message: &str) -> Value {
    json!({"error": {"type": kind, "code": kind, "message": message, "param": null}})
}

/// One SSE frame: `event: <type>` and `data: <json>`.
pub use crate::stream::sse_named as sse;

#[derive(Debug, Clone)]
enum Item {
    Text(Vec<String>),
    Reasoning(Vec<String>),
    Function {
        call_id: String,
        name: String,
        arguments: String,
        /// The namespace tool it belongs to (Codex offers an MCP server's tools as
        /// one `namespace` tool, `mcp__<server>`).
        namespace: Option<String>,
    },
    Custom {
        call_id: String,
        name: String,
        input: String,
    },
    Shell {
        call_id: String,
        command: String,
    },
    Patch {
        call_id: String,
        patch: String,
    },
    WebSearch {
        query: String,
    },
    EchoToolOutput(String),
}

/// One scripted model reply (one `POST /v1/responses`).
///
/// ```
/// use weft_testkit::openai::Turn;
/// let turn = Turn::new()
///     .reasoning("let me see")
///     .text("Running it.")
///     .shell("call_1", "echo hi");
/// # let _ = turn;
/// ```
#[derive(Debug, Clone)]
pub struct Turn {
    body: Body<Item>,
    /// A stream that ends in `response.failed` with this code and message.
    failed: Option<(String, String)>,
    id: Option<String>,
    input_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
    reasoning_tokens: u64,
    headers: Vec<(String, String)>,
}

turn_builders!(Turn, Item::Text, raw: event, delta_delay: delta_delay);

impl Turn {
    /// An empty reply (add items to it).
    pub fn new() -> Self {
        Self {
            body: Body::default(),
            failed: None,
            id: None,
            input_tokens: 20,
            cached_tokens: 0,
            output_tokens: 7,
            reasoning_tokens: 0,
            headers: Vec::new(),
        }
    }

    /// Adds a response header (codex reads its rate limits from
    /// `x-codex-primary-used-percent`, `x-codex-primary-window-minutes`,
    /// `x-codex-primary-reset-at` and the `secondary` ones).
    pub fn header(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.to_string(), value.to_string()));
        self
    }

    /// An HTTP error status with the API's error body.
    pub fn status(code: u16) -> Self {
        let kind = match code {
            429 => "rate_limit_exceeded",
            400 => "invalid_request_error",
            401 => "invalid_api_key",
            _ => "server_error",
        };
        Self::status_body(code, error_body(kind, "scripted failure"))
    }

    /// A stream that ends in `response.failed` (after any items added before).
    pub fn failed(mut self, code: &str, message: &str) -> Self {
        self.body.start = Start::Reply;
        self.failed = Some((code.into(), message.into()));
        self
    }

    /// Appends a reasoning item whose summary streams as one delta.
    pub fn reasoning(self, text: &str) -> Self {
        self.reasoning_chunks(&[text])
    }

    /// Appends a reasoning item whose summary streams as these deltas.
    pub fn reasoning_chunks(mut self, chunks: &[&str]) -> Self {
        self.body.push_item(Item::Reasoning(owned(chunks)));
        self
    }

    /// Appends a function call with these arguments (serialized as the API does).
    pub fn function_call(mut self, call_id: &str, name: &str, arguments: Value) -> Self {
        self.body.push_item(Item::Function {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
            namespace: None,
        });
        self
    }

    /// Appends a call of tool `name` inside namespace tool `namespace` (how Codex
    /// offers an MCP server's tools: namespace `mcp__<server>`).
    pub fn namespaced_call(
        mut self,
        call_id: &str,
        namespace: &str,
        name: &str,
        arguments: Value,
    ) -> Self {
        self.body.push_item(Item::Function {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
            namespace: Some(namespace.into()),
        });
        self
    }

    /// Appends a function call whose arguments are this raw string (malformed JSON on
    /// purpose, say).
    pub fn function_call_raw(mut self, call_id: &str, name: &str, arguments: &str) -> Self {
        self.body.push_item(Item::Function {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            namespace: None,
        });
        self
    }

    /// Appends a freeform (custom) tool call.
    pub fn custom_tool_call(mut self, call_id: &str, name: &str, input: &str) -> Self {
        self.body.push_item(Item::Custom {
            call_id: call_id.into(),
            name: name.into(),
            input: input.into(),
        });
        self
    }

    /// Appends a shell command through whichever shell tool the request offers
    /// (`exec_command`, `shell_command` or `shell`).
    pub fn shell(mut self, call_id: &str, command: &str) -> Self {
        self.body.push_item(Item::Shell {
            call_id: call_id.into(),
            command: command.into(),
        });
        self
    }

    /// Appends an `apply_patch` call with this patch (`*** Begin Patch` …), as the
    /// offered tool takes it: freeform, function `{input}`, or through the shell.
    pub fn patch(mut self, call_id: &str, patch: &str) -> Self {
        self.body.push_item(Item::Patch {
            call_id: call_id.into(),
            patch: patch.into(),
        });
        self
    }

    /// Appends a message quoting the request's latest tool output after `prefix` (the
    /// model "read" the result: a question's answer, a command's output).
    pub fn echo_tool_output(mut self, prefix: &str) -> Self {
        self.body.push_item(Item::EchoToolOutput(prefix.into()));
        self
    }

    /// Appends a hosted web search (`web_search_call`).
    pub fn web_search(mut self, query: &str) -> Self {
        self.body.push_item(Item::WebSearch {
            query: query.into(),
        });
        self
    }

    /// Usage figures reported in `response.completed`.
    pub fn usage(mut self, input_tokens: u64, output_tokens: u64) -> Self {
        self.input_tokens = input_tokens;
        self.output_tokens = output_tokens;
        self
    }

    /// Cached input and reasoning output figures.
    pub fn usage_details(mut self, cached_tokens: u64, reasoning_tokens: u64) -> Self {
        self.cached_tokens = cached_tokens;
        self.reasoning_tokens = reasoning_tokens;
        self
    }

    /// The response id (default: `resp_<n>` from the server's counter).
    pub fn id(mut self, id: &str) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The usage object of `response.completed`.
    pub fn usage_json(&self) -> Value {
        json!({"input_tokens": self.input_tokens,
               "input_tokens_details": {"cached_tokens": self.cached_tokens},
               "output_tokens": self.output_tokens,
               "output_tokens_details": {"reasoning_tokens": self.reasoning_tokens},
               "total_tokens": self.input_tokens + self.output_tokens})
    }

    /// Renders the reply to `req`; `n` numbers default ids.
    pub fn render(&self, req: &ResponsesRequest, n: usize) -> Reply {
        let mut reply = self.body.early_reply().unwrap_or_else(|| {
            let id = self.id.clone().unwrap_or_else(|| format!("resp_{n}"));
            if req.stream() {
                Reply::sse(self.sse_steps(req, &id, n))
            } else {
                Reply::json(200, &self.response_json(req, &id, n))
            }
        });
        reply.headers.extend(self.headers.iter().cloned());
        reply
    }

    /// The whole reply as one non-streamed response object.
    pub fn response_json(&self, req: &ResponsesRequest, id: &str, n: usize) -> Value {
        let output: Vec<Value> = self
            .body
            .items()
            .enumerate()
            .map(|(i, item)| done_item(&resolve(item, req), n, i))
            .collect();
        json!({"id": id, "object": "response", "model": req.model(), "status": "completed",
               "output": output, "usage": self.usage_json()})
    }

    fn sse_steps(&self, req: &ResponsesRequest, id: &str, n: usize) -> Vec<Step> {
        let mut steps = vec![sse(&ev_created(id, req.model()))];
        let mut index = 0;
        let finished = self.body.stream(&mut steps, sse, |item, steps| {
            self.item_steps(&resolve(item, req), n, index, steps);
            index += 1;
        });
        if !finished {
            return steps;
        }
        let last = match &self.failed {
            Some((code, message)) => ev_failed(id, code, message),
            None => ev_completed(id, &self.usage_json()),
        };
        steps.push(sse(&last));
        steps
    }

    fn item_steps(&self, item: &Item, n: usize, index: usize, steps: &mut Vec<Step>) {
        let done = done_item(item, n, index);
        let item_id = done["id"].as_str().unwrap_or_default().to_string();
        match item {
            Item::Text(chunks) => {
                let mut added = done.clone();
                added["content"] = json!([]);
                added["status"] = json!("in_progress");
                steps.push(sse(&ev_item_added(index, &added)));
                for c in chunks {
                    self.body
                        .delta(steps, sse(&ev_text_delta(index, &item_id, c)));
                }
                steps.push(sse(&ev_text_done(index, &item_id, &chunks.concat())));
            }
            Item::Reasoning(chunks) => {
                let mut added = done.clone();
                added["summary"] = json!([]);
                steps.push(sse(&ev_item_added(index, &added)));
                steps.push(sse(&ev_summary_part_added(index, &item_id, 0)));
                for c in chunks {
                    self.body
                        .delta(steps, sse(&ev_summary_delta(index, &item_id, 0, c)));
                }
            }
            Item::Function { arguments, .. } => {
                let mut added = done.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                steps.push(sse(&ev_item_added(index, &added)));
                self.body
                    .delta(steps, sse(&ev_arguments_delta(index, &item_id, arguments)));
                steps.push(sse(&ev_arguments_done(index, &item_id, arguments)));
            }
            Item::Custom { .. } | Item::WebSearch { .. } => {
                steps.push(sse(&ev_item_added(index, &done)));
            }
            Item::Shell { .. } | Item::Patch { .. } | Item::EchoToolOutput(_) => {}
        }
        steps.push(sse(&ev_item_done(index, &done)));
    }
}

/// Picks the concrete tool form for shell and patch items from the offered tools.
fn resolve(item: &Item, req: &ResponsesRequest) -> Item {
    match item {
        Item::Shell { call_id, command } => {
            let tools = req.tool_names();
            let has = |n: &str| tools.iter().any(|t| t == n);
            let (name, arguments) =
                if has("exec_command") || !(has("shell_command") || has("shell")) {
                    ("exec_command", json!({"cmd": command}))
                } else if has("shell_command") {
                    ("shell_command", json!({"command": command}))
                } else {
                    ("shell", json!({"command": ["bash", "-lc", command]}))
                };
            Item::Function {
                call_id: call_id.clone(),
                name: name.into(),
                arguments: arguments.to_string(),
                namespace: None,
            }
        }
        Item::Patch { call_id, patch } => match req.tool_type("apply_patch").as_deref() {
            Some("custom") => Item::Custom {
                call_id: call_id.clone(),
                name: "apply_patch".into(),
                input: patch.clone(),
            },
            Some(_) => Item::Function {
                call_id: call_id.clone(),
                name: "apply_patch".into(),
                arguments: json!({"input": patch}).to_string(),
                namespace: None,
            },
            None => resolve(
                &Item::Shell {
                    call_id: call_id.clone(),
                    command: format!("apply_patch <<'EOF'\n{patch}EOF"),
                },
                req,
            ),
        },
        Item::EchoToolOutput(prefix) => {
            let output = req.latest_tool_output().unwrap_or_default();
            Item::Text(vec![format!("{prefix} {output}")])
        }
        other => other.clone(),
    }
}

/// An output item in its finished form.
fn done_item(item: &Item, n: usize, index: usize) -> Value {
    match item {
        Item::Text(chunks) => json!({"type": "message", "id": format!("msg_{n}_{index}"),
            "role": "assistant", "status": "completed",
            "content": [{"type": "output_text", "text": chunks.concat(), "annotations": []}]}),
        Item::Reasoning(chunks) => json!({"type": "reasoning", "id": format!("rs_{n}_{index}"),
            "summary": [{"type": "summary_text", "text": chunks.concat()}]}),
        Item::Function {
            call_id,
            name,
            arguments,
            namespace,
        } => {
            let mut v = json!({"type": "function_call", "id": format!("fc_{n}_{index}"),
                "call_id": call_id, "name": name, "arguments": arguments, "status": "completed"});
            if let Some(ns) = namespace {
                v["namespace"] = json!(ns);
            }
            v
        }
        Item::Custom {
            call_id,
            name,
            input,
        } => json!({"type": "custom_tool_call", "id": format!("ctc_{n}_{index}"),
            "call_id": call_id, "name": name, "input": input, "status": "completed"}),
        Item::WebSearch { query } => json!({"type": "web_search_call",
            "id": format!("ws_{n}_{index}"), "status": "completed",
            "action": {"type": "search", "query": query}}),
        // Resolved before rendering.
        Item::Shell { .. } | Item::Patch { .. } | Item::EchoToolOutput(_) => json!({}),
    }
}
