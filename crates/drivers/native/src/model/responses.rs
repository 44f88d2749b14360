//! OpenAI Responses (`POST {base}/responses`, `stream: true`, `store: false`).
//!
//! Reasoning items come back with `encrypted_content` (asked for with `include`), which
//! is replayed only to the same origin. Items are taken whole from
//! `response.output_item.done`; deltas only feed the live text and reasoning.

use reqwest::RequestBuilder;
use serde_json::{json, Value};

use super::anthropic::parse_args;
use super::sse::Decoder;
use super::{
    Endpoint, ModelError, ModelReply, ModelRequest, SseProtocol, StopReason, StreamEvent,
    TokenUsage,
};
use crate::conversation::{raw_arguments, Block, Message, Role};

/// A Responses client at one endpoint.
pub struct ResponsesClient {
    endpoint: Endpoint,
    api_key: Option<String>,
}

impl ResponsesClient {
    /// A client of `base_url` (including `/v1`).
    pub fn new(base_url: &str, api_key: Option<String>) -> Self {
        Self {
            endpoint: Endpoint::new("openai-responses", base_url),
            api_key,
        }
    }

    /// The request body for `request`.
    pub fn body(&self, request: ModelRequest<'_>) -> Value {
        let mut input = Vec::new();
        for m in request.messages {
            items(&mut input, m, &self.endpoint.origin);
        }
        let mut body = json!({
            "model": request.model,
            "input": input,
            "stream": true,
            "store": false,
            "include": ["reasoning.encrypted_content"],
            "max_output_tokens": request.max_tokens,
        });
        if !request.system.is_empty() {
            body["instructions"] = json!(request.system);
        }
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "name": t.name,
                                "description": t.description, "parameters": t.schema})
                })
                .collect();
        }
        if let Some(effort) = request.effort {
            body["reasoning"] = json!({"effort": effort, "summary": "auto"});
        }
        body
    }
}

/// `m` as Responses input items. A user's text and images go together in one
/// `message` (`input_text`, `input_image` with a data URL), after any tool outputs.
fn items(out: &mut Vec<Value>, m: &Message, origin: &str) {
    let mut user_content: Vec<Value> = Vec::new();
    for b in &m.blocks {
        match (m.role, b) {
            (_, Block::Text { text }) if text.is_empty() => {}
            (Role::User, Block::Text { text }) => {
                user_content.push(json!({"type": "input_text", "text": text}))
            }
            (Role::User, Block::Image { media_type, data, .. }) => {
                user_content.push(json!({"type": "input_image", "detail": "auto",
                    "image_url": format!("data:{media_type};base64,{data}")}))
            }
            (Role::Assistant, Block::Image { .. }) => {}
            (Role::Assistant, Block::Text { text }) => out.push(json!({"type": "message",
                "role": "assistant", "content": [{"type": "output_text", "text": text}]})),
            (_, Block::Reasoning { text, signature: Some(sig), origin: o, .. }) if o == origin => {
                out.push(json!({"type": "reasoning", "encrypted_content": sig,
                    "summary": if text.is_empty() { json!([]) } else { json!([{"type": "summary_text", "text": text}]) }}))
            }
            (_, Block::Reasoning { .. }) => {}
            (_, Block::ToolUse { id, name, input, .. }) => {
                let arguments = match raw_arguments(input) {
                    Some(raw) => raw.to_string(),
                    None => input.to_string(),
                };
                out.push(json!({"type": "function_call", "call_id": id, "name": name, "arguments": arguments}))
            }
            (_, Block::ToolResult { id, content, .. }) => {
                out.push(json!({"type": "function_call_output", "call_id": id, "output": content}))
            }
        }
    }
    if !user_content.is_empty() {
        out.push(json!({"type": "message", "role": "user", "content": user_content}));
    }
}

impl SseProtocol for ResponsesClient {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn provider(&self) -> &str {
        "openai"
    }

