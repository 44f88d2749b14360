//! The universal snapshot: everything a surface needs to draw one session's current turn.

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::command::SlashCommand;

/// Where a session's current turn stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Phase {
    /// No turn has run yet.
    #[default]
    Idle,
    /// A turn is accepted but waiting (behind another turn, or for the agent to start).
    Queued,
    /// The agent is working on the turn.
    Streaming,
    /// The last turn ended (ok, failed or stopped: see `error` and `incomplete`).
    Done,
}

/// A step's progress in a plan.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum StepStatus {
    /// Not started.
    #[default]
    Pending,
    /// Being worked on.
    InProgress,
    /// Finished.
    Completed,
}

/// One step of an agent's plan.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PlanStep {
    /// What the step does.
    pub text: String,
    /// Its progress.
    pub status: StepStatus,
}

/// An agent's plan (TodoWrite, codex plan updates, ACP plans).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Plan {
    /// Why the plan is what it is, when the agent says.
    pub explanation: Option<String>,
    /// The steps in order.
    pub steps: Vec<PlanStep>,
}

/// How a tool call is going.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ToolStatus {
    /// Started, no result yet.
    #[default]
    Running,
    /// Finished successfully.
    Done,
    /// Finished with an error (or was denied).
    Failed,
}

/// A normalized kind for a tool call, only where the projection from the agent's own
/// tool vocabulary is lossless; everything else is `other`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ToolKind {
    /// Reads a file.
    Read,
    /// Writes a whole file.
    Write,
    /// Edits part of a file.
    Edit,
    /// Runs a shell command.
    Shell,
    /// Searches files or code.
    Search,
    /// Fetches from the web.
    Fetch,
    /// Updates a plan or todo list.
    Plan,
    /// Delegates to a subagent.
    Task,
    /// A tool served over MCP.
    Mcp,
    /// Anything else.
    #[default]
    Other,
}

/// One tool call, from start to finish. The agent's native name and input are kept as is.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolCall {
    /// The agent's id for the call (stable across its updates).
    pub id: String,
    /// The agent's own tool name (`Bash`, `exec_command`, …).
    pub name: String,
    /// One human line saying what the call does.
    pub summary: String,
    /// The agent's input, unchanged.
    pub input: Value,
    /// The result text, once there is one.
    pub result: Option<String>,
    /// Progress.
    pub status: ToolStatus,
    /// Normalized kind.
    pub kind: ToolKind,
    /// The subagent (a `task` call's id) this call ran under, if any.
    pub parent_id: Option<String>,
    /// The files the call changes (or asks to change), each as a unified diff, computed
    /// by the driver from the agent's own edit format; empty for a call that changes
    /// none. A surface draws diffs from this only.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(optional, as = "Option<Vec<FileChange>>")]
    pub changes: Vec<FileChange>,
}

/// How a tool call changes a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ChangeKind {
    /// Creates it.
    Add,
    /// Changes it in place.
    #[default]
    Modify,
    /// Removes it.
    Delete,
}

/// One file a tool call changes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct FileChange {
    /// The file, as the agent named it (absolute, or relative to the workspace).
    pub path: String,
    /// Added, modified or deleted.
    pub kind: ChangeKind,
    /// The change as a unified diff (`--- a/…`, `+++ b/…`, `@@` hunks); an added file
    /// is all `+` lines, a deleted one all `-`.
    pub diff: String,
}

/// A subagent the agent delegated to.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SubAgent {
    /// Its id (for Claude, the Task tool call's id; nested calls carry it as `parentId`).
    pub id: String,
    /// The subagent's type or name.
    pub name: String,
    /// What it was asked to do.
    pub summary: String,
    /// Progress.
    pub status: ToolStatus,
    /// Its final report or error.
    pub result: Option<String>,
}

