//! Gemini (`POST {base}/v1beta/models/{model}:streamGenerateContent?alt=sse`).
//!
//! A function call may carry a `thoughtSignature` that must come back with it on the
//! next request; it is kept on the call with its origin and replayed to that origin
//! only. The stream has no end event: it ends with the connection, after a chunk with
//! a `finishReason`.

use reqwest::RequestBuilder;
use serde_json::{json, Value};

use super::sse::Decoder;
use super::{
    Endpoint, ModelError, ModelReply, ModelRequest, SseProtocol, StopReason, StreamEvent,
    TokenUsage,
};
use crate::conversation::{raw_arguments, Block, Message, Role};

/// A Gemini client at one endpoint.
pub struct GeminiClient {
    endpoint: Endpoint,
    api_key: Option<String>,
}

impl GeminiClient {
    /// A client of `base_url` (the host; `/v1beta` is added).
    pub fn new(base_url: &str, api_key: Option<String>) -> Self {
        Self {
            endpoint: Endpoint::new("gemini", base_url),
            api_key,
        }
    }

    /// The request body for `request`.
    pub fn body(&self, request: ModelRequest<'_>) -> Value {
        let contents: Vec<Value> = request
            .messages
            .iter()
            .filter_map(|m| content(m, &self.endpoint.origin))
            .collect();
        let mut body = json!({
            "contents": contents,
            "generationConfig": {"maxOutputTokens": request.max_tokens,
                                 "thinkingConfig": {"includeThoughts": true}},
        });
        if !request.system.is_empty() {
            body["systemInstruction"] = json!({"parts": [{"text": request.system}]});
        }
        if !request.tools.is_empty() {
            let decls: Vec<Value> = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "parameters": t.schema}))
                .collect();
            body["tools"] = json!([{"functionDeclarations": decls}]);
        }
        body
    }
}

fn content(m: &Message, origin: &str) -> Option<Value> {
    let parts: Vec<Value> = m
        .blocks
        .iter()
        .filter_map(|b| match b {
            Block::Text { text } if text.is_empty() => None,
            Block::Text { text } => Some(json!({"text": text})),
            Block::Reasoning { .. } => None,
            Block::Image { media_type, data, .. } => {
                Some(json!({"inlineData": {"mimeType": media_type, "data": data}}))
            }
            Block::ToolUse { id, name, input, signature } => {
                let args = if input.is_object() && raw_arguments(input).is_none() { input.clone() } else { json!({}) };
                let mut part = json!({"functionCall": {"id": id, "name": name, "args": args}});
                if let Some((o, sig)) = signature {
                    if o == origin {
                        part["thoughtSignature"] = json!(sig);
                    }
                }
                Some(part)
            }
            Block::ToolResult { id, name, content, is_error } => {
                let key = if *is_error { "error" } else { "output" };
                Some(json!({"functionResponse": {"id": id, "name": name, "response": {key: content}}}))
            }
        })
        .collect();
    if parts.is_empty() {
        return None;
    }
    let role = match m.role {
        Role::User => "user",
        Role::Assistant => "model",
    };
    Some(json!({"role": role, "parts": parts}))
}

impl SseProtocol for GeminiClient {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn provider(&self) -> &str {
        "gemini"
    }

    fn request(&self, request: ModelRequest<'_>) -> Result<RequestBuilder, ModelError> {
        let url = format!(
            "{}/v1beta/models/{}:streamGenerateContent?alt=sse",
            self.endpoint.base_url, request.model
        );
        let builder = super::post(url, &self.body(request))?;
        Ok(match &self.api_key {
            Some(key) => builder.header("x-goog-api-key", key),
            None => builder,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(GeminiDecoder::new(&self.endpoint.origin))
    }
}

/// Gemini chunks → a reply.
pub struct GeminiDecoder {
    origin: String,
    text: String,
    thought: String,
    calls: Vec<Block>,
    usage: TokenUsage,
    stop: StopReason,
    finished: bool,
}

impl GeminiDecoder {
    /// A decoder for replies of `origin`.
    pub fn new(origin: &str) -> Self {
        Self {
            origin: origin.into(),
            text: String::new(),
            thought: String::new(),
            calls: Vec::new(),
            usage: TokenUsage::default(),
            stop: StopReason::Done,
            finished: false,
        }
    }
}

impl Decoder for GeminiDecoder {
    fn event(
        &mut self,
        _event: &str,
        data: &str,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::Interrupted(format!("the model sent a chunk that is not JSON: {e}"))
        })?;
        if let Some(e) = v.get("error") {
            return Err(ModelError::Interrupted(
                e["message"].as_str().unwrap_or("error").to_string(),
            ));
        }
        if let Some(u) = v.get("usageMetadata") {
            let n = |k: &str| u[k].as_u64().unwrap_or(0);
            self.usage = TokenUsage {
                input: n("promptTokenCount"),
                output: n("candidatesTokenCount") + n("thoughtsTokenCount"),
                cache_read: n("cachedContentTokenCount"),
                cache_write: 0,
            };
        }
        let Some(candidate) = v["candidates"].get(0) else {
            return Ok(false);
        };
        for part in candidate["content"]["parts"]
            .as_array()
            .into_iter()
            .flatten()
        {
            if let Some(call) = part.get("functionCall") {
                let n = self.calls.len();
                let id = call["id"]
                    .as_str()
                    .map(String::from)
                    .unwrap_or_else(|| format!("gemini_call_{n}"));
                let name = call["name"].as_str().unwrap_or_default().to_string();
                sink(StreamEvent::ToolStart {
                    id: id.clone(),
                    name: name.clone(),
                });
                self.calls.push(Block::ToolUse {
                    id,
                    name,
                    input: if call["args"].is_object() {
                        call["args"].clone()
                    } else {
                        json!({})
                    },
                    signature: part["thoughtSignature"]
                        .as_str()
                        .map(|s| (self.origin.clone(), s.to_string())),
                });
            } else if let Some(t) = part["text"].as_str().filter(|t| !t.is_empty()) {
                if part["thought"].as_bool() == Some(true) {
                    self.thought.push_str(t);
                    sink(StreamEvent::Reasoning(t.into()));
                } else {
                    self.text.push_str(t);
                    sink(StreamEvent::Text(t.into()));
                }
            }
        }
        if let Some(reason) = candidate["finishReason"].as_str() {
            self.finished = true;
            if reason == "MAX_TOKENS" {
                self.stop = StopReason::MaxTokens;
            }
        }
        Ok(false)
    }

    fn complete_at_eof(&self) -> bool {
        self.finished
    }

    fn finish(&mut self) -> Result<ModelReply, ModelError> {
        let mut blocks = Vec::new();
        if !self.thought.is_empty() {
            blocks.push(Block::Reasoning {
                text: std::mem::take(&mut self.thought),
                signature: None,
                redacted: None,
                origin: self.origin.clone(),
            });
        }
        if !self.text.is_empty() {
            blocks.push(Block::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        blocks.append(&mut self.calls);
        Ok(ModelReply {
            blocks,
            usage: self.usage,
            stop: self.stop,
        })
    }
}
