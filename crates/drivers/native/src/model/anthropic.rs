//! Anthropic Messages (`POST {base}/v1/messages`, `stream: true`).
//!
//! Thinking blocks come back with a signature the API checks when they are replayed:
//! a tool-use turn with extended thinking must send its thinking block back verbatim
//! or the request is refused. They are replayed only to this same origin.

use reqwest::RequestBuilder;
use serde_json::{json, Map, Value};

use super::sse::Decoder;
use super::{
    Endpoint, ModelError, ModelReply, ModelRequest, SseProtocol, StopReason, StreamEvent,
    TokenUsage,
};
use crate::conversation::{raw_arguments, Block, Message, Role, RAW_KEY};

/// How the client proves who it is.
#[derive(Clone)]
pub enum Auth {
    /// `x-api-key`.
    ApiKey(String),
    /// `Authorization: Bearer` (gateways, OAuth tokens).
    Bearer(String),
    /// Nothing (a local server).
    None,
}

/// A Messages client at one endpoint.
pub struct AnthropicClient {
    endpoint: Endpoint,
    auth: Auth,
}

impl AnthropicClient {
    /// A client of `base_url` (without `/v1`).
    pub fn new(base_url: &str, auth: Auth) -> Self {
        Self {
            endpoint: Endpoint::new("anthropic-messages", base_url),
            auth,
        }
    }

    /// The request body for `request`.
    pub fn body(&self, request: ModelRequest<'_>) -> Value {
        let mut body = json!({
            "model": request.model,
            "max_tokens": request.max_tokens,
            "stream": true,
            "messages": messages(request.messages, &self.endpoint.origin),
        });
        if !request.system.is_empty() {
            body["system"] = json!([{"type": "text", "text": request.system}]);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| json!({"name": t.name, "description": t.description, "input_schema": t.schema}))
                .collect();
        }
        if let Some(budget) = request.effort.and_then(thinking_budget) {
            body["thinking"] = json!({"type": "enabled", "budget_tokens": budget});
            body["max_tokens"] = json!(request.max_tokens.max(budget + 4096));
        }
        body
    }
}

fn thinking_budget(effort: &str) -> Option<u32> {
    match effort {
        "low" => Some(2048),
        "medium" => Some(8192),
        "high" => Some(24576),
        "max" | "xhigh" => Some(32000),
        _ => None,
    }
}

/// The conversation as Messages wants it: consecutive messages of one role merged,
/// reasoning from elsewhere left out, empty text dropped.
fn messages(conversation: &[Message], origin: &str) -> Vec<Value> {
    let mut out: Vec<(Role, Vec<Value>)> = Vec::new();
    for m in conversation {
        let blocks: Vec<Value> = m.blocks.iter().filter_map(|b| block(b, origin)).collect();
        if blocks.is_empty() {
            continue;
        }
        match out.last_mut() {
            Some((role, content)) if *role == m.role => content.extend(blocks),
            _ => out.push((m.role, blocks)),
        }
    }
    out.into_iter()
        .map(|(role, mut content)| {
            // Tool results must lead a user message.
            if role == Role::User {
                content.sort_by_key(|b| b["type"] != "tool_result");
            }
            let role = match role {
                Role::User => "user",
                Role::Assistant => "assistant",
            };
            json!({"role": role, "content": content})
        })
        .collect()
}

fn block(b: &Block, origin: &str) -> Option<Value> {
    Some(match b {
        Block::Text { text } if text.is_empty() => return None,
        Block::Text { text } => json!({"type": "text", "text": text}),
        Block::Reasoning {
            origin: o,
            redacted: Some(data),
            ..
        } if o == origin => json!({"type": "redacted_thinking", "data": data}),
        Block::Reasoning {
            text,
            signature: Some(sig),
            origin: o,
            ..
        } if o == origin => json!({"type": "thinking", "thinking": text, "signature": sig}),
        Block::Reasoning { .. } => return None,
        Block::Image {
            media_type, data, ..
        } => json!({"type": "image",
                    "source": {"type": "base64", "media_type": media_type, "data": data}}),
        Block::ToolUse {
            id, name, input, ..
        } => {
            let input = if input.is_object() && raw_arguments(input).is_none() {
                input.clone()
            } else {
                json!({})
            };
            json!({"type": "tool_use", "id": id, "name": name, "input": input})
        }
        Block::ToolResult {
            id,
            content,
            is_error,
            ..
        } => {
            json!({"type": "tool_result", "tool_use_id": id, "content": content, "is_error": is_error})
        }
    })
}

impl SseProtocol for AnthropicClient {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn provider(&self) -> &str {
        "anthropic"
    }

