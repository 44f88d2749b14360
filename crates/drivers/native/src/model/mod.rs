//! One streaming trait over the model protocols, and what they share: the request in
//! Weft's terms, the streamed events, typed errors, and the SSE pump.
//!
//! The hazard every client guards against: a request is never sent again once any
//! part of its response arrived (the model may already have acted on it, and a
//! second answer would be billed and could differ). Only a failure before the first
//! byte of the body — a refused connection, an error status — is retried, and only
//! by [`with_retries`], never inside a client.

pub mod anthropic;
pub mod chat;
pub mod gemini;
pub mod responses;
pub mod sse;

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use crate::conversation::{Block, Message};

/// A tool as the model is told about it.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolSpec {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// JSON Schema of its arguments.
    pub schema: Value,
}

/// One model request.
#[derive(Debug, Clone, Copy)]
pub struct ModelRequest<'a> {
    /// The model.
    pub model: &'a str,
    /// The system prompt.
    pub system: &'a str,
    /// The conversation so far.
    pub messages: &'a [Message],
    /// The tools offered.
    pub tools: &'a [ToolSpec],
    /// Output token cap.
    pub max_tokens: u32,
    /// Reasoning effort asked for (`low`, `medium`, `high`), if any.
    pub effort: Option<&'a str>,
}

/// Token figures a provider reported.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct TokenUsage {
    /// Input tokens (cache reads and writes included).
    pub input: u64,
    /// Output tokens.
    pub output: u64,
    /// Input tokens read from cache.
    pub cache_read: u64,
    /// Input tokens written to cache.
    pub cache_write: u64,
}

/// Something streamed while a reply is made.
#[derive(Debug, Clone, PartialEq)]
pub enum StreamEvent {
    /// A piece of the reply.
    Text(String),
    /// A piece of visible reasoning.
    Reasoning(String),
    /// A tool call started.
    ToolStart {
        /// Call id.
        id: String,
        /// Tool name.
        name: String,
    },
}

/// Why the model stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum StopReason {
    /// It finished (or wants its tool calls run).
    #[default]
    Done,
    /// It hit the output token cap.
    MaxTokens,
}

/// A whole reply.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct ModelReply {
    /// Its blocks, in order (reasoning, text, tool calls).
    pub blocks: Vec<Block>,
    /// Usage.
    pub usage: TokenUsage,
    /// Why it stopped.
    pub stop: StopReason,
}

/// A model request's failure.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ModelError {
    /// The conversation no longer fits the model's window.
    #[error("the context window is exceeded: {0}")]
    ContextWindow(String),
    /// Too many requests; try again after the given time, when the provider said.
    #[error("rate limited: {message}")]
    RateLimited {
        /// The provider's words.
        message: String,
        /// Its `retry-after`, when given.
        retry_after: Option<Duration>,
    },
    /// A transient failure before any of the response arrived.
    #[error("the model endpoint failed: {0}")]
    Retryable(String),
    /// The response broke off after part of it arrived: never sent again.
    #[error("the model's response broke off: {0} (the request was not sent again)")]
    Interrupted(String),
    /// Anything else: bad credentials, a bad request, an unknown model.
    #[error("{0}")]
    Fatal(String),
    /// The turn was stopped.
    #[error("stopped")]
    Cancelled,
}

/// A streaming client of one model protocol at one endpoint.
#[async_trait]
pub trait ModelClient: Send + Sync {
    /// Which protocol and endpoint this is: reasoning it produced is replayed only to
    /// a client with the same origin.
    fn origin(&self) -> &str;

    /// The provider's name for usage (`anthropic`, `openai`, …).
    fn provider_name(&self) -> &str;

    /// Makes one request and streams its reply into `sink`. Never retries.
    async fn stream(
        &self,
        request: ModelRequest<'_>,
        cancel: &CancellationToken,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, ModelError>;
}

/// Where one protocol's requests go: the base URL without a trailing slash, and the
/// origin its reasoning is tagged with, so that it is replayed to this endpoint only.
pub(crate) struct Endpoint {
    pub(crate) base_url: String,
    pub(crate) origin: String,
}

impl Endpoint {
    pub(crate) fn new(protocol: &str, base_url: &str) -> Self {
        let base_url = base_url.trim_end_matches('/').to_string();
        Self {
            origin: format!("{protocol} {base_url}"),
            base_url,
        }
    }
}

/// A protocol whose reply streams as server-sent events: every one of ours. They
/// differ only in the request they build and the decoder they read it with, so
/// [`ModelClient`] is written once for them all.
pub(crate) trait SseProtocol: Send + Sync {
    fn endpoint(&self) -> &Endpoint;
    /// The provider's name for usage.
    fn provider(&self) -> &str;
    /// The request for `request`, credentials included.
    fn request(&self, request: ModelRequest<'_>) -> Result<reqwest::RequestBuilder, ModelError>;
    /// A decoder for one reply.
    fn decoder(&self) -> Box<dyn sse::Decoder>;
}

#[async_trait]
impl<T: SseProtocol> ModelClient for T {
    fn origin(&self) -> &str {
        &self.endpoint().origin
    }

    fn provider_name(&self) -> &str {
        self.provider()
    }

    async fn stream(
        &self,
        request: ModelRequest<'_>,
        cancel: &CancellationToken,
        sink: &mut (dyn FnMut(StreamEvent) + Send),
    ) -> Result<ModelReply, ModelError> {
        let builder = self.request(request)?;
        stream_sse(builder, &mut *self.decoder(), cancel, sink).await
    }
}

/// How often and how long to retry a request that failed before its body arrived.
#[derive(Debug, Clone, Copy)]
pub struct RetryPolicy {
    /// Attempts after the first.
    pub retries: u32,
    /// The first back-off (doubling), when the provider gave no `retry-after`.
    pub base: Duration,
    /// The longest wait honoured.
    pub max_wait: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            retries: 3,
            base: Duration::from_millis(1000),
            max_wait: Duration::from_secs(60),
        }
    }
}

