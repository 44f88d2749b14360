//! The messages every client and the kernel service exchange: one request enum that
//! names every verb and one server message enum.
//!
//! A connection carries JSON messages ([`ClientMessage`] up, [`ServerMessage`] down)
//! and binary terminal frames ([`crate::TerminalFrame`] down, [`crate::TerminalInput`]
//! up, in `terminal_frame.rs`). The first
//! request on a connection is [`ClientRequest::Hello`]; on a WebSocket it also carries
//! the token (never in a URL).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::account::AddAccountRequest;
use crate::error::WireError;
use crate::library::{ExportFormat, LibraryQuery, LibrarySearch, SessionAction, UsageBy};
use crate::patch::PatchEvent;
use crate::snapshot::{InteractionKind, Question};
use crate::wire::{InteractRequest, InteractionResponse, OpenTerminalRequest, PromptRequest};

/// What a client may do. A token is issued with its scopes; the Unix socket (owner only)
/// grants both.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum Scope {
    /// Sessions, history, search, agents, subscriptions, the inbox.
    Read,
    /// Prompt, stop, steer, answer, terminals, the daemon itself.
    Control,
}

impl Scope {
    /// Its name on the wire and in the token file.
    pub fn as_str(self) -> &'static str {
        match self {
            Scope::Read => "read",
            Scope::Control => "control",
        }
    }

    /// The scope named `name`.
    pub fn parse(name: &str) -> Option<Scope> {
        match name {
            "read" => Some(Scope::Read),
            "control" => Some(Scope::Control),
            _ => None,
        }
    }
}

/// An environment a client hands over for the agents its turns start. It may hold
/// secrets: its `Debug` prints the names only.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
pub struct ClientEnv(pub BTreeMap<String, String>);

impl std::fmt::Debug for ClientEnv {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

/// The first request on a connection. Its `Debug` leaves out the token and the proof.
#[derive(Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct Hello {
    /// The client's version (`CARGO_PKG_VERSION`); a daemon of another version restarts
    /// once it has no running turns.
    pub version: String,
    /// What the client is, for the record of who answered what: `cli`, `app`,
    /// `browser`, …
    pub surface: String,
    /// The environment this client's turns run their agents with (a CLI sends its own);
    /// none: the daemon's own.
    pub env: Option<ClientEnv>,
    /// The WebSocket token (the Unix socket needs none).
    pub token: Option<String>,
    /// On the Unix socket: the contents of `$WEFT_HOME/client.key`, which only a
    /// process outside Weft's sandbox can read. A socket hello without it is refused.
    pub proof: Option<String>,
}

impl std::fmt::Debug for Hello {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Hello")
            .field("version", &self.version)
            .field("surface", &self.surface)
            .field("env", &self.env)
            .field("token", &self.token.as_ref().map(|_| "…"))
            .field("proof", &self.proof.as_ref().map(|_| "…"))
            .finish()
    }
}

/// Reply to [`Hello`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Welcome {
    /// The daemon's version.
    pub version: String,
    /// The daemon's process id.
    pub pid: u32,
    /// What this connection may do.
    pub scopes: Vec<Scope>,
    /// Set when the daemon is of another version and will exit as soon as it has no
    /// running turns (at once when it has none): reconnect to get a new one.
    pub restarting: bool,
}

/// Answer the interaction `promptId`, wherever it is pending.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct AnswerRequest {
    /// Its id.
    pub prompt_id: String,
    /// The answer.
    #[serde(flatten)]
    pub response: InteractionResponse,
}

/// One pending question, permission or confirmation, across sessions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct InboxItem {
    /// Id to answer it by.
    pub prompt_id: String,
    /// The session it is pending in.
    pub session_key: String,
    /// Question, permission or confirmation.
    pub kind: InteractionKind,
    /// One line saying what is asked.
    pub title: String,
    /// More context, when there is some.
    pub detail: Option<String>,
    /// For a permission: the tool that wants to run.
    pub tool_name: Option<String>,
    /// The questions.
    pub questions: Vec<Question>,
    /// Asked (ms since the epoch).
    #[ts(type = "number")]
    pub created_at: i64,
    /// When it expires unanswered (ms since the epoch); none: it waits.
    #[ts(type = "number | null")]
    pub expires_at: Option<i64>,
}

