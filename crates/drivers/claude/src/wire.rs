//! Serde types of Claude Code's stream-json, both directions, as 2.1.197 writes them
//! (see shared/agent-protocols/claude). Every field the driver does not need is left
//! out; every field it reads is optional, so a newer CLI that adds or drops fields
//! still parses. Unknown line types, events and blocks land in `Other` variants.

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};

/// One line of the CLI's stdout.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum OutLine {
    /// `system/*`: init, status, task_started, task_notification, api_retry, …
    System(SystemLine),
    /// A raw Messages API stream event (`--include-partial-messages`).
    StreamEvent(StreamEventLine),
    /// One content block of an assistant message.
    Assistant(AssistantLine),
    /// A user message: tool results, interrupt markers, replays of our own input.
    User(UserLine),
    /// The end of one CLI turn.
    Result(ResultLine),
    /// The CLI asks the host (permissions).
    ControlRequest(ControlRequestLine),
    /// The CLI answers one of our control requests.
    ControlResponse(ControlResponseLine),
    /// The account's usage-limit window, from the API's rate-limit headers.
    RateLimitEvent(RateLimitLine),
    /// Anything else.
    #[serde(other)]
    Other,
}

/// A `system` line. Which fields are set depends on `subtype`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct SystemLine {
    /// init, status, task_started, task_progress, task_updated, task_notification,
    /// api_retry, compact_boundary, thinking_tokens, …
    pub subtype: String,
    /// The session id.
    pub session_id: Option<String>,
    /// init: the model (`claude-opus-4-8[1m]`).
    pub model: Option<String>,
    /// init: the working folder.
    pub cwd: Option<String>,
    /// init / status: the permission mode.
    #[serde(rename = "permissionMode")]
    pub permission_mode: Option<String>,
    /// status: `requesting`, `compacting` or null.
    pub status: Option<String>,
    /// task_*: the task.
    pub task_id: Option<String>,
    /// task_*: the tool call that started it.
    pub tool_use_id: Option<String>,
    /// task_started: `local_bash`, `local_agent`, …
    pub task_type: Option<String>,
    /// task_*: a description.
    pub description: Option<String>,
    /// task_notification: a summary.
    pub summary: Option<String>,
    /// api_retry: which attempt.
    pub attempt: Option<u64>,
    /// api_retry: of how many.
    pub max_retries: Option<u64>,
    /// api_retry: the delay before the next try.
    pub retry_delay_ms: Option<u64>,
    /// api_retry: the HTTP status, when there was one.
    pub error_status: Option<u64>,
    /// init: each MCP server and how its connection went.
    pub mcp_servers: Vec<McpServerLine>,
    /// init: the slash commands the CLI recognizes in this mode.
    pub slash_commands: Vec<String>,
    /// init: the tools the model is offered (MCP ones as `mcp__server__tool`).
    pub tools: Vec<String>,
}

/// One MCP server of an `init` line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct McpServerLine {
    /// Its name.
    pub name: String,
    /// `connected`, `failed`, `pending`, `needs-auth`, …
    pub status: String,
}

/// A `stream_event` line.
#[derive(Debug, Clone, Deserialize)]
pub struct StreamEventLine {
    /// The API event.
    pub event: StreamEvent,
    /// Set when the event belongs to a subagent.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
}

/// A Messages API stream event.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum StreamEvent {
    /// A message starts.
    MessageStart {
        /// The message.
        message: ApiMessageHead,
    },
    /// A block starts.
    ContentBlockStart {
        /// Its index.
        index: usize,
        /// Its head.
        content_block: Block,
    },
    /// A piece of a block.
    ContentBlockDelta {
        /// The block's index.
        index: usize,
        /// The piece.
        delta: Delta,
    },
    /// A block ends.
    ContentBlockStop {
        /// Its index.
        index: usize,
    },
    /// The stop reason and final usage.
    MessageDelta {
        /// Stop reason.
        #[serde(default)]
        delta: MessageDeltaBody,
        /// Usage so far.
        #[serde(default)]
        usage: Option<ApiUsage>,
    },
    /// The message ends.
    MessageStop,
    /// Anything else (ping, error).
    #[serde(other)]
    Other,
}

/// The head of a streamed message.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ApiMessageHead {
    /// The message id.
    pub id: String,
    /// The model that answered.
    pub model: Option<String>,
    /// Usage at the start.
    pub usage: Option<ApiUsage>,
}

/// `message_delta.delta`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct MessageDeltaBody {
    /// Why the message stopped.
    pub stop_reason: Option<String>,
}

