//! Serde types for the parts of the `codex app-server` protocol (v2, codex-cli
//! 0.171.0) the driver reads. Field names follow the schema the binary dumps
//! (`codex app-server generate-json-schema`); everything else in a message is ignored,
//! and an item or status this version does not know deserializes as `Other` rather
//! than failing the line.

use serde::Deserialize;
use serde_json::Value;

/// An item's progress.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum ItemStatus {
    /// Running.
    InProgress,
    /// Finished well.
    Completed,
    /// Finished badly.
    Failed,
    /// The user said no.
    Declined,
    /// A status this version does not know.
    #[serde(other)]
    Other,
}

/// One change of a `fileChange` item.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct FileUpdateChange {
    /// The file.
    pub path: String,
    /// `{type: add | delete | update, move_path?}`.
    #[serde(default)]
    pub kind: Value,
    /// The change as a diff (for an added file, its content).
    #[serde(default)]
    pub diff: String,
}

impl FileUpdateChange {
    /// `add`, `delete`, `update`.
    pub fn kind_name(&self) -> &str {
        self.kind["type"].as_str().unwrap_or("update")
    }
}

/// An MCP tool's result.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct McpResult {
    /// MCP content blocks.
    #[serde(default)]
    pub content: Vec<Value>,
}

/// An MCP tool's error.
#[derive(Debug, Clone, PartialEq, Deserialize)]
pub struct McpError {
    /// What went wrong.
    pub message: String,
}

/// One thread item (`item/started`, `item/completed`, and the turns of a resumed
/// thread).
#[derive(Debug, Clone, PartialEq, Deserialize)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ThreadItem {
    /// The user's message (the prompt, or a steer).
    UserMessage {
        /// Its id.
        id: String,
    },
    /// The model's reply text.
    AgentMessage {
        /// Its id.
        id: String,
        /// The whole text (empty on `item/started`).
        #[serde(default)]
        text: String,
    },
    /// A proposed plan (plan mode's `<proposed_plan>` block), markdown.
    Plan {
        /// Its id.
        id: String,
        /// The plan.
        #[serde(default)]
        text: String,
    },
    /// Reasoning.
    Reasoning {
        /// Its id.
        id: String,
        /// Summary parts.
        #[serde(default)]
        summary: Vec<Value>,
        /// Raw reasoning parts.
        #[serde(default)]
        content: Vec<Value>,
    },
    /// A shell command.
    CommandExecution {
        /// Its id (the model's call id).
        id: String,
        /// The command as run (`/bin/bash -lc '…'`).
        command: String,
        /// Where.
        #[serde(default)]
        cwd: Option<String>,
        /// Parsed actions (`{type, command}`), the readable form of the command.
        #[serde(default)]
        command_actions: Vec<Value>,
        /// Output so far.
        #[serde(default)]
        aggregated_output: Option<String>,
        /// The exit code, once exited.
        #[serde(default)]
        exit_code: Option<i64>,
        /// Progress.
        status: ItemStatus,
    },
    /// An `apply_patch`.
    FileChange {
        /// Its id.
        id: String,
        /// The files and their diffs.
        #[serde(default)]
        changes: Vec<FileUpdateChange>,
        /// Progress.
        status: ItemStatus,
    },
    /// A tool served over MCP.
    McpToolCall {
        /// Its id.
        id: String,
        /// The MCP server.
        server: String,
        /// The tool.
        tool: String,
        /// Its input.
        #[serde(default)]
        arguments: Value,
        /// Its result.
        #[serde(default)]
        result: Option<McpResult>,
        /// Its error.
        #[serde(default)]
        error: Option<McpError>,
        /// Progress.
        status: ItemStatus,
    },
    /// A tool the client registered.
    DynamicToolCall {
        /// Its id.
        id: String,
        /// The tool.
        tool: String,
        /// Its input.
        #[serde(default)]
        arguments: Value,
        /// Its output.
        #[serde(default)]
        content_items: Option<Vec<Value>>,
        /// Whether it worked.
        #[serde(default)]
        success: Option<bool>,
        /// Progress.
        status: ItemStatus,
    },
    /// A web search.
    WebSearch {
        /// Its id.
        id: String,
        /// What was searched.
        #[serde(default)]
        query: String,
        /// `{type: search | openPage | findInPage, …}`.
        #[serde(default)]
        action: Option<Value>,
    },
    /// The model looked at an image.
    ImageView {
        /// Its id.
        id: String,
        /// The file.
        #[serde(default)]
        path: String,
    },
    /// A call to another agent thread (spawn, send, wait …).
    CollabAgentToolCall {
        /// Its id.
        id: String,
        /// Which collaboration tool.
        #[serde(default)]
        tool: Value,
        /// What the other agent was asked.
        #[serde(default)]
        prompt: Option<String>,
        /// Progress (`inProgress`, `completed`, `failed`).
        #[serde(default)]
        status: Value,
    },
    /// A review (`review/start`) ended; its findings.
    ExitedReviewMode {
        /// Its id.
        id: String,
        /// What the review found, as text.
        #[serde(default)]
        review: String,
    },
    /// The context was compacted.
    ContextCompaction {
        /// Its id.
        id: String,
    },
    /// An item kind this version does not know.
    #[serde(other)]
    Other,
}

