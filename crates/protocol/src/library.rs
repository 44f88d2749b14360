//! The session library on the wire: every session, managed by Weft or found in an
//! agent's own store, listed, searched, opened page by page, and its usage rolled up.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::snapshot::{Phase, UniversalSnapshot};

/// Who keeps a session's record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Origin {
    /// Only the agent's own store has it (its key is `agent:<native id>`).
    Native,
    /// Weft runs it.
    Managed,
}

/// One session in the library.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LibrarySession {
    /// Its key: a managed session's, or `agent:<native id>`.
    pub session_key: String,
    /// Native or managed.
    pub origin: Origin,
    /// Its agent id.
    pub agent: String,
    /// The agent's own session id, once known.
    pub session_id: Option<String>,
    /// Its title.
    pub title: String,
    /// The folder it ran in, when known.
    pub workdir: Option<String>,
    /// The git branch it ran on, when recorded.
    pub git_branch: Option<String>,
    /// The model last used.
    pub model: Option<String>,
    /// A managed session's latest turn's phase.
    pub phase: Option<Phase>,
    /// Turns (prompts).
    pub turns: u32,
    /// Messages (prompts and replies), where counted.
    pub messages: u32,
    /// First activity (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// Last activity (ms since the epoch).
    #[ts(type = "number")]
    pub updated_at: i64,
    /// Input tokens (not counting cache reads and writes).
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Output tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Input tokens read from cache.
    #[ts(type = "number")]
    pub cache_read_tokens: u64,
    /// Input tokens written to cache.
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    /// The agent's file is gone (Claude deletes old transcripts); what was indexed stays.
    pub source_gone: bool,
    /// Archived (hidden from the default list).
    pub archived: bool,
    /// Pinned (listed first).
    pub pinned: bool,
    /// The session it was forked from or runs under, when known.
    pub parent_key: Option<String>,
    /// How it relates to its parent: `fork`, `subagent`.
    pub relation: Option<String>,
    /// The agent home its file lives in.
    pub home: Option<String>,
    /// The account it belongs to.
    pub account: Option<String>,
    /// The git worktree Weft made for it, when it runs in one (filled by the daemon).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub worktree: Option<crate::SessionWorktree>,
}

/// Which sessions to list.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct LibraryQuery {
    /// Only sessions run in this folder.
    pub workdir: Option<String>,
    /// Only this agent's.
    pub agent: Option<String>,
    /// Only native or only managed ones.
    pub origin: Option<Origin>,
    /// Archived ones too.
    pub archived: bool,
    /// At most this many (default 200).
    pub limit: Option<u32>,
    /// Skip this many first (paging).
    pub offset: Option<u32>,
}

/// Where to search and how much to return.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct LibrarySearch {
    /// Words to find (each as a substring, case-insensitive); `"quoted words"` as a phrase.
    pub query: String,
    /// Only this agent's sessions.
    pub agent: Option<String>,
    /// Only sessions run in this folder.
    pub workdir: Option<String>,
    /// Only text from this time on (ms since the epoch).
    #[ts(type = "number | null")]
    pub since: Option<i64>,
    /// Only text before this time (ms since the epoch).
    #[ts(type = "number | null")]
    pub until: Option<i64>,
    /// At most this many sessions (default 50).
    pub limit: Option<u32>,
}

/// A session that matches a search, at its best-matching excerpt.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LibraryHit {
    /// The session.
    pub session_key: String,
    /// Native or managed.
    pub origin: Origin,
    /// Its agent.
    pub agent: String,
    /// Its title.
    pub title: String,
    /// Its folder.
    pub workdir: Option<String>,
    /// A managed turn's task id.
    pub task_id: Option<String>,
    /// The turn (1-based) the excerpt is in.
    pub turn: Option<u32>,
    /// The byte offset of a native excerpt's record in the agent's file.
    #[ts(type = "number | null")]
    pub offset: Option<u64>,
    /// `prompt`, `reply`, `tool` or `turn` (a managed turn).
    pub kind: String,
    /// The excerpt around the match, each match between `«` and `»`.
    pub snippet: String,
    /// When (ms since the epoch).
    #[ts(type = "number")]
    pub at: i64,
}

/// Some turns of a session's transcript.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TranscriptPage {
    /// The session.
    pub session_key: String,
    /// How many turns it has.
    pub total: u32,
    /// The first turn on this page (0-based).
    pub start: u32,
    /// The turns, oldest first.
    pub turns: Vec<UniversalSnapshot>,
    /// The agent's file is gone: only the indexed excerpts remain.
    pub source_gone: bool,
}

