//! The verbs' requests and replies, shared by every surface (Tauri IPC, WebSocket, CLI).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::snapshot::{Phase, UniversalSnapshot};

/// Start a turn. Answered by [`PromptAccepted`]; progress arrives as patches.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct PromptRequest {
    /// What to ask.
    pub prompt: String,
    /// Agent id for a new session (default: the echo agent); ignored with `sessionKey`.
    pub agent: Option<String>,
    /// Continue this session; a new one is made when absent.
    pub session_key: Option<String>,
    /// The workspace folder the agent works in (default: the surface's current folder).
    pub workdir: Option<String>,
    /// Model to ask for.
    pub model: Option<String>,
    /// Reasoning effort to ask for.
    pub effort: Option<String>,
    /// Paths of files to attach.
    pub attachments: Vec<String>,
    /// The account to run this turn (and the session's next ones) on; absent: the
    /// session's account, else the agent's own login (ambient).
    #[ts(optional = nullable)]
    pub account: Option<String>,
    /// The domain pack of Weft's own agent (`native`): `coding` (default), `notes`,
    /// `data` or a declarative pack from `.weft/packs/`; the session keeps it.
    #[ts(optional = nullable)]
    pub pack: Option<String>,
    /// MCP servers this session turns on (`true`) or off, from this turn on (see
    /// `weft mcp list`).
    #[ts(optional = nullable)]
    pub mcp: Option<Box<BTreeMap<String, bool>>>,
    /// A new session only: make a git worktree (branch `weft/<name>`) of the workspace's
    /// repository and run the session there, with its own port range.
    #[ts(optional = nullable)]
    pub worktree: Option<Box<crate::WorktreeRequest>>,
}

/// Reply to [`PromptRequest`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PromptAccepted {
    /// The session the turn runs in.
    pub session_key: String,
    /// The turn's task id.
    pub task_id: String,
}

/// Open an agent's own terminal UI for a session (new when `sessionKey` is absent).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct OpenTerminalRequest {
    /// Agent id for a new session (default: the echo agent); ignored with `sessionKey`.
    pub agent: Option<String>,
    /// The session whose conversation the terminal continues.
    pub session_key: Option<String>,
    /// The workspace folder for a new session.
    pub workdir: Option<String>,
    /// Model to ask for.
    pub model: Option<String>,
    /// The terminal's width in columns (default 80).
    pub cols: Option<u16>,
    /// The terminal's height in rows (default 24).
    pub rows: Option<u16>,
    /// The account to run it on (as [`PromptRequest::account`]).
    #[ts(optional = nullable)]
    pub account: Option<String>,
}

/// How an interaction is answered.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum InteractAction {
    /// One of the offered choices (`value` is the choice's value).
    Select,
    /// Free text (`value`).
    Text,
    /// Decline to answer, letting the agent go on without.
    Skip,
    /// Withdraw the request; the agent is told it was cancelled.
    Cancel,
}

/// The answer to one pending interaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InteractionResponse {
    /// How it was answered.
    pub action: InteractAction,
    /// The answer to a single question.
    pub value: Option<String>,
    /// Answers keyed by question id, for an interaction with several questions.
    pub answers: BTreeMap<String, String>,
    /// Several choices keyed by question id (a question that allows several), the
    /// values picked in order; for that question it replaces `answers` and `value`.
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, Vec<String>>>", optional)]
    pub selected: BTreeMap<String, Vec<String>>,
    /// Free text keyed by question id, given besides or instead of a choice (the
    /// "Other" answer of a question that allows free text).
    #[serde(default, skip_serializing_if = "BTreeMap::is_empty")]
    #[ts(as = "Option<BTreeMap<String, String>>", optional)]
    pub texts: BTreeMap<String, String>,
}

impl InteractionResponse {
    /// A cancellation.
    pub fn cancel() -> Self {
        Self {
            action: InteractAction::Cancel,
            value: None,
            answers: BTreeMap::new(),
            selected: BTreeMap::new(),
            texts: BTreeMap::new(),
        }
    }