/// Token and cost accounting for the turn.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Usage {
    /// Input tokens billed.
    #[ts(type = "number | null")]
    pub input_tokens: Option<u64>,
    /// Output tokens billed.
    #[ts(type = "number | null")]
    pub output_tokens: Option<u64>,
    /// Input tokens read from cache.
    #[ts(type = "number | null")]
    pub cached_input_tokens: Option<u64>,
    /// Tokens occupying the context window now.
    #[ts(type = "number | null")]
    pub context_used_tokens: Option<u64>,
    /// `contextUsedTokens` as a percentage of the model's window.
    pub context_percent: Option<f64>,
    /// Cost in US dollars, when the agent reports it.
    pub cost_usd: Option<f64>,
    /// Who served the model (anthropic, openai, a custom provider…).
    pub provider_name: Option<String>,
}

/// Photo or document: how a surface shows an artifact.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ArtifactKind {
    /// An image.
    Photo,
    /// Any other file.
    #[default]
    Document,
}

/// A file or link the agent produced.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Artifact {
    /// A URL, when the artifact lives on the web.
    pub url: Option<String>,
    /// A local path, when it is a file.
    pub path: Option<String>,
    /// The file's name.
    pub file_name: String,
    /// Its MIME type, when known.
    pub mime: Option<String>,
    /// Photo or document.
    pub kind: ArtifactKind,
    /// A caption.
    pub caption: Option<String>,
}

/// What an interaction asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "kebab-case")]
pub enum InteractionKind {
    /// One or more questions for the user.
    #[default]
    UserInput,
    /// May a tool run?
    Permission,
    /// Confirm a step (e.g. leave plan mode).
    Confirmation,
}

/// Free text or a choice.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum QuestionType {
    /// Free text.
    #[default]
    Text,
    /// One of `choices`.
    Select,
}

/// One offered answer.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Choice {
    /// What the user sees.
    pub label: String,
    /// What goes back to the agent.
    pub value: String,
}

/// One question inside an interaction.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Question {
    /// Id, unique within the interaction.
    pub id: String,
    /// The question.
    pub text: String,
    /// Free text or select.
    #[serde(rename = "type")]
    pub kind: QuestionType,
    /// The choices of a select question.
    pub choices: Vec<Choice>,
    /// Several of `choices` may be picked (Claude's `multiSelect`, an elicitation's
    /// multi-select array); the answer is the list of those picked.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub multiple: bool,
    /// Free text is taken besides the choices (Claude's and Codex's "Other"); for a
    /// text question it is the answer itself.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    #[ts(as = "Option<bool>", optional)]
    pub free_text: bool,
}

/// A pending human-in-the-loop request: data until answered, cancelled or expired.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Interaction {
    /// Id to answer it by.
    pub prompt_id: String,
    /// Question, permission or confirmation.
    pub kind: InteractionKind,
    /// One line saying what is asked.
    pub title: String,
    /// More context (a plan's text, a command's description), when there is some.
    pub detail: Option<String>,
    /// For a permission: the tool that wants to run.
    pub tool_name: Option<String>,
    /// For a permission: that tool's input.
    pub tool_input: Option<Value>,
    /// The questions; a permission or confirmation has one select question.
    pub questions: Vec<Question>,
    /// For a shell command's permission: Weft's verdict on the command, whichever
    /// agent asked (a surface shows a dangerous one in red with its reasons; a
    /// headless `--yes` does not allow a dangerous one).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub verdict: Option<CommandVerdict>,
}

/// How risky Weft's shell classifier judges a command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "lowercase")]
pub enum CommandRisk {
    /// Provably read-only.
    Safe,
    /// Not proven either way.
    #[default]
    Unknown,
    /// Destructive, hidden or reaching past the workspace (see the reasons).
    Dangerous,
}

impl CommandRisk {
    /// Its lower-case name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Safe => "safe",
            Self::Unknown => "unknown",
            Self::Dangerous => "dangerous",
        }
    }
}

/// Weft's judgement of the shell command a permission would run.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct CommandVerdict {
    /// The command line judged.
    pub command: String,
    /// Safe, unknown or dangerous.
    pub verdict: CommandRisk,
    /// Why, one reason a line (what makes it dangerous or not provably safe).
    pub reasons: Vec<String>,
}

