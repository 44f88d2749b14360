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

use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

use super::ResponsesRequest;
use crate::server::{Reply, Step};

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
pub fn sse(event: &Value) -> Step {
    let kind = event
        .get("type")
        .and_then(Value::as_str)
        .unwrap_or("message");
    Step::Bytes(Bytes::from(format!("event: {kind}\ndata: {event}\n\n")))
}

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

#[derive(Debug, Clone)]
enum Part {
    Item(Item),
    Delay(Duration),
    Event(Value),
    Drop,
    Hang,
}

#[derive(Debug, Clone)]
enum Kind {
    Response,
    Status(u16, Value),
    DropAtOnce,
    Failed(String, String),
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
    kind: Kind,
    parts: Vec<Part>,
    id: Option<String>,
    input_tokens: u64,
    cached_tokens: u64,
    output_tokens: u64,
    reasoning_tokens: u64,
    delta_delay: Option<Duration>,
    headers: Vec<(String, String)>,
}

impl Default for Turn {
    fn default() -> Self {
        Self::new()
    }
}

impl Turn {
    /// An empty reply (add items to it).
    pub fn new() -> Self {
        Self {
            kind: Kind::Response,
            parts: Vec::new(),
            id: None,
            input_tokens: 20,
            cached_tokens: 0,
            output_tokens: 7,
            reasoning_tokens: 0,
            delta_delay: None,
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

    /// An HTTP error status with this JSON body (e.g. a 429 whose error says which
    /// limit was reached).
    pub fn status_body(code: u16, body: Value) -> Self {
        Self {
            kind: Kind::Status(code, body),
            ..Self::new()
        }
    }

    /// A reply of one message, streamed as one delta.
    pub fn text_reply(text: &str) -> Self {
        Self::new().text(text)
    }

    /// An HTTP error status with the API's error body.
    pub fn status(code: u16) -> Self {
        let kind = match code {
            429 => "rate_limit_exceeded",
            400 => "invalid_request_error",
            401 => "invalid_api_key",
            _ => "server_error",
        };
        Self {
            kind: Kind::Status(code, error_body(kind, "scripted failure")),
            ..Self::new()
        }
    }

    /// The connection is cut right after the headers.
    pub fn dropped() -> Self {
        Self {
            kind: Kind::DropAtOnce,
            ..Self::new()
        }
    }

    /// A stream that ends in `response.failed` (after any items added before).
    pub fn failed(mut self, code: &str, message: &str) -> Self {
        self.kind = Kind::Failed(code.into(), message.into());
        self
    }

    /// Appends a message item streamed as one delta.
    pub fn text(self, text: &str) -> Self {
        self.text_chunks(&[text])
    }

    /// Appends a message item streamed as these deltas.
    pub fn text_chunks(mut self, chunks: &[&str]) -> Self {
        let chunks = chunks.iter().map(|s| s.to_string()).collect();
        self.parts.push(Part::Item(Item::Text(chunks)));
        self
    }

    /// Appends a reasoning item whose summary streams as one delta.
    pub fn reasoning(self, text: &str) -> Self {
        self.reasoning_chunks(&[text])
    }

    /// Appends a reasoning item whose summary streams as these deltas.
    pub fn reasoning_chunks(mut self, chunks: &[&str]) -> Self {
        let chunks = chunks.iter().map(|s| s.to_string()).collect();
        self.parts.push(Part::Item(Item::Reasoning(chunks)));
        self
    }

    /// Appends a function call with these arguments (serialized as the API does).
    pub fn function_call(mut self, call_id: &str, name: &str, arguments: Value) -> Self {
        self.parts.push(Part::Item(Item::Function {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
            namespace: None,
        }));
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
        self.parts.push(Part::Item(Item::Function {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.to_string(),
            namespace: Some(namespace.into()),
        }));
        self
    }

    /// Appends a function call whose arguments are this raw string (malformed JSON on
    /// purpose, say).
    pub fn function_call_raw(mut self, call_id: &str, name: &str, arguments: &str) -> Self {
        self.parts.push(Part::Item(Item::Function {
            call_id: call_id.into(),
            name: name.into(),
            arguments: arguments.into(),
            namespace: None,
        }));
        self
    }

    /// Appends a freeform (custom) tool call.
    pub fn custom_tool_call(mut self, call_id: &str, name: &str, input: &str) -> Self {
        self.parts.push(Part::Item(Item::Custom {
            call_id: call_id.into(),
            name: name.into(),
            input: input.into(),
        }));
        self
    }

    /// Appends a shell command through whichever shell tool the request offers
    /// (`exec_command`, `shell_command` or `shell`).
    pub fn shell(mut self, call_id: &str, command: &str) -> Self {
        self.parts.push(Part::Item(Item::Shell {
            call_id: call_id.into(),
            command: command.into(),
        }));
        self
    }

    /// Appends an `apply_patch` call with this patch (`*** Begin Patch` …), as the
    /// offered tool takes it: freeform, function `{input}`, or through the shell.
    pub fn patch(mut self, call_id: &str, patch: &str) -> Self {
        self.parts.push(Part::Item(Item::Patch {
            call_id: call_id.into(),
            patch: patch.into(),
        }));
        self
    }

    /// Appends a message quoting the request's latest tool output after `prefix` (the
    /// model "read" the result: a question's answer, a command's output).
    pub fn echo_tool_output(mut self, prefix: &str) -> Self {
        self.parts
            .push(Part::Item(Item::EchoToolOutput(prefix.into())));
        self
    }

    /// Appends a hosted web search (`web_search_call`).
    pub fn web_search(mut self, query: &str) -> Self {
        self.parts.push(Part::Item(Item::WebSearch {
            query: query.into(),
        }));
        self
    }

    /// Pauses here (between items).
    pub fn delay(mut self, d: Duration) -> Self {
        self.parts.push(Part::Delay(d));
        self
    }

    /// Pauses before every delta of the items after this call.
    pub fn delta_delay(mut self, d: Duration) -> Self {
        self.delta_delay = Some(d);
        self
    }

    /// Sends a raw event here.
    pub fn event(mut self, event: Value) -> Self {
        self.parts.push(Part::Event(event));
        self
    }

    /// Cuts the connection here: no later item, no `response.completed`.
    pub fn then_drop(mut self) -> Self {
        self.parts.push(Part::Drop);
        self
    }

    /// Stops sending here and never finishes (a stalled model).
    pub fn then_hang(mut self) -> Self {
        self.parts.push(Part::Hang);
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
        let mut reply = match &self.kind {
            Kind::Status(code, body) => Reply::json(*code, body),
            Kind::DropAtOnce => Reply::dropped(),
            Kind::Response | Kind::Failed(..) => {
                let id = self.id.clone().unwrap_or_else(|| format!("resp_{n}"));
                if req.stream() {
                    Reply::sse(self.sse_steps(req, &id, n))
                } else {
                    Reply::json(200, &self.response_json(req, &id, n))
                }
            }
        };
        reply.headers.extend(self.headers.iter().cloned());
        reply
    }

    /// The whole reply as one non-streamed response object.
    pub fn response_json(&self, req: &ResponsesRequest, id: &str, n: usize) -> Value {
        let output: Vec<Value> = self
            .items()
            .enumerate()
            .map(|(i, item)| done_item(&resolve(item, req), n, i))
            .collect();
        json!({"id": id, "object": "response", "model": req.model(), "status": "completed",
               "output": output, "usage": self.usage_json()})
    }

    fn items(&self) -> impl Iterator<Item = &Item> {
        self.parts.iter().filter_map(|p| match p {
            Part::Item(i) => Some(i),
            _ => None,
        })
    }

    fn sse_steps(&self, req: &ResponsesRequest, id: &str, n: usize) -> Vec<Step> {
        let mut steps = vec![sse(&ev_created(id, req.model()))];
        let mut index = 0;
        for part in &self.parts {
            match part {
                Part::Delay(d) => steps.push(Step::Delay(*d)),
                Part::Event(ev) => steps.push(sse(ev)),
                Part::Drop => {
                    steps.push(Step::Drop);
                    return steps;
                }
                Part::Hang => {
                    steps.push(Step::Hang);
                    return steps;
                }
                Part::Item(item) => {
                    self.item_steps(&resolve(item, req), n, index, &mut steps);
                    index += 1;
                }
            }
        }
        let last = match &self.kind {
            Kind::Failed(code, message) => ev_failed(id, code, message),
            _ => ev_completed(id, &self.usage_json()),
        };
        steps.push(sse(&last));
        steps
    }

    fn delta(&self, steps: &mut Vec<Step>, ev: Value) {
        if let Some(d) = self.delta_delay {
            steps.push(Step::Delay(d));
        }
        steps.push(sse(&ev));
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
                    self.delta(steps, ev_text_delta(index, &item_id, c));
                }
                steps.push(sse(&ev_text_done(index, &item_id, &chunks.concat())));
            }
            Item::Reasoning(chunks) => {
                let mut added = done.clone();
                added["summary"] = json!([]);
                steps.push(sse(&ev_item_added(index, &added)));
                steps.push(sse(&ev_summary_part_added(index, &item_id, 0)));
                for c in chunks {
                    self.delta(steps, ev_summary_delta(index, &item_id, 0, c));
                }
            }
            Item::Function { arguments, .. } => {
                let mut added = done.clone();
                added["arguments"] = json!("");
                added["status"] = json!("in_progress");
                steps.push(sse(&ev_item_added(index, &added)));
                self.delta(steps, ev_arguments_delta(index, &item_id, arguments));
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