    /// A single selected value.
    pub fn select(value: impl Into<String>) -> Self {
        Self {
            action: InteractAction::Select,
            value: Some(value.into()),
            answers: BTreeMap::new(),
            selected: BTreeMap::new(),
            texts: BTreeMap::new(),
        }
    }

    /// What was picked or typed: the single `value`, else the first of `answers` (an
    /// interaction of one question answered by its id).
    pub fn picked(&self) -> Option<&str> {
        self.value
            .as_deref()
            .or_else(|| self.answers.values().next().map(String::as_str))
    }

    /// The answer to question `id`: from `answers`, else the single `value`.
    pub fn answer_for(&self, id: &str) -> Option<&str> {
        self.answers
            .get(id)
            .or(self.value.as_ref())
            .map(String::as_str)
    }

    /// Everything given for question `id`: the choices picked (from `selected`, else
    /// the one answer of [`Self::answer_for`]) and the free text, if any.
    pub fn given(&self, id: &str) -> Given {
        let choices = match self.selected.get(id) {
            Some(several) => several.clone(),
            None => self.answer_for(id).map(String::from).into_iter().collect(),
        };
        Given {
            choices,
            text: self.texts.get(id).cloned().filter(|t| !t.trim().is_empty()),
        }
    }
}

/// What was given for one question ([`InteractionResponse::given`]).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Given {
    /// The choices picked (or the one answer, which may be text for a text question).
    pub choices: Vec<String>,
    /// Free text given besides them.
    pub text: Option<String>,
}

impl Given {
    /// Choices then text, in one list.
    pub fn all(&self) -> Vec<String> {
        self.choices
            .iter()
            .cloned()
            .chain(self.text.clone())
            .collect()
    }

    /// Whether nothing was given.
    pub fn is_empty(&self) -> bool {
        self.choices.is_empty() && self.text.is_none()
    }
}

/// Values of a permission interaction's choices, shared by drivers and surfaces.
pub mod permission {
    /// Let the tool run this once.
    pub const ALLOW: &str = "allow";
    /// Let the tool run, and do not ask again in this session.
    pub const ALLOW_SESSION: &str = "allowSession";
    /// Refuse.
    pub const DENY: &str = "deny";
    /// Let the tool run, and write an allow rule for the command's prefix into the
    /// workspace's `.weft/permissions.json`: a Weft rule, so it then answers the same
    /// request from every agent.
    pub const ALLOW_PREFIX: &str = "allowPrefix";
}

/// Answer an interaction.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InteractRequest {
    /// The session it is pending in.
    pub session_key: String,
    /// Its id.
    pub prompt_id: String,
    /// The answer.
    #[serde(flatten)]
    pub response: InteractionResponse,
}

/// What a driver can do; declared, not guessed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Capabilities {
    /// Takes a message into a running turn.
    pub steer: bool,
    /// Asks questions and permissions.
    pub interact: bool,
    /// Continues an earlier conversation by its session id.
    pub resume: bool,
    /// Has its own terminal UI for the PTY rail.
    pub tui: bool,
}

/// One agent as a surface lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentInfo {
    /// Its id (`echo`, `claude`, …).
    pub id: String,
    /// Its display name.
    pub name: String,
    /// Whether its binary is there.
    pub installed: bool,
    /// Its version, when installed.
    pub version: Option<String>,
    /// What it can do.
    pub capabilities: Capabilities,
    /// Why it is not usable, when it is not.
    pub problem: Option<String>,
    /// What a surface needs to know of it beyond its capabilities (its spec's facts), so
    /// a surface names no agent id.
    #[serde(default)]
    pub facts: AgentFacts,
}