/// How far the library's indexer is.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct LibraryProgress {
    /// Indexing now.
    pub running: bool,
    /// Files the current (or last) pass reads.
    #[ts(type = "number")]
    pub files_total: u64,
    /// Of those, read.
    #[ts(type = "number")]
    pub files_done: u64,
    /// Bytes the current (or last) pass reads.
    #[ts(type = "number")]
    pub bytes_total: u64,
    /// Of those, read.
    #[ts(type = "number")]
    pub bytes_done: u64,
    /// Passes finished since the daemon started (0: the first is still running).
    #[ts(type = "number")]
    pub sweeps: u64,
}

/// What usage is grouped by.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum UsageBy {
    /// Calendar day (UTC).
    #[default]
    Day,
    /// ISO week (UTC).
    Week,
    /// Calendar month (UTC).
    Month,
    /// Model.
    Model,
    /// Agent.
    Agent,
    /// Account (agent home).
    Account,
    /// Workspace folder.
    Workspace,
    /// Claude's 5-hour billing blocks: activity grouped into windows of five hours
    /// from the hour of a block's first message (each row carries `block`).
    Block,
}

/// Usage of one group.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageRow {
    /// The group: a day, week, month, model, agent, account or folder.
    pub key: String,
    /// Model calls counted (each once).
    #[ts(type = "number")]
    pub calls: u64,
    /// Input tokens (not counting cache reads and writes).
    #[ts(type = "number")]
    pub input_tokens: u64,
    /// Output tokens.
    #[ts(type = "number")]
    pub output_tokens: u64,
    /// Input tokens read from cache.
    #[ts(type = "number")]
    pub cache_read_tokens: u64,
    /// Input tokens written to cache.
    #[ts(type = "number")]
    pub cache_write_tokens: u64,
    /// Cost in US dollars (API prices) of the calls whose model has a known price;
    /// none when no model of the group has one.
    pub cost_usd: Option<f64>,
    /// Models of the group with no known price (their calls are not in `costUsd`).
    pub unpriced_models: Vec<String>,
    /// Cost by model (priced models only), for a stacked chart.
    pub cost_by_model: Vec<ModelCost>,
    /// Cache reads over all input; none when there was no input.
    pub cache_hit_rate: Option<f64>,
    /// The billing block this row is (grouped `by: block` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub block: Option<UsageBlock>,
}

/// One of Claude's 5-hour billing blocks.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct UsageBlock {
    /// When it starts (ms; the hour of its first message).
    #[ts(type = "number")]
    pub start: i64,
    /// When it ends (ms; `start` + 5 hours).
    #[ts(type = "number")]
    pub end: i64,
    /// Its first and last model call (ms).
    #[ts(type = "number")]
    pub first_at: i64,
    /// See `firstAt`.
    #[ts(type = "number")]
    pub last_at: i64,
    /// It has not ended yet.
    pub active: bool,
    /// Tokens (input, output, cache reads and writes) per minute between its first and
    /// last call; none with a single call.
    pub tokens_per_minute: Option<f64>,
    /// Cost per hour over the same span (priced models only).
    pub cost_per_hour: Option<f64>,
    /// The active block's tokens at its end if the burn rate holds.
    #[ts(type = "number | null")]
    pub projected_tokens: Option<u64>,
    /// The active block's cost at its end if the burn rate holds.
    pub projected_cost_usd: Option<f64>,
}

/// One model's share of a group's cost.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelCost {
    /// The model.
    pub model: String,
    /// Its cost in US dollars.
    pub cost_usd: f64,
}

/// What `exportSession` writes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum ExportFormat {
    /// A readable document: a heading, then each turn's prompt, reply and tool calls.
    #[default]
    Markdown,
    /// `{"session": LibrarySession, "turns": [UniversalSnapshot, …]}`, pretty-printed.
    Json,
}

/// An export written to a file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ExportWritten {
    /// Where.
    pub path: String,
    /// Its size.
    #[ts(type = "number")]
    pub bytes: u64,
}

/// Something done to a session's record.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum SessionAction {
    /// Give it a title of the user's own.
    Rename {
        /// The title.
        title: String,
    },
    /// Hide it from the default list.
    Archive,
    /// Show it again.
    Unarchive,
    /// List it first.
    Pin,
    /// Stop listing it first.
    Unpin,
    /// Forget Weft's record of it; with `file`, delete the agent's own file too.
    Delete {
        /// Also delete the agent's session file.
        file: bool,
    },
}