/// `item/started`, `item/completed`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ItemNotification {
    /// The item.
    pub item: ThreadItem,
    /// Its turn.
    #[serde(default)]
    pub turn_id: Option<String>,
}

/// Deltas: `item/agentMessage/delta`, `item/plan/delta`,
/// `item/commandExecution/outputDelta`, `item/reasoning/*Delta`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Delta {
    /// The item.
    pub item_id: String,
    /// The piece.
    pub delta: String,
    /// Reasoning summary part.
    #[serde(default)]
    pub summary_index: Option<u64>,
}

/// `item/reasoning/summaryPartAdded`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SummaryPart {
    /// The item.
    pub item_id: String,
    /// The part.
    #[serde(default)]
    pub summary_index: u64,
}

/// `item/fileChange/patchUpdated`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PatchUpdated {
    /// The item.
    pub item_id: String,
    /// The files now.
    #[serde(default)]
    pub changes: Vec<FileUpdateChange>,
}

/// `item/mcpToolCall/progress`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct McpProgress {
    /// The item.
    pub item_id: String,
    /// The message.
    pub message: String,
}

/// Token figures.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct TokenBreakdown {
    /// Total.
    pub total_tokens: u64,
    /// Input (cached included).
    pub input_tokens: u64,
    /// Input read from cache.
    pub cached_input_tokens: u64,
    /// Output (reasoning included).
    pub output_tokens: u64,
    /// Reasoning output.
    pub reasoning_output_tokens: u64,
}

/// A thread's token usage.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsage {
    /// The thread's running total.
    pub total: TokenBreakdown,
    /// The last model response.
    pub last: TokenBreakdown,
    /// The model's window.
    #[serde(default)]
    pub model_context_window: Option<u64>,
}

/// `thread/tokenUsage/updated`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TokenUsageUpdated {
    /// The turn it belongs to (a resumed thread reports its last turn's first).
    #[serde(default)]
    pub turn_id: Option<String>,
    /// The figures.
    pub token_usage: TokenUsage,
}

/// One step of `turn/plan/updated`.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanStep {
    /// What.
    pub step: String,
    /// `pending`, `inProgress`, `completed`.
    pub status: String,
}

/// `turn/plan/updated`.
#[derive(Debug, Clone, Deserialize)]
pub struct PlanUpdated {
    /// Why.
    #[serde(default)]
    pub explanation: Option<String>,
    /// The steps.
    #[serde(default)]
    pub plan: Vec<PlanStep>,
}

/// A turn's error.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TurnError {
    /// What went wrong.
    pub message: String,
    /// More.
    #[serde(default)]
    pub additional_details: Option<String>,
}

impl TurnError {
    /// The message with its details.
    pub fn text(&self) -> String {
        match self.additional_details.as_deref().filter(|d| !d.is_empty()) {
            Some(d) => format!("{}: {d}", self.message),
            None => self.message.clone(),
        }
    }
}

