//! OpenAI Chat Completions (`POST {base}/chat/completions`, `stream: true`): OpenAI
//! itself and every compatible server (Ollama, vLLM, OpenRouter, llama.cpp, …).
//!
//! Tool calls arrive as deltas keyed by `index`, the id and name in the first, the
//! arguments as string pieces after. Usage comes in a last chunk with no choices when
//! `stream_options.include_usage` is set. Reasoning, where a server streams it
//! (`reasoning_content` / `reasoning`), is shown but has nothing to replay.

use std::collections::BTreeMap;

use reqwest::RequestBuilder;
use serde_json::{json, Value};

use super::anthropic::parse_args;
use super::sse::Decoder;
use super::{
    Endpoint, ModelError, ModelReply, ModelRequest, SseProtocol, StopReason, StreamEvent,
    TokenUsage,
};
use crate::conversation::{raw_arguments, Block, Message, Role};

/// A Chat Completions client at one endpoint.
pub struct ChatClient {
    endpoint: Endpoint,
    api_key: Option<String>,
    provider: String,
}

impl ChatClient {
    /// A client of `base_url` (including `/v1` where the server wants it).
    pub fn new(base_url: &str, api_key: Option<String>, provider: &str) -> Self {
        Self {
            endpoint: Endpoint::new("openai-chat", base_url),
            api_key,
            provider: provider.into(),
        }
    }

    /// The request body for `request`.
    pub fn body(&self, request: ModelRequest<'_>) -> Value {
        let mut messages = Vec::new();
        if !request.system.is_empty() {
            messages.push(json!({"role": "system", "content": request.system}));
        }
        for m in request.messages {
            push_message(&mut messages, m);
        }
        let mut body = json!({
            "model": request.model,
            "stream": true,
            "stream_options": {"include_usage": true},
            "max_tokens": request.max_tokens,
            "messages": messages,
        });
        if !request.tools.is_empty() {
            body["tools"] = request
                .tools
                .iter()
                .map(|t| {
                    json!({"type": "function", "function": {
                    "name": t.name, "description": t.description, "parameters": t.schema}})
                })
                .collect();
        }
        if let Some(effort) = request.effort {
            body["reasoning_effort"] = json!(effort);
        }
        body
    }
}

fn push_message(out: &mut Vec<Value>, m: &Message) {
    match m.role {
        Role::User => {
            // Tool results are messages of their own, before any text of the same turn.
            let mut text = Vec::new();
            let mut images = Vec::new();
            for b in &m.blocks {
                match b {
                    Block::ToolResult { id, content, .. } => {
                        out.push(json!({"role": "tool", "tool_call_id": id, "content": content}))
                    }
                    Block::Text { text: t } if !t.is_empty() => text.push(t.as_str()),
                    Block::Image {
                        media_type, data, ..
                    } => images.push(json!({"type": "image_url",
                        "image_url": {"url": format!("data:{media_type};base64,{data}")}})),
                    _ => {}
                }
            }
            if !images.is_empty() {
                // Content parts only when there is an image: a plain string is what
                // every compatible server takes.
                let mut parts = Vec::new();
                if !text.is_empty() {
                    parts.push(json!({"type": "text", "text": text.join("\n")}));
                }
                parts.extend(images);
                out.push(json!({"role": "user", "content": parts}));
            } else if !text.is_empty() {
                out.push(json!({"role": "user", "content": text.join("\n")}));
            }
        }
        Role::Assistant => {
            let text = m.text();
            let calls: Vec<Value> = m
                .tool_uses()
                .map(|(id, name, input)| {
                    let arguments = match raw_arguments(input) {
                        Some(raw) => raw.to_string(),
                        None => input.to_string(),
                    };
                    json!({"id": id, "type": "function",
                           "function": {"name": name, "arguments": arguments}})
                })
                .collect();
            if text.is_empty() && calls.is_empty() {
                return;
            }
            let mut msg = json!({"role": "assistant", "content": if text.is_empty() { Value::Null } else { json!(text) }});
            if !calls.is_empty() {
                msg["tool_calls"] = json!(calls);
            }
            out.push(msg);
        }
    }
}

impl SseProtocol for ChatClient {
    fn endpoint(&self) -> &Endpoint {
        &self.endpoint
    }

    fn provider(&self) -> &str {
        &self.provider
    }