    fn request(&self, request: ModelRequest<'_>) -> Result<RequestBuilder, ModelError> {
        let builder = super::post(
            format!("{}/v1/messages", self.endpoint.base_url),
            &self.body(request),
        )?
        .header("anthropic-version", "2023-06-01");
        Ok(match &self.auth {
            Auth::ApiKey(k) => builder.header("x-api-key", k),
            Auth::Bearer(t) => builder.bearer_auth(t),
            Auth::None => builder,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(AnthropicDecoder::new(&self.endpoint.origin))
    }
}

enum Partial {
    Text(String),
    Thinking {
        text: String,
        signature: String,
    },
    Redacted(String),
    Tool {
        id: String,
        name: String,
        json: String,
    },
}

/// Messages stream events → a reply.
pub struct AnthropicDecoder {
    origin: String,
    blocks: Vec<Partial>,
    usage: TokenUsage,
    stop: StopReason,
}

impl AnthropicDecoder {
    /// A decoder for replies of `origin`.
    pub fn new(origin: &str) -> Self {
        Self {
            origin: origin.into(),
            blocks: Vec::new(),
            usage: TokenUsage::default(),
            stop: StopReason::Done,
        }
    }

    fn read_usage(&mut self, u: &Value) {
        let n = |k: &str| u.get(k).and_then(Value::as_u64);
        if let Some(v) = n("output_tokens") {
            self.usage.output = v;
        }
        let fresh = n("input_tokens");
        let read = n("cache_read_input_tokens");
        let write = n("cache_creation_input_tokens");
        if fresh.is_some() || read.is_some() || write.is_some() {
            if let Some(r) = read {
                self.usage.cache_read = r;
            }
            if let Some(w) = write {
                self.usage.cache_write = w;
            }
            let fresh = fresh.unwrap_or(0);
            self.usage.input = fresh + self.usage.cache_read + self.usage.cache_write;
        }
    }
}

impl Decoder for AnthropicDecoder {
    fn event(
        &mut self,
        _event: &str,
        data: &str,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::Interrupted(format!("the model sent an event that is not JSON: {e}"))
        })?;
        let index = v.get("index").and_then(Value::as_u64).unwrap_or(0) as usize;
        match v["type"].as_str().unwrap_or_default() {
            "message_start" => self.read_usage(&v["message"]["usage"]),
            "content_block_start" => {
                let b = &v["content_block"];
                let s = |k: &str| b[k].as_str().unwrap_or_default().to_string();
                let partial = match b["type"].as_str().unwrap_or_default() {
                    "thinking" => Partial::Thinking {
                        text: s("thinking"),
                        signature: s("signature"),
                    },
                    "redacted_thinking" => Partial::Redacted(s("data")),
                    "tool_use" | "server_tool_use" => {
                        sink(StreamEvent::ToolStart {
                            id: s("id"),
                            name: s("name"),
                        });
                        Partial::Tool {
                            id: s("id"),
                            name: s("name"),
                            json: String::new(),
                        }
                    }
                    _ => Partial::Text(s("text")),
                };
                while self.blocks.len() < index {
                    self.blocks.push(Partial::Text(String::new()));
                }
                if index < self.blocks.len() {
                    self.blocks[index] = partial;
                } else {
                    self.blocks.push(partial);
                }
            }
            "content_block_delta" => {
                let d = &v["delta"];
                let s = |k: &str| d[k].as_str().unwrap_or_default();
                match (self.blocks.get_mut(index), d["type"].as_str()) {
                    (Some(Partial::Text(t)), Some("text_delta")) => {
                        t.push_str(s("text"));
                        sink(StreamEvent::Text(s("text").into()));
                    }
                    (Some(Partial::Thinking { text, .. }), Some("thinking_delta")) => {
                        text.push_str(s("thinking"));
                        sink(StreamEvent::Reasoning(s("thinking").into()));
                    }
                    (Some(Partial::Thinking { signature, .. }), Some("signature_delta")) => {
                        signature.push_str(s("signature"))
                    }
                    (Some(Partial::Tool { json, .. }), Some("input_json_delta")) => {
                        json.push_str(s("partial_json"))
                    }
                    _ => {}
                }
            }
            "message_delta" => {
                if v["delta"]["stop_reason"] == "max_tokens" {
                    self.stop = StopReason::MaxTokens;
                }
                self.read_usage(&v["usage"]);
            }
            "message_stop" => return Ok(true),
            "error" => {
                let e = &v["error"];
                return Err(ModelError::Interrupted(format!(
                    "{}: {}",
                    e["type"].as_str().unwrap_or("error"),
                    e["message"].as_str().unwrap_or_default()
                )));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<ModelReply, ModelError> {
        let blocks = std::mem::take(&mut self.blocks)
            .into_iter()
            .filter_map(|p| match p {
                Partial::Text(text) if text.is_empty() => None,
                Partial::Text(text) => Some(Block::Text { text }),
                Partial::Thinking { text, signature } => Some(Block::Reasoning {
                    text,
                    signature: (!signature.is_empty()).then_some(signature),
                    redacted: None,
                    origin: self.origin.clone(),
                }),
                Partial::Redacted(data) => Some(Block::Reasoning {
                    text: String::new(),
                    signature: None,
                    redacted: Some(data),
                    origin: self.origin.clone(),
                }),
                Partial::Tool { id, name, json } => Some(Block::ToolUse {
                    id,
                    name,
                    input: parse_args(&json),
                    signature: None,
                }),
            })
            .collect();
        Ok(ModelReply {
            blocks,
            usage: self.usage,
            stop: self.stop,
        })
    }
}

/// Tool arguments as the model sent them: `{}` for nothing, `{"_raw": text}` for text
/// that is not a JSON object (reported back to the model as a bad call).
pub fn parse_args(text: &str) -> Value {
    if text.trim().is_empty() {
        return Value::Object(Map::new());
    }
    match serde_json::from_str::<Value>(text) {
        Ok(v @ Value::Object(_)) => v,
        _ => json!({ RAW_KEY: text }),
    }
}