/// Calls `client` and retries rate limits and transient failures that happened before
/// any of the response arrived; `on_retry` hears each wait.
pub async fn with_retries(
    client: &dyn ModelClient,
    request: ModelRequest<'_>,
    policy: RetryPolicy,
    cancel: &CancellationToken,
    sink: &mut (dyn FnMut(StreamEvent) + Send),
    on_retry: &mut (dyn FnMut(&ModelError, Duration) + Send),
) -> Result<ModelReply, ModelError> {
    let mut attempt = 0;
    loop {
        let err = match client.stream(request, cancel, sink).await {
            Ok(reply) => return Ok(reply),
            Err(e) => e,
        };
        let wait = match &err {
            ModelError::RateLimited { retry_after, .. } => retry_after
                .unwrap_or_else(|| policy.base * 2u32.saturating_pow(attempt))
                .min(policy.max_wait),
            ModelError::Retryable(_) => policy.base * 2u32.saturating_pow(attempt),
            _ => return Err(err),
        };
        if attempt >= policy.retries {
            return Err(err);
        }
        attempt += 1;
        on_retry(&err, wait);
        tokio::select! {
            _ = tokio::time::sleep(wait) => {}
            _ = cancel.cancelled() => return Err(ModelError::Cancelled),
        }
    }
}

/// The error for a failing HTTP status, before any body was streamed.
pub(crate) fn status_error(status: u16, retry_after: Option<Duration>, body: &str) -> ModelError {
    let message = error_message(body);
    let lower = body.to_ascii_lowercase();
    let context = lower.contains("context_length_exceeded")
        || lower.contains("prompt is too long")
        || lower.contains("context window")
        || lower.contains("maximum context length")
        || lower.contains("input token count")
        || lower.contains("too many tokens");
    match status {
        _ if context && (status == 400 || status == 413) => ModelError::ContextWindow(message),
        429 => ModelError::RateLimited {
            message,
            retry_after,
        },
        408 | 409 | 500 | 502 | 503 | 504 | 529 => {
            ModelError::Retryable(format!("HTTP {status}: {message}"))
        }
        _ => ModelError::Fatal(format!("HTTP {status}: {message}")),
    }
}

/// The human part of an error body: `error.message` in the common shapes, else the
/// body itself, cut short.
pub(crate) fn error_message(body: &str) -> String {
    let parsed: Option<Value> = serde_json::from_str(body).ok();
    let found = parsed.as_ref().and_then(|v| {
        let v = if v.is_array() { v.get(0)? } else { v };
        v.pointer("/error/message")
            .or_else(|| v.get("message"))
            .and_then(Value::as_str)
            .map(String::from)
    });
    found.unwrap_or_else(|| body.chars().take(300).collect())
}

/// `retry-after` in seconds (or `retry-after-ms`), when present.
pub(crate) fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    if let Some(ms) = headers
        .get("retry-after-ms")
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
    {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    headers
        .get(reqwest::header::RETRY_AFTER)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.trim().parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}

/// A connection failure before any response: retryable.
pub(crate) fn send_error(e: reqwest::Error) -> ModelError {
    if e.is_builder() {
        ModelError::Fatal(format!("bad model endpoint: {e}"))
    } else {
        ModelError::Retryable(format!("cannot reach the model endpoint: {e}"))
    }
}

/// The HTTP client every protocol uses: rustls with ring, made once per process.
pub(crate) fn http() -> Result<reqwest::Client, ModelError> {
    static CLIENT: std::sync::OnceLock<Result<reqwest::Client, String>> =
        std::sync::OnceLock::new();
    CLIENT
        .get_or_init(|| {
            let _ = rustls::crypto::ring::default_provider().install_default();
            reqwest::Client::builder()
                .connect_timeout(Duration::from_secs(30))
                .build()
                .map_err(|e| format!("cannot make an HTTP client: {e}"))
        })
        .clone()
        .map_err(ModelError::Fatal)
}

/// A POST of `body` to `url`, to be given its credentials and then [`stream_sse`].
pub(crate) fn post(url: String, body: &Value) -> Result<reqwest::RequestBuilder, ModelError> {
    Ok(http()?.post(url).json(body))
}

/// Sends `builder` asking for an event stream and decodes the reply as it arrives;
/// every protocol streams its reply as server-sent events.
pub(crate) async fn stream_sse(
    builder: reqwest::RequestBuilder,
    decoder: &mut dyn sse::Decoder,
    cancel: &CancellationToken,
    sink: &mut (dyn FnMut(StreamEvent) + Send),
) -> Result<ModelReply, ModelError> {
    let response = send(builder.header("accept", "text/event-stream"), cancel).await?;
    sse::pump(sse::body(response), decoder, cancel, sse::IDLE, sink).await
}

/// Sends `builder`, mapping a failing status to its typed error (nothing of a body
/// was streamed yet, so the caller may retry).
pub(crate) async fn send(
    builder: reqwest::RequestBuilder,
    cancel: &CancellationToken,
) -> Result<reqwest::Response, ModelError> {
    let response = tokio::select! {
        r = builder.send() => r.map_err(send_error)?,
        _ = cancel.cancelled() => return Err(ModelError::Cancelled),
    };
    let status = response.status().as_u16();
    if (200..300).contains(&status) {
        return Ok(response);
    }
    let wait = retry_after(response.headers());
    let body = tokio::select! {
        b = response.text() => b.unwrap_or_default(),
        _ = cancel.cancelled() => return Err(ModelError::Cancelled),
    };
    Err(status_error(status, wait, &body))
}