    fn request(&self, request: ModelRequest<'_>) -> Result<RequestBuilder, ModelError> {
        let builder = super::post(
            format!("{}/chat/completions", self.endpoint.base_url),
            &self.body(request),
        )?;
        Ok(match &self.api_key {
            Some(key) => builder.bearer_auth(key),
            None => builder,
        })
    }

    fn decoder(&self) -> Box<dyn Decoder> {
        Box::<ChatDecoder>::default()
    }
}

#[derive(Default)]
struct Call {
    id: String,
    name: String,
    args: String,
}

/// Chat completion chunks → a reply.
#[derive(Default)]
pub struct ChatDecoder {
    text: String,
    reasoning: String,
    calls: BTreeMap<u64, Call>,
    usage: TokenUsage,
    stop: StopReason,
    finished: bool,
}

impl Decoder for ChatDecoder {
    fn event(
        &mut self,
        _event: &str,
        data: &str,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<bool, ModelError> {
        if data.trim() == "[DONE]" {
            return Ok(true);
        }
        let v: Value = serde_json::from_str(data).map_err(|e| {
            ModelError::Interrupted(format!("the model sent a chunk that is not JSON: {e}"))
        })?;
        if let Some(e) = v.get("error") {
            return Err(ModelError::Interrupted(
                e["message"].as_str().unwrap_or("error").to_string(),
            ));
        }
        if let Some(u) = v.get("usage").filter(|u| u.is_object()) {
            let n = |p: &str| u.pointer(p).and_then(Value::as_u64).unwrap_or(0);
            self.usage = TokenUsage {
                input: n("/prompt_tokens"),
                output: n("/completion_tokens"),
                cache_read: n("/prompt_tokens_details/cached_tokens"),
                cache_write: 0,
            };
        }
        for choice in v["choices"].as_array().into_iter().flatten() {
            let d = &choice["delta"];
            if let Some(t) = d["content"].as_str().filter(|t| !t.is_empty()) {
                self.text.push_str(t);
                sink(StreamEvent::Text(t.into()));
            }
            let r = d["reasoning_content"]
                .as_str()
                .or_else(|| d["reasoning"].as_str());
            if let Some(r) = r.filter(|r| !r.is_empty()) {
                self.reasoning.push_str(r);
                sink(StreamEvent::Reasoning(r.into()));
            }
            for (n, tc) in d["tool_calls"].as_array().into_iter().flatten().enumerate() {
                let index = tc["index"].as_u64().unwrap_or(n as u64);
                let call = self.calls.entry(index).or_default();
                if let Some(id) = tc["id"].as_str().filter(|s| !s.is_empty()) {
                    call.id = id.into();
                }
                if let Some(name) = tc["function"]["name"].as_str().filter(|s| !s.is_empty()) {
                    call.name.push_str(name);
                    sink(StreamEvent::ToolStart {
                        id: call.id.clone(),
                        name: call.name.clone(),
                    });
                }
                if let Some(a) = tc["function"]["arguments"].as_str() {
                    call.args.push_str(a);
                }
            }
            if let Some(reason) = choice["finish_reason"].as_str() {
                self.finished = true;
                if reason == "length" {
                    self.stop = StopReason::MaxTokens;
                }
            }
        }
        Ok(false)
    }

    fn finish(&mut self) -> Result<ModelReply, ModelError> {
        if !self.finished && self.text.is_empty() && self.calls.is_empty() {
            return Err(ModelError::Interrupted(
                "the stream ended with no reply".into(),
            ));
        }
        let mut blocks = Vec::new();
        if !self.reasoning.is_empty() {
            blocks.push(Block::Reasoning {
                text: std::mem::take(&mut self.reasoning),
                signature: None,
                redacted: None,
                origin: String::new(),
            });
        }
        if !self.text.is_empty() {
            blocks.push(Block::Text {
                text: std::mem::take(&mut self.text),
            });
        }
        for (i, call) in std::mem::take(&mut self.calls) {
            blocks.push(Block::ToolUse {
                id: if call.id.is_empty() {
                    format!("call_{i}")
                } else {
                    call.id
                },
                name: call.name,
                input: parse_args(&call.args),
                signature: None,
            });
        }
        Ok(ModelReply {
            blocks,
            usage: self.usage,
            stop: self.stop,
        })
    }
}
