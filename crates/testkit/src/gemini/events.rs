//! Gemini API response chunks and the [`Turn`]s built from them.
//!
//! `ev_*` build single `GenerateContentResponse` chunks as the API streams them (one
//! `data:` line each); [`Turn`] strings them into one model reply (text, thoughts,
//! function calls, a finish reason, usage metadata), with pauses, errors and dropped
//! connections where a test wants them. A turn renders as an SSE stream for
//! `:streamGenerateContent` and as one JSON response for `:generateContent`.

use bytes::Bytes;
use serde_json::{json, Value};

use crate::server::{Reply, Step};
use crate::stream::{owned, turn_builders, Body};

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
enum Item {
    Text(Vec<String>),
    Thought(Vec<String>),
    Call {
        id: Option<String>,
        name: String,
        args: Value,
    },
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
    body: Body<Item>,
    model: Option<String>,
    finish_reason: String,
    prompt_tokens: u64,
    output_tokens: u64,
    thought_tokens: u64,
    cached_tokens: u64,
}

turn_builders!(Turn, Item::Text, raw: chunk, delta_delay: chunk_delay);

impl Turn {
    /// An empty reply (add parts to it).
    pub fn new() -> Self {
        Self {
            body: Body::default(),
            model: None,
            finish_reason: "STOP".into(),
            prompt_tokens: 10,
            output_tokens: 5,
            thought_tokens: 0,
            cached_tokens: 0,
        }
    }

    /// An HTTP error status with the API's error body.
    pub fn status(code: u16) -> Self {
        Self::status_body(code, error_body(code, "scripted failure"))
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

    /// Appends a thought streamed as one chunk.
    pub fn thought(self, text: &str) -> Self {
        self.thought_chunks(&[text])
    }

    /// Appends a thought streamed as these chunks.
    pub fn thought_chunks(mut self, chunks: &[&str]) -> Self {
        self.body.push_item(Item::Thought(owned(chunks)));
        if self.thought_tokens == 0 {
            self.thought_tokens = 3;
        }
        self
    }

    /// Appends a function call without an id (what the real API sends).
    pub fn function_call(mut self, name: &str, args: Value) -> Self {
        self.body.push_item(Item::Call {
            id: None,
            name: name.into(),
            args,
        });
        self
    }

    /// Appends a function call with an explicit id.
    pub fn function_call_id(mut self, id: &str, name: &str, args: Value) -> Self {
        self.body.push_item(Item::Call {
            id: Some(id.into()),
            name: name.into(),
            args,
        });
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
        if let Some(reply) = self.body.early_reply() {
            return reply;
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
        let parts = self
            .body
            .items()
            .map(|item| item_part(item, None))
            .collect();
        let mut v = ev_parts(parts, model);
        v["candidates"][0]["finishReason"] = json!(self.finish_reason);
        v["usageMetadata"] = self.usage_json();
        v
    }

    fn sse_steps(&self, model: &str) -> Vec<Step> {
        let mut steps = Vec::new();
        let finished = self.body.stream(&mut steps, sse, |item, steps| match item {
            Item::Text(chunks) | Item::Thought(chunks) => {
                for c in chunks {
                    let part = item_part(item, Some(c));
                    self.body.delta(steps, sse(&ev_parts(vec![part], model)));
                }
            }
            Item::Call { .. } => steps.push(sse(&ev_parts(vec![item_part(item, None)], model))),
        });
        if !finished {
            return steps;
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

/// The part `item` sends: its text is `chunk` when given, else all its chunks.
fn item_part(item: &Item, chunk: Option<&str>) -> Value {
    let text = |chunks: &[String]| chunk.map_or_else(|| chunks.concat(), str::to_string);
    match item {
        Item::Text(c) => part_text(&text(c)),
        Item::Thought(c) => part_thought(&text(c)),
        Item::Call { id, name, args } => part_function_call(id.as_deref(), name, args),
    }
}