/// Reply to [`ClientRequest::Listen`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct Listening {
    /// The address bound (a port of 0 is resolved).
    pub addr: String,
    /// The WebSocket URL (`ws://ADDR/ws`).
    pub ws_url: String,
    /// The browser UI's URL, with a read-and-control token in its fragment.
    pub ui_url: String,
}

/// Reply to [`ClientRequest::OpenTerminal`] and [`ClientRequest::AttachTerminal`].
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct TerminalAttached {
    /// The session the terminal belongs to; its frames follow on this connection.
    pub session_key: String,
}

/// A verb, as a client sends it. Every surface speaks exactly these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ClientRequest {
    /// The first request on a connection. Answered by [`Welcome`].
    Hello(Hello),
    /// Answered by `PromptAccepted`.
    Prompt(PromptRequest),
    /// Stop the running turn. Answered by `null`.
    Stop {
        /// The session.
        session_key: String,
    },
    /// Send a message into the running turn (or queue it). Answered by `SteerOutcome`.
    Steer {
        /// The session.
        session_key: String,
        /// The message.
        text: String,
    },
    /// Take a queued prompt out of a session's queue: it never runs. Answered by `null`.
    Dequeue {
        /// The session.
        session_key: String,
        /// The queued prompt's task id (the snapshot's `queued`).
        task_id: String,
    },
    /// Move a queued prompt within its session's queue. Answered by `null`.
    Requeue {
        /// The session.
        session_key: String,
        /// The queued prompt's task id.
        task_id: String,
        /// Its new position: 1 runs next; past the end moves it last.
        to: u32,
    },
    /// Answer a pending interaction of a session. Answered by `null`.
    Interact(InteractRequest),
    /// Answer a pending interaction by its id alone. Answered by `null`.
    Answer(AnswerRequest),
    /// Answered by [`InboxItem`]s, oldest first.
    Inbox {},
    /// Receive this session's patches. Answered by `SnapshotAt`, then patches follow.
    Subscribe {
        /// The session.
        session_key: String,
    },
    /// Stop receiving a session's patches. Answered by `null`.
    Unsubscribe {
        /// The session.
        session_key: String,
    },
    /// Receive every session's patches (a window). Answered by `null`; a `resync`
    /// message says when some were dropped.
    SubscribeAll {},
    /// Answered by `SnapshotAt`.
    GetSnapshot {
        /// The session.
        session_key: String,
    },
    /// Answered by past turns' final snapshots, oldest first.
    GetHistory {
        /// The session.
        session_key: String,
        /// Only the newest this many turns (of those before `before`).
        limit: Option<u32>,
        /// Only turns before the turn with this task id.
        before: Option<String>,
    },
    /// Answered by `SessionInfo`s, newest first.
    ListSessions {
        /// Only sessions in this folder.
        workdir: Option<String>,
    },
    /// Answered by `SearchHit`s, best match first.
    Search {
        /// Words to find in prompts and replies (the last one as a prefix).
        query: String,
        /// At most this many hits (default 50).
        limit: Option<u32>,
    },
    /// Answered by `AgentInfo`s.
    ListAgentInfo {},
    /// Answered by `ModelInfo`s.
    ListModels {
        /// The agent.
        agent: String,
    },
    /// Answered by effort names.
    ListEffort {
        /// The agent.
        agent: String,
    },
    /// Answered by `ToolInfo`s.
    ListTools {},
    /// A workspace's files matching what was typed after `@` (the composer's
    /// completion). Answered by `WorkspaceEntry`s, best first.
    ListWorkspaceFiles(crate::files::WorkspaceFilesQuery),
    /// Answered by `SkillInfo`s.
    ListSkills {
        /// Skills visible from this folder.
        workdir: Option<String>,
    },
    /// Keep a file pasted or dropped into a composer: `data` (base64) is written 0600
    /// under `$WEFT_HOME/attachments/<id>/<name>` and checked like every attachment.
    /// Answered by the file's absolute path, for [`PromptRequest::attachments`].
    SaveAttachment {
        /// The file's name (its folders are dropped).
        name: String,
        /// Its bytes, base64.
        data: String,
    },
    /// Open the agent's own terminal UI for a session (or attach to the one open), and
    /// attach this connection. Answered by [`TerminalAttached`]; frames follow.
    OpenTerminal(OpenTerminalRequest),
    /// Attach this connection to a session's open terminal: a screen frame, then live
    /// output. Answered by [`TerminalAttached`].
    AttachTerminal {
        /// The session.
        session_key: String,
    },
    /// Stop receiving a terminal's frames; it goes on running. Answered by `null`.
    DetachTerminal {
        /// The session.
        session_key: String,
    },
    /// Keystrokes for a terminal (binary input frames carry raw bytes). Answered by `null`.
    WriteTerminal {
        /// The session.
        session_key: String,
        /// The text typed.
        data: String,
    },
    /// Answered by `null`.
    ResizeTerminal {
        /// The session.
        session_key: String,
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    },
    /// End the terminal (its program is killed); the structured rail takes the session
    /// back. Answered by `null`.
    CloseTerminal {
        /// The session.
        session_key: String,
    },
    /// Answered by [`DaemonStatus`](crate::DaemonStatus).
    DaemonStatus {},
    /// Stop every turn and terminal, then exit. Answered by `null` first.
    DaemonStop {},
    /// Accept WebSocket clients on `addr` for as long as this connection lasts (what
    /// `weft serve` does). Answered by [`Listening`].
    Listen {
        /// `IP:PORT`; port 0 picks a free one.
        addr: String,
    },
    /// The session library: managed and native sessions, pinned first, newest first.
    /// Answered by `LibrarySession`s.
    ListLibrary(LibraryQuery),
    /// Search prompts, replies and tool calls of every session, managed and native.
    /// Answered by `LibraryHit`s, best first, one per session.
    SearchLibrary(LibrarySearch),
    /// Some turns of a native session's transcript, read from the agent's file.
    /// Answered by `TranscriptPage`.
    OpenTranscript {
        /// The session (`agent:<native id>`, or a managed session with a native file).
        session_key: String,
        /// The first turn (0-based); default: the last `limit`.
        start: Option<u32>,
        /// How many turns (default 50).
        limit: Option<u32>,
    },
    /// The turns of a managed session's agent file from before its first turn in Weft
    /// (an adopted session's past, a fork's inherited turns), paged like
    /// `openTranscript`. Answered by `TranscriptPage`, whose `total` counts those turns.
    EarlierTurns {
        /// The managed session.
        session_key: String,
        /// The first turn (0-based); default: the last `limit`.
        start: Option<u32>,
        /// How many turns (default 50).
        limit: Option<u32>,
    },
    /// How far the library's indexer is. Answered by `LibraryProgress`.
    LibraryProgress {},
    /// Usage and cost, grouped. Answered by `UsageRow`s.
    Usage {
        /// The grouping.
        by: UsageBy,
        /// Only usage from this time on (ms since the epoch).
        #[ts(type = "number | null")]
        since: Option<i64>,
    },
    /// Rename, archive, pin or delete a session's record. Answered by `null`.
    ManageSession {
        /// The session.
        session_key: String,
        /// What to do.
        action: SessionAction,
    },
    /// Fork a session at its end or after a turn: a new session of the same agent with
    /// the history up to there, recorded with its parent. Answered by its
    /// `LibrarySession`. A Claude or Codex fork is a managed session whose first prompt
    /// has the agent fork itself (`--fork-session`, `thread/fork`); until then its
    /// transcript is the parent's up to the fork point. Others get a new session file.
    ForkSession {
        /// The session (native, or managed with a native file).
        session_key: String,
        /// Keep turns 1 to this one (default: all).
        at: Option<u32>,
    },
    /// A session's whole transcript (managed or native, an adopted one's earlier
    /// turns from the agent's file first) as one document. Answered by its text.
    ExportSession {
        /// The session.
        session_key: String,
        /// Markdown or JSON (`{session, turns}`).
        format: ExportFormat,
    },
    /// The same document written by the daemon to a file, a page of the transcript at a
    /// time: no reply has to carry it, so a session of any size exports. Accepted over
    /// the owner's Unix socket only (the daemon writes where its owner may). The file
    /// appears whole or not at all. Answered by `ExportWritten`.
    ExportSessionToFile {
        /// The session.
        session_key: String,
        /// Markdown or JSON.
        format: ExportFormat,
        /// An absolute path; a file there is replaced.
        path: String,
    },
    /// Answered by `AccountInfo`s (never a secret).
    ListAccounts {},
    /// Add an account; a secret value is accepted over the Unix socket only. Answered
    /// by its `AccountInfo`.
    AddAccount(AddAccountRequest),
    /// Rename an account. Answered by its `AccountInfo`.
    RenameAccount {
        /// The account's id (a request's own `id` is the reply's).
        account: String,
        /// Its new name.
        label: String,
    },
    /// Remove an account: its record, its secret in the OS secret store, and (with
    /// `deleteHome`) its home folder. Answered by `null`.
    RemoveAccount {
        /// The account's id (a request's own `id` is the reply's).
        account: String,
        /// Also delete the account's home folder (its login, its transcripts).
        delete_home: bool,
    },
    /// Check that an account can be used now. Answered by `AccountTest`.
    TestAccount {
        /// The account's id (a request's own `id` is the reply's).
        account: String,
    },
    /// Usage per account per day, newest first. Answered by `AccountUsageDay`s.
    AccountUsage {
        /// Only this account's.
        account: Option<String>,
    },
    /// Move an idle session to another account from its next turn (the app's one-click
    /// "switch account and continue" after a used-up limit: `resume` runs the last
    /// turn's prompt again there). A switch the agent's own session cannot follow
    /// changes nothing without `confirm` and answers with the `warning` to show; with
    /// it, the next turn starts a new agent session seeded with a handover. Refused
    /// (`busy`) while a turn runs or waits. Answered by `AccountSwitch`.
    ///
    /// A `Prompt` naming another account than the session's runs the same check: one the
    /// agent cannot follow is refused with the code `needsConfirmation` (the message is
    /// the warning); confirm it with this verb, then send the prompt again.
    SwitchAccount {
        /// The session.
        session_key: String,
        /// The account's id (`ambient`: the agent's own login).
        account: String,
        /// Run the last turn's prompt again on the new account.
        resume: bool,
        /// Go ahead although the agent's own session cannot follow (a handover).
        confirm: bool,
    },
    /// Move an idle session to another agent (the app's switch control): its key,
    /// history and transcript stay; the next prompt runs on `agent`, which starts a new
    /// session of its own from a handover of the conversation. Until then the
    /// snapshot's `recordedAgent` names it. Refused (`busy`) while a turn runs or
    /// waits, with the reason; nothing is interrupted. Answered by null.
    SwitchAgent {
        /// The session.
        session_key: String,
        /// The agent id to move to (`codex`, `claude`, …).
        agent: String,
    },
    /// What [`ClientRequest::SwitchAccount`] would do; nothing changes. Answered by
    /// `AccountSwitch` (`switched` false).
    CheckAccountSwitch {
        /// The session.
        session_key: String,
        /// The account's id (`ambient`: the agent's own login).
        account: String,
    },
    /// Opt a session in to (or out of) switching accounts by itself when its account's
    /// limit is used up (see `AutoSwitch`). Answered by `AutoSwitch`.
    SetAutoSwitch {
        /// The session.
        session_key: String,
        /// On or off.
        enabled: bool,
    },
    /// Whether a session switches accounts by itself. Answered by `AutoSwitch`.
    GetAutoSwitch {
        /// The session.
        session_key: String,
    },
    /// The MCP servers configured in Weft (`$WEFT_HOME/mcp.json`, the workspace's
    /// `.weft/mcp.json`), each with its file and whether it is on. Answered by `McpList`.
    ListMcp {
        /// The workspace whose `.weft/mcp.json` counts too.
        workdir: Option<String>,
        /// Whether each is on for this session (its own choices count).
        session_key: Option<String>,
    },
    /// What a workspace's `.weft/` and the agents' project files grant, and whether the
    /// user trusted it. Answered by `WorkspaceTrust`.
    GetWorkspaceTrust {
        /// The workspace folder.
        workdir: String,
    },
    /// Trust a workspace: what it grants takes effect. `hash` is the one the user was
    /// shown; when the folder changed since, the request is refused (show it again).
    /// Answered by `WorkspaceTrust`.
    TrustWorkspace {
        /// The workspace folder.
        workdir: String,
        /// The `hash` of the `WorkspaceTrust` the user saw.
        hash: String,
    },
    /// Say no to a workspace's grants: it keeps running without them, and the app does
    /// not ask again until they change. Answered by `WorkspaceTrust`.
    DeclineWorkspaceTrust {
        /// The workspace folder.
        workdir: String,
        /// The `hash` of the `WorkspaceTrust` the user saw.
        hash: String,
    },
    /// Forget every trust decision for a workspace's repository (or folder). Answered
    /// by `WorkspaceTrust`.
    RevokeWorkspaceTrust {
        /// The workspace folder.
        workdir: String,
    },
    /// Turn MCP servers on (`true`) or off for one session, from its next spawn.
    /// Answered by the session's `McpList`.
    SetMcpEnabled {
        /// The session.
        session_key: String,
        /// Server name → on.
        servers: std::collections::BTreeMap<String, bool>,
    },
    /// Keep a secret an MCP server's `${secret:NAME}` names, in the OS secret store;
    /// accepted over the Unix socket only. Answered by `null`.
    SetMcpSecret {
        /// Its name.
        name: String,
        /// Its value.
        value: crate::SecretText,
    },
    /// Forget an MCP secret. Answered by `null`.
    RemoveMcpSecret {
        /// Its name.
        name: String,
    },
    /// Place a skill once for every agent: copy the folder at `path` (with its
    /// SKILL.md) into `$WEFT_HOME/skills`. Answered by its `SkillInfo`.
    AddSkill {
        /// The skill's folder (or its SKILL.md), absolute.
        path: String,
    },
    /// Delete a global skill. Answered by `null`.
    RemoveSkill {
        /// Its name.
        name: String,
    },
    /// Turn a skill on or off for every agent, from their next spawn. Answered by `null`.
    SetSkillEnabled {
        /// Its name.
        name: String,
        /// On or off.
        enabled: bool,
    },
    /// Log a login account in: `weft accounts login ID` (the agent's own login, inside
    /// the account's home) in a terminal of the daemon's, keyed `login:ID`, this
    /// connection attached. Answered by [`TerminalAttached`]; frames follow.
    LoginAccount {
        /// The account's id.
        account: String,
        /// The terminal's width in columns (default 80).
        cols: Option<u16>,
        /// The terminal's height in rows (default 24).
        rows: Option<u16>,
    },
    /// The agent CLIs Weft installs, where each was found. Answered by `AgentInstall`s.
    ListAgentInstalls {},
    /// Install (or update) an agent CLI: `weft agents install NAME` in a terminal of the
    /// daemon's, keyed `install:NAME`, showing npm's progress. Answered by
    /// [`TerminalAttached`]; frames follow.
    InstallAgent {
        /// `claude`, `codex`, `gemini` or `claude-agent-acp`.
        name: String,
        /// Another version than the tested one.
        version: Option<String>,
        /// The terminal's width in columns (default 80).
        cols: Option<u16>,
        /// The terminal's height in rows (default 24).
        rows: Option<u16>,
    },
}

