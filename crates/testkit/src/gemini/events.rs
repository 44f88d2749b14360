//! Gemini API response chunks and the [`Turn`]s built from them.
//!
//! `ev_*` build single `GenerateContentResponse` chunks as the API streams them (one
//! `data:` line each); [`Turn`] strings them into one model reply (text, thoughts,
//! function calls, a finish reason, usage metadata), with pauses, errors and dropped
//! connections where a test wants them. A turn renders as an SSE stream for
//! `:streamGenerateContent` and as one JSON response for `:generateContent`.

use std::time::Duration;

use bytes::Bytes;
use serde_json::{json, Value};

use crate::server::{Reply, Step};

/// A chunk carrying `parts` of the model's content.
pub fn ev_parts(parts: Vec<Value>, model: &str) -> Value {
    json!({"candidates": [{"content": {"role": "model", "parts": parts}, "index": 0}],
           "modelVersion": model})
}

/// A text part.
pub fn part_text(text: &str) -> Value {
    json!({"text": text})
}

/// A thought (visible reasoning) part.
pub fn part_thought(text: &str) -> Value {
    json!({"text": text, "thought": true})
}

/// A function call part (`id` is optional in the API; the CLI makes one when absent).
pub fn part_function_call(id: Option<&str>, name: &str, args: &Value) -> Value {
    let mut call = json!({"name": name, "args": args});
    if let Some(id) = id {
        call["id"] = json!(id);
    }
    json!({"functionCall": call})
}

/// `usageMetadata` as the API reports it.
pub fn usage_metadata(prompt: u64, candidates: u64, thoughts: u64, cached: u64) -> Value {
    let mut u = json!({"promptTokenCount": prompt, "candidatesTokenCount": candidates,
                       "totalTokenCount": prompt + candidates + thoughts});
    if thoughts > 0 {
        u["thoughtsTokenCount"] = json!(thoughts);
    }
    if cached > 0 {
        u["cachedContentTokenCount"] = json!(cached);
    }
    u
}

/// The error body the API sends with a failing status (`{"error": {code, message,
/// status}}`).
pub fn error_body(code: u16, message: &str) -> Value {
    let status = match code {
        400 => "INVALID_ARGUMENT",
        401 => "UNAUTHENTICATED",
        403 => "PERMISSION_DENIED",
        404 => "NOT_FOUND",
        429 => "RESOURCE_EXHAUSTED",
        503 => "UNAVAILABLE",
        _ => "INTERNAL",
    };
    json!({"error": {"code": code, "message": message, "status": status}})
}

/// One SSE frame: `data: <json>` (the Gemini API sends no `event:` lines).
pub fn sse(chunk: &Value) -> Step {
    Step::Bytes(Bytes::from(format!("data: {chunk}\r\n\r\n")))
}

#[derive(Debug, Clone)]
enum Part {
    Text(Vec<String>),
    Thought(Vec<String>),
    Call {
        id: Option<String>,
        name: String,
        args: Value,
    },
    Delay(Duration),
    Chunk(Value),
    Drop,
    Hang,
}

#[derive(Debug, Clone)]
enum Kind {
    Message,
    Status(u16, Value),
    DropAtOnce,
}

/// One scripted model reply.
///
/// ```
/// use serde_json::json;
/// use weft_testkit::gemini::Turn;
/// let turn = Turn::new()
///     .thought("let me see")
///     .text("Calling run_shell_command.")
///     .function_call("run_shell_command", json!({"command": "echo hi"}));
/// # let _ = turn;
/// ```
#[derive(Debug, Clone)]
pub struct Turn {
    kind: Kind,
    parts: Vec<Part>,
    model: Option<String>,
    finish_reason: String,
    prompt_tokens: u64,
    output_tokens: u64,
    thought_tokens: u64,
    cached_tokens: u64,
    chunk_delay: Option<Duration>,
}

impl Default for Turn {
    fn default() -> Self {
        Self::new()
    }
}

impl Turn {
    /// An empty reply (add parts to it).
    pub fn new() -> Self {
        Self {
            kind: Kind::Message,
            parts: Vec::new(),
            model: None,
            finish_reason: "STOP".into(),
            prompt_tokens: 10,
            output_tokens: 5,
            thought_tokens: 0,
            cached_tokens: 0,
            chunk_delay: None,
        }
    }

    /// A reply of one text chunk.
    pub fn text_reply(text: &str) -> Self {
        Self::new().text(text)
    }

    /// An HTTP error status with the API's error body.
    pub fn status(code: u16) -> Self {
        Self {
            kind: Kind::Status(code, error_body(code, "scripted failure")),
            ..Self::new()
        }
    }

    /// An HTTP error status with this JSON body.
    pub fn status_body(code: u16, body: Value) -> Self {
        Self {
            kind: Kind::Status(code, body),
            ..Self::new()
        }
    }

    /// The API's 429 for a used-up daily quota: `RESOURCE_EXHAUSTED` with a
    /// `QuotaFailure` naming a per-day quota, and a `RetryInfo`.
    pub fn daily_quota_exhausted() -> Self {
        Self::status_body(
            429,
            json!({"error": {"code": 429, "status": "RESOURCE_EXHAUSTED",
                "message": "You exceeded your current quota, please check your plan and billing details.",
                "details": [
                    {"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": [{
                        "quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests",
                        "quotaId": "GenerateRequestsPerDayPerProjectPerModel-FreeTier",
                        "quotaValue": "50"}]},
                    {"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": "38s"}]}}),
        )
    }

    /// The connection is cut right after the headers.
    pub fn dropped() -> Self {
        Self {
            kind: Kind::DropAtOnce,
            ..Self::new()
        }
    }