/// What a surface needs to know of an agent: its accounts, packs, what applies to it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AgentFacts {
    /// Whether it takes accounts at all (a built-in agent may not).
    pub accounts: bool,
    /// Its own account kinds, in the order the add dialog offers them; empty with
    /// `accounts`: an ACP agent's `env` account (named variables).
    pub account_kinds: Vec<AccountKindInfo>,
    /// The packs a new session can start with, the default first; empty: none.
    pub packs: Vec<String>,
    /// Whether a turn's changes can be undone (Weft applied them itself).
    pub undo: bool,
    /// Whether it takes attachments.
    pub attachments: bool,
    /// Whether it forks a conversation at a turn.
    pub fork_at_turn: bool,
    /// The slash commands it takes whatever the session (the native agent's own), for
    /// the `/` menu before a turn has reported the session's.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    #[ts(as = "Option<Vec<crate::command::SlashCommand>>", optional)]
    pub commands: Vec<crate::command::SlashCommand>,
}

/// One kind of account an agent takes, as the add dialog needs it.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AccountKindInfo {
    /// `login`, `api-key`, …
    pub id: String,
    /// Logs in to a home of its own (no secret).
    pub login: bool,
    /// `required`, `optional` or `no`.
    pub secret: String,
    /// `required`, `optional` or `no`.
    pub base_url: String,
    /// The wire protocols it speaks, one of which it needs; empty: none.
    pub protocols: Vec<String>,
}

/// A model an agent offers.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ModelInfo {
    /// What to pass as `model`.
    pub id: String,
    /// What to show.
    pub label: String,
    /// The agent's default.
    pub default: bool,
}

/// A tool offered to agents through the ToolProvider port.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ToolInfo {
    /// Its name.
    pub name: String,
    /// What it does.
    pub description: String,
    /// The MCP server it comes from, for an MCP tool.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub server: Option<String>,
}

/// A skill from the catalog.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SkillInfo {
    /// Its name.
    pub name: String,
    /// What it is for.
    pub description: String,
    /// Where it lives, when on disk.
    pub path: Option<String>,
    /// `global` (`~/.weft/skills`) or `workspace` (`.weft/skills`), for a skill placed
    /// in Weft.
    #[serde(default)]
    pub source: Option<String>,
    /// False when turned off (no agent is given it).
    #[serde(default = "yes")]
    pub enabled: bool,
    /// The user's own skills of the same name in an agent's folder: they keep the
    /// name there, and this one is not linked in.
    #[serde(default)]
    pub conflicts: Vec<String>,
}

fn yes() -> bool {
    true
}

/// A past turn whose prompt or reply matched a transcript search.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    /// The session the turn belongs to.
    pub session_key: String,
    /// The turn's task id.
    pub task_id: String,
    /// A few words around the match from the prompt or the reply, each matched term
    /// between `«` and `»`.
    pub snippet: String,
}

/// A session as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionInfo {
    /// Its key.
    pub session_key: String,
    /// Its agent id.
    pub agent: String,
    /// The agent's own session id, once known.
    pub session_id: Option<String>,
    /// A title (the first prompt, shortened).
    pub title: String,
    /// The workspace folder.
    pub workdir: String,
    /// The model last asked for.
    pub model: Option<String>,
    /// The phase of its latest turn.
    pub phase: Phase,
    /// The account its turns run on (none: the agent's own login).
    #[serde(default)]
    #[ts(optional = nullable)]
    pub account: Option<String>,
    /// How many turns it has had.
    pub turns: u32,
    /// Created (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// Last changed (ms since the epoch).
    #[ts(type = "number")]
    pub updated_at: i64,
    /// The user pinned it (`weft sessions pin`, the app): listed first.
    #[serde(default)]
    pub pinned: bool,
    /// The user archived it: listed only when archived ones are asked for.
    #[serde(default)]
    pub archived: bool,
    /// The git worktree Weft made for it, when it runs in one.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub worktree: Option<crate::SessionWorktree>,
}

/// The whole snapshot of a session with the seq it is current at; what a late or
/// gapped subscriber starts from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SnapshotAt {
    /// The session.
    pub session_key: String,
    /// The last patch folded into `snapshot` (0 before any).
    #[ts(type = "number")]
    pub seq: u64,
    /// The snapshot.
    pub snapshot: UniversalSnapshot,
}