impl ClientRequest {
    /// The scope a connection needs to send this.
    pub fn scope(&self) -> Scope {
        match self {
            ClientRequest::Hello(_)
            | ClientRequest::Inbox {}
            | ClientRequest::Subscribe { .. }
            | ClientRequest::Unsubscribe { .. }
            | ClientRequest::SubscribeAll {}
            | ClientRequest::GetSnapshot { .. }
            | ClientRequest::GetHistory { .. }
            | ClientRequest::ListSessions { .. }
            | ClientRequest::Search { .. }
            | ClientRequest::ListAgentInfo {}
            | ClientRequest::ListModels { .. }
            | ClientRequest::ListEffort { .. }
            | ClientRequest::ListTools {}
            | ClientRequest::ListSkills { .. }
            | ClientRequest::DaemonStatus {}
            | ClientRequest::ListLibrary(_)
            | ClientRequest::SearchLibrary(_)
            | ClientRequest::OpenTranscript { .. }
            | ClientRequest::EarlierTurns { .. }
            | ClientRequest::ExportSession { .. }
            | ClientRequest::LibraryProgress {}
            | ClientRequest::Usage { .. }
            | ClientRequest::ListAccounts {}
            | ClientRequest::AccountUsage { .. }
            | ClientRequest::CheckAccountSwitch { .. }
            | ClientRequest::GetAutoSwitch { .. }
            | ClientRequest::ListMcp { .. }
            | ClientRequest::GetWorkspaceTrust { .. }
            | ClientRequest::ListAgentInstalls {} => Scope::Read,
            ClientRequest::Prompt(_)
            | ClientRequest::SaveAttachment { .. }
            | ClientRequest::ListWorkspaceFiles(_)
            | ClientRequest::Stop { .. }
            | ClientRequest::Steer { .. }
            | ClientRequest::Dequeue { .. }
            | ClientRequest::Requeue { .. }
            | ClientRequest::Interact(_)
            | ClientRequest::Answer(_)
            | ClientRequest::OpenTerminal(_)
            | ClientRequest::AttachTerminal { .. }
            | ClientRequest::DetachTerminal { .. }
            | ClientRequest::WriteTerminal { .. }
            | ClientRequest::ResizeTerminal { .. }
            | ClientRequest::CloseTerminal { .. }
            | ClientRequest::DaemonStop {}
            | ClientRequest::ExportSessionToFile { .. }
            | ClientRequest::ManageSession { .. }
            | ClientRequest::ForkSession { .. }
            | ClientRequest::Listen { .. }
            | ClientRequest::AddAccount(_)
            | ClientRequest::RenameAccount { .. }
            | ClientRequest::RemoveAccount { .. }
            | ClientRequest::TestAccount { .. }
            | ClientRequest::SwitchAccount { .. }
            | ClientRequest::SwitchAgent { .. }
            | ClientRequest::SetAutoSwitch { .. }
            | ClientRequest::SetMcpEnabled { .. }
            | ClientRequest::TrustWorkspace { .. }
            | ClientRequest::DeclineWorkspaceTrust { .. }
            | ClientRequest::RevokeWorkspaceTrust { .. }
            | ClientRequest::SetMcpSecret { .. }
            | ClientRequest::RemoveMcpSecret { .. }
            | ClientRequest::AddSkill { .. }
            | ClientRequest::RemoveSkill { .. }
            | ClientRequest::SetSkillEnabled { .. }
            | ClientRequest::LoginAccount { .. }
            | ClientRequest::InstallAgent { .. } => Scope::Control,
        }
    }
}

