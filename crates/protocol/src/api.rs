//! The messages every client and the kernel service exchange: one request enum that
//! names every verb, one server message enum, and the binary frames terminals use.
//!
//! A connection carries JSON messages ([`ClientMessage`] up, [`ServerMessage`] down)
//! and binary terminal frames ([`TerminalFrame`] down, [`TerminalInput`] up). The first
//! request on a connection is [`ClientRequest::Hello`]; on a WebSocket it also carries
//! the token (never in a URL).

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;
use ts_rs::TS;

use crate::account::AddAccountRequest;
use crate::error::WireError;
use crate::library::{LibraryQuery, LibrarySearch, SessionAction, UsageBy};
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

/// The first request on a connection.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
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

/// The daemon as `weft daemon status` shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct DaemonStatus {
    /// Its process id.
    pub pid: u32,
    /// Its version.
    pub version: String,
    /// Its `WEFT_HOME`.
    pub home: String,
    /// Its Unix socket.
    pub socket: String,
    /// Started (ms since the epoch).
    #[ts(type = "number")]
    pub started_at: i64,
    /// WebSocket addresses it listens on.
    pub listening: Vec<String>,
    /// Connected clients, by surface.
    pub clients: BTreeMap<String, u32>,
    /// Sessions with a turn running or queued.
    pub busy_sessions: u32,
    /// Agent terminals open.
    pub terminals: u32,
    /// Interactions waiting for an answer.
    pub pending: u32,
    /// Seconds it stays up once nothing needs it.
    #[ts(type = "number")]
    pub idle_secs: u64,
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
    /// Answered by `SkillInfo`s.
    ListSkills {
        /// Skills visible from this folder.
        workdir: Option<String>,
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
    /// Answered by [`DaemonStatus`].
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
    /// `LibrarySession`.
    ForkSession {
        /// The session (native, or managed with a native file).
        session_key: String,
        /// Keep turns 1 to this one (default: all).
        at: Option<u32>,
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
            | ClientRequest::LibraryProgress {}
            | ClientRequest::Usage { .. }
            | ClientRequest::ListAccounts {}
            | ClientRequest::AccountUsage { .. } => Scope::Read,
            ClientRequest::Prompt(_)
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
            | ClientRequest::ManageSession { .. }
            | ClientRequest::ForkSession { .. }
            | ClientRequest::Listen { .. }
            | ClientRequest::AddAccount(_)
            | ClientRequest::RenameAccount { .. }
            | ClientRequest::RemoveAccount { .. }
            | ClientRequest::TestAccount { .. } => Scope::Control,
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

/// Kinds of [`TerminalFrame`].
pub mod frame_kind {
    /// The whole screen, redrawn (`offset`: the output offset it is current at).
    pub const SCREEN: u8 = 0;
    /// Output starting at `offset`.
    pub const DATA: u8 = 1;
    /// The program exited; the payload is JSON `{code, signal, screen}`.
    pub const EXIT: u8 = 2;
}

const TAG_TERMINAL: u8 = 1;
const TAG_INPUT: u8 = 2;

/// Terminal output for one attached connection, as a binary frame:
/// `[1][kind u8][offset u64 LE][key length u16 LE][key][payload]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalFrame {
    /// The session.
    pub session_key: String,
    /// [`frame_kind`].
    pub kind: u8,
    /// Output offset.
    pub offset: u64,
    /// Bytes.
    pub payload: Vec<u8>,
}

/// Raw keystrokes for a terminal, as a binary frame:
/// `[2][key length u16 LE][key][payload]`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalInput {
    /// The session.
    pub session_key: String,
    /// Bytes.
    pub data: Vec<u8>,
}

fn put_key(out: &mut Vec<u8>, key: &str) {
    let len = u16::try_from(key.len()).unwrap_or(u16::MAX);
    out.extend_from_slice(&len.to_le_bytes());
    out.extend_from_slice(&key.as_bytes()[..usize::from(len)]);
}

fn take_key(bytes: &[u8]) -> Option<(String, &[u8])> {
    let len = usize::from(u16::from_le_bytes([*bytes.first()?, *bytes.get(1)?]));
    let key = bytes.get(2..2 + len)?;
    Some((String::from_utf8(key.to_vec()).ok()?, &bytes[2 + len..]))
}

impl TerminalFrame {
    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(12 + self.session_key.len() + self.payload.len());
        out.push(TAG_TERMINAL);
        out.push(self.kind);
        out.extend_from_slice(&self.offset.to_le_bytes());
        put_key(&mut out, &self.session_key);
        out.extend_from_slice(&self.payload);
        out
    }

    /// Reads one; `None` when the bytes are not a terminal frame.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.first() != Some(&TAG_TERMINAL) {
            return None;
        }
        let kind = *bytes.get(1)?;
        let offset = u64::from_le_bytes(bytes.get(2..10)?.try_into().ok()?);
        let (session_key, payload) = take_key(bytes.get(10..)?)?;
        Some(Self {
            session_key,
            kind,
            offset,
            payload: payload.to_vec(),
        })
    }
}

impl TerminalInput {
    /// Its bytes.
    pub fn encode(&self) -> Vec<u8> {
        let mut out = Vec::with_capacity(3 + self.session_key.len() + self.data.len());
        out.push(TAG_INPUT);
        put_key(&mut out, &self.session_key);
        out.extend_from_slice(&self.data);
        out
    }

    /// Reads one; `None` when the bytes are not terminal input.
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        if bytes.first() != Some(&TAG_INPUT) {
            return None;
        }
        let (session_key, data) = take_key(bytes.get(1..)?)?;
        Some(Self {
            session_key,
            data: data.to_vec(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_refuse_each_other() {
        let f = TerminalFrame {
            session_key: "echo:1".into(),
            kind: frame_kind::DATA,
            offset: 0x0102_0304,
            payload: b"hi\x1b[0m".to_vec(),
        };
        assert_eq!(TerminalFrame::decode(&f.encode()), Some(f.clone()));
        assert_eq!(TerminalInput::decode(&f.encode()), None);
        let i = TerminalInput {
            session_key: "claude:x".into(),
            data: vec![0xff, 0, 3],
        };
        assert_eq!(TerminalInput::decode(&i.encode()), Some(i.clone()));
        assert_eq!(TerminalFrame::decode(&i.encode()), None);
        assert_eq!(TerminalFrame::decode(&[1, 0, 0]), None, "cut short");
    }

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