/// A turn.
#[derive(Debug, Clone, Deserialize)]
pub struct Turn {
    /// Its id.
    pub id: String,
    /// `inProgress`, `completed`, `interrupted`, `failed`.
    #[serde(default)]
    pub status: String,
    /// Why it failed.
    #[serde(default)]
    pub error: Option<TurnError>,
}

/// `turn/started`, `turn/completed`, and the `turn/start` result.
#[derive(Debug, Clone, Deserialize)]
pub struct TurnEnvelope {
    /// The turn.
    pub turn: Turn,
}

/// `error`.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorNotification {
    /// The error.
    pub error: TurnError,
    /// Whether codex retries by itself.
    #[serde(default)]
    pub will_retry: bool,
}

/// The thread of a `thread/start` / `thread/resume` / `thread/fork` result.
#[derive(Debug, Clone, Deserialize)]
pub struct Thread {
    /// Its id: Weft's session id for it.
    pub id: String,
    /// Its rollout file.
    #[serde(default)]
    pub path: Option<String>,
}

/// `thread/start`, `thread/resume` and `thread/fork` results.
#[derive(Debug, Clone, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ThreadOpened {
    /// The thread.
    pub thread: Thread,
    /// The model it runs.
    #[serde(default)]
    pub model: Option<String>,
    /// The provider serving it.
    #[serde(default)]
    pub model_provider: Option<String>,
}

/// `item/commandExecution/requestApproval`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct CommandApproval {
    /// The command's item.
    pub item_id: String,
    /// The command.
    pub command: Option<String>,
    /// Where.
    pub cwd: Option<String>,
    /// Why the agent asks.
    pub reason: Option<String>,
    /// Readable actions.
    pub command_actions: Option<Vec<Value>>,
    /// What the user may answer (absent: codex's usual four).
    pub available_decisions: Option<Vec<Value>>,
}

/// `item/fileChange/requestApproval`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct FileChangeApproval {
    /// The change's item.
    pub item_id: String,
    /// Why the agent asks.
    pub reason: Option<String>,
    /// A folder the agent wants write access under.
    pub grant_root: Option<String>,
    /// What the user may answer (absent: codex's usual four).
    pub available_decisions: Option<Vec<Value>>,
}

/// One offered answer of a question.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct QuestionOption {
    /// The answer.
    pub label: String,
    /// What it means.
    pub description: Option<String>,
}

/// One question of `item/tool/requestUserInput`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UserQuestion {
    /// Its id (the answer's key).
    pub id: String,
    /// A short header.
    pub header: String,
    /// The question.
    pub question: String,
    /// A free answer is allowed besides the options.
    pub is_other: bool,
    /// The answer is secret.
    pub is_secret: bool,
    /// Offered answers.
    pub options: Option<Vec<QuestionOption>>,
}

/// `item/tool/requestUserInput`.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct UserInputRequest {
    /// The tool call's item.
    pub item_id: String,
    /// The questions.
    pub questions: Vec<UserQuestion>,
}

/// `mcpServer/elicitation/request`: an MCP server's own form, or (`_meta.
/// codex_approval_kind == "mcp_tool_call"`) codex asking before an MCP tool runs.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub struct McpElicitation {
    /// The MCP server it is about.
    pub server_name: String,
    /// `form` (or codex's `openai/form`), or `url`.
    pub mode: String,
    /// What the server or codex says.
    pub message: String,
    /// The form's fields (a JSON schema object), for a form.
    pub requested_schema: Option<Value>,
    /// The page to open, for `url`.
    pub url: Option<String>,
    /// Codex's markers: the approval kind, the tool's arguments, what may be remembered.
    #[serde(rename = "_meta")]
    pub meta: Option<Value>,
}

impl McpElicitation {
    /// Whether this is codex asking before an MCP tool call.
    pub fn is_tool_approval(&self) -> bool {
        self.meta
            .as_ref()
            .and_then(|m| m["codex_approval_kind"].as_str())
            == Some("mcp_tool_call")
    }
}