/// A prompt waiting for the running turn to end.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct QueuedPrompt {
    /// The task it will run as.
    pub task_id: String,
    /// Its text.
    pub prompt: String,
    /// True when it was sent as a steer the agent could not take mid-turn.
    pub steer: bool,
}

/// One session's current turn, accumulated from driver events.
///
/// `text` and `reasoning` grow by appending; every other field is replaced as a whole.
/// `activity` is derived by the kernel from `toolCalls` and `subAgents`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct UniversalSnapshot {
    /// Where the turn stands.
    pub phase: Phase,
    /// The turn's task id.
    pub task_id: Option<String>,
    /// The agent's own session id (what resume uses).
    pub session_id: Option<String>,
    /// The agent id (`echo`, `claude`, …): the one that runs (or ran) this turn, the one
    /// a surface shows as the session's.
    pub agent: String,
    /// The agent the session's record names, only when it is not `agent`: a change of
    /// agent is in flight (asked for, its first turn not yet run) or failed (the new
    /// agent did not start and the record is back on the old one, while this turn
    /// shows the agent that failed).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub recorded_agent: Option<String>,
    /// The model asked for or reported.
    pub model: Option<String>,
    /// The reasoning effort asked for.
    pub effort: Option<String>,
    /// The prompt that started the turn.
    pub prompt: String,
    /// The files attached to the prompt (absolute paths).
    pub attachments: Vec<String>,
    /// The reply so far.
    pub text: String,
    /// The agent's visible reasoning so far.
    pub reasoning: String,
    /// One line per tool call and subagent, derived by the kernel.
    pub activity: String,
    /// The plan, when the agent keeps one.
    pub plan: Option<Plan>,
    /// Every tool call of the turn, in order of first appearance.
    pub tool_calls: Vec<ToolCall>,
    /// Subagents of the turn.
    pub sub_agents: Vec<SubAgent>,
    /// Usage, when reported.
    pub usage: Option<Usage>,
    /// Files and links produced.
    pub artifacts: Vec<Artifact>,
    /// Pending questions and permissions.
    pub interactions: Vec<Interaction>,
    /// Prompts waiting behind this turn.
    pub queued: Vec<QueuedPrompt>,
    /// Notes about how the turn went (a steer injected or queued, a stop, a recovery).
    pub notices: Vec<String>,
    /// The MCP servers the agent has for this session and how each is doing (Weft's
    /// and the agent's own), as the agent reported them.
    pub mcp_servers: Vec<crate::McpServerStatus>,
    /// The slash commands the agent accepts, as it last reported them.
    pub commands: Vec<SlashCommand>,
    /// What the session runs without that its agent can do, and why (its session
    /// could not be reloaded, it runs headless, an MCP server did not start, no
    /// sandbox). A lasting state: carried from turn to turn on the same agent until it
    /// clears.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<crate::Degraded>>", optional)]
    pub degraded: Vec<crate::Degraded>,
    /// What the turn changed on disk, from the checkpoints before and after it (set
    /// when the turn ends; none while it runs, and when the folder is not
    /// checkpointed: see `degraded`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub turn_diff: Option<crate::TurnDiff>,
    /// Why the turn failed.
    pub error: Option<String>,
    /// The account's limit window this turn found used up (`rejected`), when one was:
    /// the app offers "switch account and continue" (`switchAccount` with `resume`).
    pub limit_hit: Option<crate::LimitWindow>,
    /// True when the turn did not run to its natural end (stopped, crashed, cut off).
    pub incomplete: bool,
    /// True while this turn is the agent's own terminal, open in the kernel: a client
    /// attaches to it (`attachTerminal`) instead of opening another.
    pub terminal: bool,
    /// When the turn started (ms since the epoch).
    #[ts(type = "number | null")]
    pub started_at: Option<i64>,
    /// When anything last changed (ms since the epoch).
    #[ts(type = "number")]
    pub updated_at: i64,
}