/// A content block delta.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Delta {
    /// Reply text.
    TextDelta {
        /// The text.
        text: String,
    },
    /// Reasoning text.
    ThinkingDelta {
        /// The text.
        thinking: String,
    },
    /// Tool input JSON, in pieces.
    InputJsonDelta {
        /// A piece.
        partial_json: String,
    },
    /// Anything else (signatures, citations).
    #[serde(other)]
    Other,
}

/// Token counts as the API reports them.
#[derive(Debug, Clone, Copy, Default, Deserialize, PartialEq, Eq)]
#[serde(default)]
pub struct ApiUsage {
    /// Uncached input.
    pub input_tokens: Option<u64>,
    /// Output.
    pub output_tokens: Option<u64>,
    /// Input read from cache.
    pub cache_read_input_tokens: Option<u64>,
    /// Input written to cache.
    pub cache_creation_input_tokens: Option<u64>,
}

impl ApiUsage {
    /// Everything the request put in the context window.
    pub fn context_tokens(&self) -> u64 {
        self.input_tokens.unwrap_or(0)
            + self.cache_read_input_tokens.unwrap_or(0)
            + self.cache_creation_input_tokens.unwrap_or(0)
            + self.output_tokens.unwrap_or(0)
    }
}

/// A content block, in an assistant or user message.
#[derive(Debug, Clone, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Block {
    /// Text.
    Text {
        /// The text.
        #[serde(default)]
        text: String,
    },
    /// Visible reasoning.
    Thinking {
        /// The reasoning.
        #[serde(default)]
        thinking: String,
    },
    /// A tool call.
    ToolUse {
        /// Its id.
        id: String,
        /// The tool.
        name: String,
        /// Its input.
        #[serde(default)]
        input: Value,
    },
    /// A tool's result.
    ToolResult {
        /// The call it answers.
        tool_use_id: String,
        /// A string or blocks.
        #[serde(default)]
        content: Value,
        /// True on failure.
        #[serde(default)]
        is_error: Option<bool>,
    },
    /// An image.
    Image {
        /// Where it comes from.
        #[serde(default)]
        source: Value,
    },
    /// Anything else (redacted thinking, server tools).
    #[serde(other)]
    Other,
}

/// An `assistant` line: one block of one API message.
#[derive(Debug, Clone, Deserialize)]
pub struct AssistantLine {
    /// The message.
    pub message: AssistantMessage,
    /// Set for a subagent's message.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// The session.
    #[serde(default)]
    pub session_id: Option<String>,
}

/// The message of an `assistant` line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct AssistantMessage {
    /// Shared by every block of one API message.
    pub id: String,
    /// The model (`<synthetic>` for replies the CLI made up).
    pub model: Option<String>,
    /// Usually one block.
    pub content: Vec<Block>,
    /// Usage.
    pub usage: Option<ApiUsage>,
}

/// A `user` line.
#[derive(Debug, Clone, Deserialize)]
pub struct UserLine {
    /// The message.
    pub message: UserMessage,
    /// Set for a subagent's message.
    #[serde(default)]
    pub parent_tool_use_id: Option<String>,
    /// Structured tool result (TodoWrite's newTodos, TaskCreate's task, Write's filePath).
    #[serde(default)]
    pub tool_use_result: Option<Value>,
    /// True when this echoes a message we wrote (`--replay-user-messages`).
    #[serde(default, rename = "isReplay")]
    pub is_replay: bool,
}

/// The message of a `user` line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct UserMessage {
    /// A string or blocks.
    pub content: Value,
}

impl UserMessage {
    /// The blocks (a string content is one text block).
    pub fn blocks(&self) -> Vec<Block> {
        match &self.content {
            Value::String(s) => vec![Block::Text { text: s.clone() }],
            Value::Array(_) => serde_json::from_value(self.content.clone()).unwrap_or_default(),
            _ => Vec::new(),
        }
    }

    /// All text of the message.
    pub fn text(&self) -> String {
        content_text(&self.content)
    }
}

/// The text of a content value: a string, or its text blocks joined by newlines
/// (an image block shows as `[image]`).
pub fn content_text(content: &Value) -> String {
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            let mut out = String::new();
            for b in blocks {
                let piece = match b.get("type").and_then(Value::as_str) {
                    Some("text") => b.get("text").and_then(Value::as_str).unwrap_or_default(),
                    Some("image") => "[image]",
                    _ => "",
                };
                if piece.is_empty() {
                    continue;
                }
                if !out.is_empty() {
                    out.push('\n');
                }
                out.push_str(piece);
            }
            out
        }
        _ => String::new(),
    }
}

/// A `rate_limit_event` line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct RateLimitLine {
    /// What the API said.
    pub rate_limit_info: RateLimitInfo,
}