    fn request(&self, request: ModelRequest<'_>) -> Result<RequestBuilder, ModelError> {
        let url = format!("{}/responses", self.endpoint.base_url);
        let builder = super::post(url, &self.body(request))?;
        Ok(match &self.api_key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::new(ResponsesDecoder::new(&self.endpoint.origin))
    }
}

/// Responses stream events → a reply.
pub struct ResponsesDecoder {
    origin: String,
    blocks: Vec<(u64, Block)>,
    usage: TokenUsage,
    stop: StopReason,
}

impl ResponsesDecoder {
    /// A decoder for replies of `origin`.
    pub fn new(origin: &str) -> Self {
        Self {
            origin: origin.into(),
            blocks: Vec::new(),
            usage: TokenUsage::default(),
            stop: StopReason::Done,
        }
    }

    fn item_done(&mut self, index: u64, item: &Value) {
        let s = |k: &str| item[k].as_str().unwrap_or_default().to_string();
        let block = match item["type"].as_str().unwrap_or_default() {
            "message" => {
                let text: String = item["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect();
                Block::Text { text }
            }
            "reasoning" => Block::Reasoning {
                text: item["summary"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|c| c["text"].as_str())
                    .collect::<Vec<_>>()
                    .join("\n"),
                signature: item["encrypted_content"].as_str().map(String::from),
                redacted: None,
                origin: self.origin.clone(),
            },
            "function_call" => Block::ToolUse {
                id: s("call_id"),
                name: s("name"),
                input: parse_args(&s("arguments")),
                signature: None,
            },
            _ => return,
        };
        self.blocks.push((index, block));
    }
}

impl Decoder for ResponsesDecoder {
    fn event(
        &mut self,
        _event: &str,
        data: &str,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::Interrupted(format!("the model sent an event that is not JSON: {e}"))
        })?;
        let delta = || v["delta"].as_str().unwrap_or_default().to_string();
        match v["type"].as_str().unwrap_or_default() {
            "response.output_text.delta" => sink(StreamEvent::Text(delta())),
            "response.reasoning_summary_text.delta" | "response.reasoning_text.delta" => {
                sink(StreamEvent::Reasoning(delta()))
            }
            "response.output_item.added" if v["item"]["type"] == "function_call" => {
                sink(StreamEvent::ToolStart {
                    id: v["item"]["call_id"].as_str().unwrap_or_default().into(),
                    name: v["item"]["name"].as_str().unwrap_or_default().into(),
                })
            }
            "response.output_item.done" => {
                let index = v["output_index"]
                    .as_u64()
                    .unwrap_or(self.blocks.len() as u64);
                self.item_done(index, &v["item"]);
            }
            "response.completed" | "response.incomplete" => {
                let u = &v["response"]["usage"];
                let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
                self.usage = TokenUsage {
                    input: n("/input_tokens"),
                    output: n("/output_tokens"),
                    cache_read: n("/input_tokens_details/cached_tokens"),
                    cache_write: 0,
                };
                if v["type"] == "response.incomplete" {
                    self.stop = StopReason::MaxTokens;
                }
                return Ok(true);
            }
            "response.failed" | "error" => {
                let e = if v["type"] == "error" {
                    &v
                } else {
                    &v["response"]["error"]
                };
                let code = e["code"].as_str().unwrap_or_default();
                let message = e["message"]
                    .as_str()
                    .unwrap_or("the response failed")
                    .to_string();
                // Nothing was generated: a smaller conversation is a new request, not a resend.
                if code == "context_length_exceeded" {
                    return Err(ModelError::ContextWindow(message));
                }
                return Err(ModelError::Interrupted(format!("{code}: {message}")));
            }
            _ => {}
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<ModelReply, ModelError> {
        let mut blocks = std::mem::take(&mut self.blocks);
        blocks.sort_by_key(|(i, _)| *i);
        Ok(ModelReply {
            blocks: blocks
                .into_iter()
                .map(|(_, b)| b)
                .filter(|b| !matches!(b, Block::Text { text } if text.is_empty()))
                .collect(),
            usage: self.usage,
            stop: self.stop,
        })
    }
}