/// Where a steer went.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum SteerOutcome {
    /// Handed to the running turn.
    Injected,
    /// Queued as the next turn (nothing running, or the agent cannot take it mid-turn).
    Queued,
}

/// A session as the store keeps it (the port between the kernel and any store).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SessionRecord {
    /// `agent:id`.
    pub session_key: String,
    /// Agent id.
    pub agent: String,
    /// The agent's own session id, once known.
    pub session_id: Option<String>,
    /// Workspace folder (absolute).
    pub workdir: String,
    /// Title: the first prompt, shortened.
    pub title: String,
    /// Model last asked for.
    pub model: Option<String>,
    /// Effort last asked for.
    pub effort: Option<String>,
    /// Created (ms since the epoch).
    pub created_at: i64,
    /// Last changed (ms since the epoch).
    pub updated_at: i64,
    /// The account its turns run on (none: the agent's own login).
    #[serde(default)]
    pub account: Option<String>,
    /// Where it was forked from: until the agent has a session of its own, its first
    /// turn starts one from there with the agent's own fork.
    #[serde(default)]
    pub fork: Option<ForkOrigin>,
    /// A change of agent no turn has confirmed yet: what the session ran on before it,
    /// restored exactly when the switch is taken back or the new agent does not start.
    #[serde(default)]
    pub switch: Option<PendingSwitch>,
}

/// What a session ran on before a change of agent, kept until the new agent's first
/// turn gives it a session of its own (then dropped) or the switch is taken back.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PendingSwitch {
    /// The agent it ran on.
    pub agent: String,
    /// That agent's own session id.
    #[serde(default)]
    pub session_id: Option<String>,
    /// Its model.
    #[serde(default)]
    pub model: Option<String>,
    /// Its effort.
    #[serde(default)]
    pub effort: Option<String>,
    /// Its account (none: the agent's own login).
    #[serde(default)]
    pub account: Option<String>,
    /// Where it was forked from, if its first turn had not yet forked.
    #[serde(default)]
    pub fork: Option<ForkOrigin>,
    /// The handover the new agent's first turn starts from.
    #[serde(default)]
    pub handover: Option<String>,
}

/// The point a session was forked from, in the agent's own terms, so its first turn
/// asks the agent for the fork (Claude: `--resume PARENT --fork-session
/// [--resume-session-at UUID]`; Codex: app-server `thread/fork`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ForkOrigin {
    /// The session key it was forked from.
    pub parent_key: String,
    /// The parent's agent session id.
    pub parent_id: String,
    /// The last point of the parent's history kept (Claude: the uuid of the last
    /// assistant record; Codex: the last turn's id); none: all of it.
    #[serde(default)]
    pub at: Option<String>,
    /// How many of the parent's turns the fork keeps.
    #[serde(default)]
    pub turns: u32,
    /// The agent session id the fork is to get, where the agent takes one from outside
    /// (Claude's `--session-id`); none: the agent picks it.
    #[serde(default)]
    pub session_id: Option<String>,
}

impl SessionRecord {
    /// The record as listed, with its latest turn's phase and its turn count.
    pub fn info(&self, phase: Phase, turns: u32) -> SessionInfo {
        SessionInfo {
            session_key: self.session_key.clone(),
            agent: self.agent.clone(),
            session_id: self.session_id.clone(),
            title: self.title.clone(),
            workdir: self.workdir.clone(),
            model: self.model.clone(),
            phase,
            account: self.account.clone(),
            turns,
            created_at: self.created_at,
            updated_at: self.updated_at,
            pinned: false,
            archived: false,
            worktree: None,
        }
    }
}

/// A question or permission as a store keeps it from the moment it is asked.
#[derive(Debug, Clone, PartialEq)]
pub struct AskedInteraction {
    /// Its id.
    pub prompt_id: String,
    /// The session.
    pub session_key: String,
    /// The turn that asked.
    pub task_id: String,
    /// What was asked.
    pub interaction: crate::snapshot::Interaction,
    /// When (ms since the epoch).
    pub created_at: i64,
    /// When it expires unanswered, if ever.
    pub expires_at: Option<i64>,
}