/// One limit window (`rate_limit_info`).
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct RateLimitInfo {
    /// `allowed`, `allowed_warning`, `rejected`.
    pub status: String,
    /// When the window resets (seconds since the epoch).
    pub resets_at: Option<f64>,
    /// `five_hour`, `seven_day`, `seven_day_opus`, `seven_day_sonnet`, `overage`.
    pub rate_limit_type: Option<String>,
    /// How much of it is used, 0–1.
    pub utilization: Option<f64>,
}

/// A `result` line.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ResultLine {
    /// success, error_during_execution, error_max_turns, …
    pub subtype: String,
    /// True on failure.
    pub is_error: bool,
    /// The final text.
    pub result: Option<String>,
    /// The session.
    pub session_id: Option<String>,
    /// Dollars so far in this process.
    pub total_cost_usd: Option<f64>,
    /// Usage of the CLI turn.
    pub usage: Option<ApiUsage>,
    /// Per model, with the context window.
    #[serde(rename = "modelUsage")]
    pub model_usage: HashMap<String, ModelUsage>,
    /// Why the CLI turn ended (completed, aborted_streaming, aborted_tools, …).
    pub terminal_reason: Option<String>,
    /// Diagnostics.
    pub errors: Vec<String>,
    /// Tool calls the host denied.
    pub permission_denials: Vec<Value>,
    /// Time spent in API calls.
    pub duration_api_ms: Option<u64>,
}

/// One model's figures in `modelUsage`.
#[derive(Debug, Clone, Copy, Default, Deserialize)]
#[serde(default)]
pub struct ModelUsage {
    /// The model's context window.
    #[serde(rename = "contextWindow")]
    pub context_window: Option<u64>,
}

/// A `control_request` line.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlRequestLine {
    /// Answer with this id.
    pub request_id: String,
    /// What is asked.
    pub request: ControlRequest,
}

/// What the CLI asks.
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(tag = "subtype", rename_all = "snake_case")]
pub enum ControlRequest {
    /// May a tool run? (Boxed: it dwarfs the other variant.)
    CanUseTool(Box<CanUseTool>),
    /// Anything else (hook callbacks, MCP messages): answered with an error.
    #[serde(other)]
    Other,
}

/// A `can_use_tool` request.
#[derive(Debug, Clone, Default, PartialEq, Deserialize)]
#[serde(default)]
pub struct CanUseTool {
    /// The tool.
    pub tool_name: String,
    /// Its input.
    pub input: Value,
    /// What the CLI says it does.
    pub description: Option<String>,
    /// Rules that would allow it from now on.
    pub permission_suggestions: Option<Value>,
    /// A path outside the allowed folders, when that is why it asks.
    pub blocked_path: Option<String>,
    /// The tool call.
    pub tool_use_id: Option<String>,
}

/// A `control_response` line.
#[derive(Debug, Clone, Deserialize)]
pub struct ControlResponseLine {
    /// The answer.
    pub response: ControlResponseBody,
}

/// The body of a `control_response`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ControlResponseBody {
    /// success or error.
    pub subtype: String,
    /// Which request.
    pub request_id: String,
    /// Why it failed.
    pub error: Option<String>,
    /// What it answers (`initialize`: commands, agents, models, …).
    pub response: Option<Value>,
}

/// A user message for stdin whose content is Messages API blocks (text, image).
pub fn user_message_blocks(content: Vec<Value>) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": content},
           "parent_tool_use_id": null, "session_id": ""})
}

/// A user message for stdin.
pub fn user_message(text: &str) -> Value {
    json!({"type": "user", "message": {"role": "user", "content": text},
           "parent_tool_use_id": null, "session_id": ""})
}

/// The interrupt control request.
pub fn interrupt_request(request_id: &str) -> Value {
    json!({"type": "control_request", "request_id": request_id,
           "request": {"subtype": "interrupt"}})
}

/// A successful control response.
pub fn control_success(request_id: &str, response: Value) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "success", "request_id": request_id, "response": response}})
}

/// A failed control response.
pub fn control_error(request_id: &str, error: &str) -> Value {
    json!({"type": "control_response", "response": {
        "subtype": "error", "request_id": request_id, "error": error}})
}

/// Serializes a stdin line (one JSON object and a newline).
pub fn encode(value: &Value) -> Vec<u8> {
    let mut out = value.to_string().into_bytes();
    out.push(b'\n');
    out
}

/// A line the host wrote, as recorded (for tests and fixtures).
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct RecordedLine {
    /// Seconds since the start.
    pub t: f64,
    /// `in`, `out`, `err` or `note`.
    pub dir: String,
    /// The line.
    pub msg: Value,
}