/// A request with the id its reply will carry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct ClientMessage {
    /// Chosen by the client; echoed in the reply.
    #[ts(type = "number")]
    pub id: u64,
    /// The verb.
    #[serde(flatten)]
    pub request: ClientRequest,
}

/// What a server sends.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ServerMessage {
    /// The reply to request `id`.
    Reply {
        /// The request's id.
        #[ts(type = "number")]
        id: u64,
        /// The result.
        result: Value,
    },
    /// Request `id` failed.
    Error {
        /// The request's id.
        #[ts(type = "number")]
        id: u64,
        /// Why.
        error: WireError,
    },
    /// A patch for a subscribed session (boxed: it dwarfs the other variants).
    Patch(Box<PatchEvent>),
    /// Patches were dropped for this connection (it read too slowly): re-read the
    /// snapshots of the sessions it shows (all of them when `sessionKey` is absent).
    Resync {
        /// The session whose patches were dropped.
        session_key: Option<String>,
    },
    /// The daemon is going away (stopped, or restarting for another version).
    Closing {
        /// Why.
        reason: String,
    },
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn env_debug_names_no_value() {
        let env = ClientEnv([("API_KEY".to_string(), "sk-secret".to_string())].into());
        let shown = format!("{env:?}");
        assert!(
            shown.contains("API_KEY") && !shown.contains("sk-secret"),
            "{shown}"
        );
    }

    #[test]
    fn every_control_verb_needs_control() {
        let stop = ClientRequest::Stop {
            session_key: "k".into(),
        };
        assert_eq!(stop.scope(), Scope::Control);
        assert_eq!(ClientRequest::Inbox {}.scope(), Scope::Read);
    }
}