    /// Appends text streamed as one chunk.
    pub fn text(self, text: &str) -> Self {
        self.text_chunks(&[text])
    }

    /// Appends text streamed as these chunks.
    pub fn text_chunks(mut self, chunks: &[&str]) -> Self {
        self.parts
            .push(Part::Text(chunks.iter().map(|s| s.to_string()).collect()));
        self
    }

    /// Appends a thought streamed as one chunk.
    pub fn thought(self, text: &str) -> Self {
        self.thought_chunks(&[text])
    }

    /// Appends a thought streamed as these chunks.
    pub fn thought_chunks(mut self, chunks: &[&str]) -> Self {
        self.parts.push(Part::Thought(
            chunks.iter().map(|s| s.to_string()).collect(),
        ));
        if self.thought_tokens == 0 {
            self.thought_tokens = 3;
        }
        self
    }

    /// Appends a function call without an id (what the real API sends).
    pub fn function_call(mut self, name: &str, args: Value) -> Self {
        self.parts.push(Part::Call {
            id: None,
            name: name.into(),
            args,
        });
        self
    }

    /// Appends a function call with an explicit id.
    pub fn function_call_id(mut self, id: &str, name: &str, args: Value) -> Self {
        self.parts.push(Part::Call {
            id: Some(id.into()),
            name: name.into(),
            args,
        });
        self
    }

    /// Pauses here (between chunks).
    pub fn delay(mut self, d: Duration) -> Self {
        self.parts.push(Part::Delay(d));
        self
    }

    /// Pauses before every text or thought chunk after this call.
    pub fn chunk_delay(mut self, d: Duration) -> Self {
        self.chunk_delay = Some(d);
        self
    }

    /// Sends a raw chunk here.
    pub fn chunk(mut self, chunk: Value) -> Self {
        self.parts.push(Part::Chunk(chunk));
        self
    }

    /// Cuts the connection here: no later chunk, no finish reason.
    pub fn then_drop(mut self) -> Self {
        self.parts.push(Part::Drop);
        self
    }

    /// Stops sending here and never finishes (a stalled model).
    pub fn then_hang(mut self) -> Self {
        self.parts.push(Part::Hang);
        self
    }

    /// The finish reason (default `STOP`).
    pub fn finish_reason(mut self, reason: &str) -> Self {
        self.finish_reason = reason.into();
        self
    }

    /// Usage figures reported (prompt and candidate tokens).
    pub fn usage(mut self, prompt: u64, output: u64) -> Self {
        self.prompt_tokens = prompt;
        self.output_tokens = output;
        self
    }

    /// Thought and cached-content token figures reported.
    pub fn usage_extra(mut self, thoughts: u64, cached: u64) -> Self {
        self.thought_tokens = thoughts;
        self.cached_tokens = cached;
        self
    }

    /// The model version reported (default: the model asked for).
    pub fn model(mut self, model: &str) -> Self {
        self.model = Some(model.into());
        self
    }

    fn usage_json(&self) -> Value {
        usage_metadata(
            self.prompt_tokens,
            self.output_tokens,
            self.thought_tokens,
            self.cached_tokens,
        )
    }

    /// Renders the reply to a request for `model`.
    pub fn render(&self, model: &str, stream: bool) -> Reply {
        match &self.kind {
            Kind::Status(code, body) => return Reply::json(*code, body),
            Kind::DropAtOnce => return Reply::dropped(),
            Kind::Message => {}
        }
        let model = self.model.clone().unwrap_or_else(|| model.to_string());
        if stream {
            Reply::sse(self.sse_steps(&model))
        } else {
            Reply::json(200, &self.response_json(&model))
        }
    }

    /// The whole reply as one `GenerateContentResponse`.
    pub fn response_json(&self, model: &str) -> Value {
        let mut parts = Vec::new();
        for part in &self.parts {
            match part {
                Part::Text(c) => parts.push(part_text(&c.concat())),
                Part::Thought(c) => parts.push(part_thought(&c.concat())),
                Part::Call { id, name, args } => {
                    parts.push(part_function_call(id.as_deref(), name, args))
                }
                _ => {}
            }
        }
        let mut v = ev_parts(parts, model);
        v["candidates"][0]["finishReason"] = json!(self.finish_reason);
        v["usageMetadata"] = self.usage_json();
        v
    }

    fn sse_steps(&self, model: &str) -> Vec<Step> {
        let mut steps = Vec::new();
        let delay = self.chunk_delay;
        let push_chunk = |steps: &mut Vec<Step>, part: Value| {
            if let Some(d) = delay {
                steps.push(Step::Delay(d));
            }
            steps.push(sse(&ev_parts(vec![part], model)));
        };
        for part in &self.parts {
            match part {
                Part::Text(chunks) => {
                    for c in chunks {
                        push_chunk(&mut steps, part_text(c));
                    }
                }
                Part::Thought(chunks) => {
                    for c in chunks {
                        push_chunk(&mut steps, part_thought(c));
                    }
                }
                Part::Call { id, name, args } => steps.push(sse(&ev_parts(
                    vec![part_function_call(id.as_deref(), name, args)],
                    model,
                ))),
                Part::Delay(d) => steps.push(Step::Delay(*d)),
                Part::Chunk(c) => steps.push(sse(c)),
                Part::Drop => {
                    steps.push(Step::Drop);
                    return steps;
                }
                Part::Hang => {
                    steps.push(Step::Hang);
                    return steps;
                }
            }
        }
        // The last chunk carries the finish reason and the usage, with an empty text
        // part as the API does.
        let mut last = ev_parts(vec![part_text("")], model);
        last["candidates"][0]["finishReason"] = json!(self.finish_reason);
        last["usageMetadata"] = self.usage_json();
        steps.push(sse(&last));
        steps
    }
}
