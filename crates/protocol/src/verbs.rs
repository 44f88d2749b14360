//! The verb set: each request a client sends, declared once with the type of its reply.
//!
//! `verbs!` turns the one declaration into the [`ClientRequest`] enum (its wire form
//! is the enum's serde form, unchanged), one type per verb in [`verb`] (a tuple verb's
//! own request type stands for it), a [`Verb`] impl naming each one's reply, the scope
//! a connection needs to send it (`ClientRequest::scope`, `as Read` / `as Control`
//! after the reply), and [`REPLIES`], from which the UI's `ReplyOf` map is generated. A call site then gets
//! its reply type from the verb it sends, and the daemon's answer to a verb is checked
//! against the same type: adding a verb is one edit here that the compiler follows.

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::*;

/// A request that names its reply: what [`ClientRequest`]'s variant `Self` is answered by.
pub trait Verb: Into<ClientRequest> {
    /// The reply's type, as the daemon sends it.
    type Reply: Serialize + DeserializeOwned + Send + 'static;
}

/// One verb's wire name (`type`) and its reply's TypeScript type.
pub struct ReplyType {
    /// The verb's variant name (`ListSessions`).
    pub variant: &'static str,
    /// The reply's TypeScript name (`Array<SessionInfo>`, `null`, …).
    pub name: fn(&ts_rs::Config) -> String,
    /// The generated types the name mentions, by their TypeScript name and file.
    pub imports: fn(&ts_rs::Config) -> Vec<(String, std::path::PathBuf)>,
}

impl ReplyType {
    /// The request's `type` on the wire: the variant's name as serde's
    /// `rename_all = "camelCase"` spells it (`listSessions`).
    pub fn wire(&self) -> String {
        let mut chars = self.variant.chars();
        chars
            .next()
            .map(|c| c.to_ascii_lowercase().to_string() + chars.as_str())
            .unwrap_or_default()
    }
}

/// The generated types `T`'s TypeScript name mentions (`T` itself, or what an
/// `Array<…>` or `… | null` holds), by name and file.
fn imports_of<T: TS + 'static + ?Sized>(cfg: &ts_rs::Config) -> Vec<(String, std::path::PathBuf)> {
    struct Named<'a>(&'a ts_rs::Config, Vec<(String, std::path::PathBuf)>);
    impl ts_rs::TypeVisitor for Named<'_> {
        fn visit<U: TS + 'static + ?Sized>(&mut self) {
            match U::output_path() {
                Some(path) => self.1.push((U::name(self.0), path)),
                None => U::visit_generics(self),
            }
        }
    }
    let mut named = Named(cfg, Vec::new());
    ts_rs::TypeVisitor::visit::<T>(&mut named);
    named.1
}

/// Declares the request enum, with each variant followed by `=> ReplyType`.
macro_rules! verbs {
    (
        $(#[$enum_meta:meta])*
        $vis:vis enum $Enum:ident {
            $(
                $(#[$meta:meta])*
                $Verb:ident $body:tt => $Reply:ty as $Scope:ident
            ),* $(,)?
        }
    ) => {
        $(#[$enum_meta])*
        $vis enum $Enum {
            $( $(#[$meta])* $Verb $body, )*
        }

        /// One type per verb with fields of its own, named as its variant; a verb whose
        /// variant wraps a request type (`Prompt(PromptRequest)`) is that type.
        pub mod verb {
            #[allow(unused_imports)]
            use super::*;
            $( verb_type! { $(#[$meta])* $Verb $body } )*
        }

        $( verb_impl! { $Verb $body => $Reply } )*

        impl $Enum {
            /// The scope a connection needs to send this (declared with the verb).
            pub fn scope(&self) -> Scope {
                match self {
                    $( verb_pattern!($Enum $Verb $body) => Scope::$Scope, )*
                }
            }
        }

        /// Every verb's wire name and reply type, in declaration order.
        pub const REPLIES: &[ReplyType] = &[
            $( ReplyType {
                variant: stringify!($Verb),
                name: <$Reply as TS>::name,
                imports: imports_of::<$Reply>,
            }, )*
        ];
    };
}

/// The pattern that matches a verb of either shape.
macro_rules! verb_pattern {
    ($Enum:ident $Verb:ident ( $T:ty )) => {
        $Enum::$Verb(_)
    };
    ($Enum:ident $Verb:ident { $($rest:tt)* }) => {
        $Enum::$Verb { .. }
    };
}

/// A struct verb's own type (a tuple verb has its request type already).
macro_rules! verb_type {
    ($(#[$meta:meta])* $Verb:ident ( $T:ty )) => {};
    (
        $(#[$meta:meta])*
        $Verb:ident { $( $(#[$fmeta:meta])* $field:ident : $fty:ty ),* $(,)? }
    ) => {
        $(#[$meta])*
        #[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
        #[serde(rename_all = "camelCase")]
        pub struct $Verb {
            $( $(#[$fmeta])* pub $field: $fty, )*
        }
    };
}

/// The [`Verb`] impl and the conversion into the request enum.
macro_rules! verb_impl {
    ($Verb:ident ( $T:ty ) => $Reply:ty) => {
        impl Verb for $T {
            type Reply = $Reply;
        }
        impl From<$T> for ClientRequest {
            fn from(request: $T) -> Self {
                ClientRequest::$Verb(request)
            }
        }
    };
    ($Verb:ident { $( $(#[$fmeta:meta])* $field:ident : $fty:ty ),* $(,)? } => $Reply:ty) => {
        impl Verb for verb::$Verb {
            type Reply = $Reply;
        }
        impl From<verb::$Verb> for ClientRequest {
            fn from(request: verb::$Verb) -> Self {
                let verb::$Verb { $( $field ),* } = request;
                ClientRequest::$Verb { $( $field ),* }
            }
        }
    };
}

verbs! {
/// A verb, as a client sends it. Every surface speaks exactly these.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(
    tag = "type",
    rename_all = "camelCase",
    rename_all_fields = "camelCase"
)]
pub enum ClientRequest {
    /// The first request on a connection. Answered by [`Welcome`].
    Hello(Hello) => Welcome as Read,
    /// Answered by `PromptAccepted`.
    Prompt(PromptRequest) => PromptAccepted as Control,
    /// Stop the running turn. Answered by `null`.
    Stop {
        /// The session.
        session_key: String,
    } => () as Control,
    /// Send a message into the running turn (or queue it). Answered by `SteerOutcome`.
    Steer {
        /// The session.
        session_key: String,
        /// The message.
        text: String,
        /// Paths of files to attach, as a prompt's `attachments`: sent into the turn by
        /// an agent that takes them mid-turn, else queued with the steer as the next turn.
        #[serde(default)]
        #[ts(optional)]
        attachments: Option<Vec<String>>,
    } => SteerOutcome as Control,
    /// Take a queued prompt out of a session's queue: it never runs. Answered by `null`.
    Dequeue {
        /// The session.
        session_key: String,
        /// The queued prompt's task id (the snapshot's `queued`).
        task_id: String,
    } => () as Control,
    /// Move a queued prompt within its session's queue. Answered by `null`.
    Requeue {
        /// The session.
        session_key: String,
        /// The queued prompt's task id.
        task_id: String,
        /// Its new position: 1 runs next; past the end moves it last.
        to: u32,
    } => () as Control,
    /// Put a session's files back as they were before or after one of its turns (all of
    /// them, or `paths`), from the checkpoints Weft takes around every turn; between
    /// turns only. Every restore is checkpointed first, so `undo` takes it back.
    /// Answered by `Restored`, whose `overwrites` lists the edits made since the
    /// session's last checkpoint when the restore would overwrite them without `yes`.
    Restore {
        /// The session.
        session_key: String,
        /// The turn (1 is the first, as `forkSession`'s `at` counts); none: the last
        /// checkpointed one.
        #[serde(default)]
        turn: Option<u32>,
        /// Before (the default) or after the turn.
        #[serde(default)]
        side: RestoreSide,
        /// Only these files (relative to the top of the work tree); none: every file.
        #[serde(default)]
        paths: Option<Vec<String>>,
        /// Overwrite edits made since the session's last checkpoint.
        #[serde(default)]
        yes: bool,
        /// Undo the session's last restore instead (`turn` and `side` are ignored); a
        /// second undo redoes it.
        #[serde(default)]
        undo: bool,
    } => Restored as Control,
    /// Put one hunk of a session's diff back as it was before (a `@@` hunk of a
    /// `sessionDiff` whose `to` is the session's latest checkpoint), in file `path`;
    /// between turns only. Checkpointed first like every restore, so `restore` with
    /// `undo` takes it back; refused when the file changed where the hunk was.
    RevertHunk {
        /// The session.
        session_key: String,
        /// The file (relative to the top of the work tree, as the diff names it).
        path: String,
        /// The hunk: its `@@` line and its lines.
        hunk: String,
    } => Restored as Control,
    /// What a session changed between two of its checkpoints (the ids a turn's
    /// `turnDiff` names as `before` and `after`): the whole session from the first
    /// turn's `before`, one turn, or everything since the one the user last reviewed.
    /// Answered by a `TurnDiff` (its `turn` 0).
    SessionDiff {
        /// The session.
        session_key: String,
        /// From this checkpoint; none: the session's first.
        #[serde(default)]
        from: Option<String>,
        /// To this checkpoint; none: the session's latest.
        #[serde(default)]
        to: Option<String>,
    } => TurnDiff as Read,
    /// Answer a pending interaction of a session. Answered by `null`.
    Interact(InteractRequest) => () as Control,
    /// Answer a pending interaction by its id alone. Answered by `null`.
    Answer(AnswerRequest) => () as Control,
    /// Answered by [`InboxItem`]s, oldest first.
    Inbox {} => Vec<InboxItem> as Read,
    /// Receive this session's patches. Answered by `SnapshotAt`, then patches follow.
    Subscribe {
        /// The session.
        session_key: String,
    } => SnapshotAt as Read,
    /// Stop receiving a session's patches. Answered by `null`.
    Unsubscribe {
        /// The session.
        session_key: String,
    } => () as Read,
    /// Receive every session's patches (a window). Answered by `null`; a `resync`
    /// message says when some were dropped.
    SubscribeAll {} => () as Read,
    /// Answered by `SnapshotAt`.
    GetSnapshot {
        /// The session.
        session_key: String,
    } => SnapshotAt as Read,
    /// Answered by past turns' final snapshots, oldest first.
    GetHistory {
        /// The session.
        session_key: String,
        /// Only the newest this many turns (of those before `before`).
        limit: Option<u32>,
        /// Only turns before the turn with this task id.
        before: Option<String>,
    } => Vec<UniversalSnapshot> as Read,
    /// Answered by `SessionInfo`s, pinned ones first, then newest first.
    ListSessions {
        /// Only sessions in this folder.
        workdir: Option<String>,
        /// Archived sessions too (each marked `archived`); without it they are left out.
        #[serde(default)]
        #[ts(optional)]
        archived: Option<bool>,
    } => Vec<SessionInfo> as Read,
    /// Answered by `SearchHit`s, best match first.
    Search {
        /// Words to find in prompts and replies (the last one as a prefix).
        query: String,
        /// At most this many hits (default 50).
        limit: Option<u32>,
    } => Vec<SearchHit> as Read,
    /// Answered by `AgentInfo`s.
    ListAgentInfo {} => Vec<AgentInfo> as Read,
    /// Answered by `ModelInfo`s.
    ListModels {
        /// The agent.
        agent: String,
    } => Vec<ModelInfo> as Read,
    /// Answered by effort names.
    ListEffort {
        /// The agent.
        agent: String,
        /// Only the efforts this model takes (without it, the agent's whole list).
        #[serde(default)]
        #[ts(optional)]
        model: Option<String>,
    } => Vec<String> as Read,
    /// Answered by `ToolInfo`s: with `agent`, that agent's own tools as it reports them
    /// (its built-in ones and its MCP servers'), in `workdir` (default: the home
    /// folder); without, the tools Weft's ToolProvider offers every agent.
    ListTools {
        /// The agent.
        #[serde(default)]
        #[ts(optional)]
        agent: Option<String>,
        /// The folder the agent would work in.
        #[serde(default)]
        #[ts(optional)]
        workdir: Option<String>,
    } => Vec<ToolInfo> as Read,
    /// A workspace's files matching what was typed after `@` (the composer's
    /// completion). Answered by `WorkspaceEntry`s, best first.
    ListWorkspaceFiles(crate::files::WorkspaceFilesQuery) => Vec<WorkspaceEntry> as Control,
    /// A folder of the daemon's machine, for a workspace picker that browses a host's
    /// folders (the app's, for a remote host): `path` absolute, none for the daemon
    /// user's home. Anything the user could list with `ls` is answered, hidden entries
    /// included, but nothing inside Weft's own state folder (`WEFT_HOME`, which holds
    /// tokens and keys) is listed. Answered by a `DirListing`.
    ListDir {
        /// The folder (none: the home folder).
        #[serde(default)]
        #[ts(optional)]
        path: Option<String>,
    } => DirListing as Control,
    /// Read a file of the daemon's machine (an absolute path), at most `maxBytes` of
    /// it (default 1 MiB, at most 16 MiB): a remote session's file opened from a window
    /// of another machine, which keeps a copy. Nothing inside Weft's own state folder
    /// (`WEFT_HOME`) is read, by any path or link. Answered by a `FileContent`.
    ReadFile {
        /// The file.
        path: String,
        /// How many bytes to read at most.
        #[serde(default)]
        #[ts(optional)]
        max_bytes: Option<u32>,
    } => FileContent as Control,
    /// Answered by `SkillInfo`s.
    ListSkills {
        /// Skills visible from this folder.
        workdir: Option<String>,
    } => Vec<SkillInfo> as Read,
    /// Keep a file pasted or dropped into a composer: `data` (base64) is written 0600
    /// under `$WEFT_HOME/attachments/<id>/<name>` and checked like every attachment.
    /// Answered by the file's absolute path, for [`PromptRequest::attachments`].
    SaveAttachment {
        /// The file's name (its folders are dropped).
        name: String,
        /// Its bytes, base64.
        data: String,
    } => String as Control,
    /// Start an agent's process ahead of the turn that will use it (the warm pool).
    /// Answered by [`Prewarmed`].
    Prewarm(PrewarmRequest) => Prewarmed as Control,
    /// Open the agent's own terminal UI for a session (or attach to the one open), and
    /// attach this connection. Answered by [`TerminalAttached`]; frames follow.
    OpenTerminal(OpenTerminalRequest) => TerminalAttached as Control,
    /// Attach this connection to a session's open terminal: a screen frame, then live
    /// output. Answered by [`TerminalAttached`].
    AttachTerminal {
        /// The session.
        session_key: String,
    } => TerminalAttached as Control,
    /// Stop receiving a terminal's frames; it goes on running. Answered by `null`.
    DetachTerminal {
        /// The session.
        session_key: String,
    } => () as Control,
    /// Keystrokes for a terminal (binary input frames carry raw bytes). Answered by `null`.
    WriteTerminal {
        /// The session.
        session_key: String,
        /// The text typed.
        data: String,
    } => () as Control,
    /// Answered by `null`.
    ResizeTerminal {
        /// The session.
        session_key: String,
        /// Columns.
        cols: u16,
        /// Rows.
        rows: u16,
    } => () as Control,
    /// End the terminal (its program is killed); the structured rail takes the session
    /// back. Answered by `null`.
    CloseTerminal {
        /// The session.
        session_key: String,
    } => () as Control,
    /// Answered by [`DaemonStatus`](crate::DaemonStatus).
    DaemonStatus {} => DaemonStatus as Read,
    /// Stop every turn and terminal, then exit. Answered by `null` first.
    DaemonStop {} => () as Control,
    /// Start, restart or stop a surface the daemon supervises (`matrix`) after its
    /// settings changed (`weft matrix login` or `logout`): it runs while it is
    /// configured. Only on the daemon's own socket. Answered by its [`SurfaceStatus`].
    ReloadSurface {
        /// `matrix`.
        name: String,
    } => SurfaceStatus as Control,
    /// Run a surface's account command (`login`, `allow`, `deny`, `status`, `logout`);
    /// only on the daemon's own socket. Answered by [`SurfaceOutput`].
    SurfaceCommand(SurfaceCommandRequest) => SurfaceOutput as Control,
    /// Accept WebSocket clients on `addr` for as long as this connection lasts (what
    /// `weft serve` does). Answered by [`Listening`].
    Listen {
        /// `IP:PORT`; port 0 picks a free one. Off loopback it is always served over TLS.
        addr: String,
        /// Serve over TLS on loopback too (off loopback it always is).
        #[serde(default)]
        #[ts(optional)]
        tls: Option<bool>,
        /// The user's own certificate chain (PEM) instead of the home's self-signed one.
        #[serde(default)]
        #[ts(optional)]
        tls_cert: Option<String>,
        /// Its private key (PEM), with `tls_cert`.
        #[serde(default)]
        #[ts(optional)]
        tls_key: Option<String>,
    } => Listening as Control,
    /// The session library: managed and native sessions, pinned first, newest first.
    /// Answered by `LibrarySession`s.
    ListLibrary(LibraryQuery) => Vec<LibrarySession> as Read,
    /// Search prompts, replies and tool calls of every session, managed and native.
    /// Answered by `LibraryHit`s, best first, one per session.
    SearchLibrary(LibrarySearch) => Vec<LibraryHit> as Read,
    /// Some turns of a native session's transcript, read from the agent's file.
    /// Answered by `TranscriptPage`.
    OpenTranscript {
        /// The session (`agent:<native id>`, or a managed session with a native file).
        session_key: String,
        /// The first turn (0-based); default: the last `limit`.
        start: Option<u32>,
        /// How many turns (default 50).
        limit: Option<u32>,
    } => TranscriptPage as Read,
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
    } => TranscriptPage as Read,
    /// How far the library's indexer is. Answered by `LibraryProgress`.
    LibraryProgress {} => LibraryProgress as Read,
    /// Usage and cost, grouped. Answered by `UsageRow`s.
    Usage {
        /// The grouping.
        by: UsageBy,
        /// Only usage from this time on (ms since the epoch).
        #[ts(type = "number | null")]
        since: Option<i64>,
    } => Vec<UsageRow> as Read,
    /// Rename, archive, pin or delete a session's record. Answered by `null`.
    ManageSession {
        /// The session.
        session_key: String,
        /// What to do.
        action: SessionAction,
    } => () as Control,
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
    } => LibrarySession as Control,
    /// A session's whole transcript (managed or native, an adopted one's earlier
    /// turns from the agent's file first) as one document. Answered by its text.
    ExportSession {
        /// The session.
        session_key: String,
        /// Markdown or JSON (`{session, turns}`).
        format: ExportFormat,
    } => String as Read,
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
    } => ExportWritten as Control,
    /// Answered by `AccountInfo`s (never a secret).
    ListAccounts {} => Vec<AccountInfo> as Read,
    /// Add an account; a secret value is accepted over the Unix socket only. Answered
    /// by its `AccountInfo`.
    AddAccount(AddAccountRequest) => AccountInfo as Control,
    /// Rename an account. Answered by its `AccountInfo`.
    RenameAccount {
        /// The account's id (a request's own `id` is the reply's).
        account: String,
        /// Its new name.
        label: String,
    } => AccountInfo as Control,
    /// Remove an account: its record, its secret in the OS secret store, and (with
    /// `deleteHome`) its home folder. Answered by `null`.
    RemoveAccount {
        /// The account's id (a request's own `id` is the reply's).
        account: String,
        /// Also delete the account's home folder (its login, its transcripts).
        delete_home: bool,
    } => () as Control,
    /// Check that an account can be used now. Answered by `AccountTest`.
    TestAccount {
        /// The account's id (a request's own `id` is the reply's).
        account: String,
    } => AccountTest as Control,
    /// Usage per account per day, newest first. Answered by `AccountUsageDay`s.
    AccountUsage {
        /// Only this account's.
        account: Option<String>,
    } => Vec<AccountUsageDay> as Read,
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
    } => AccountSwitch as Control,
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
    } => () as Control,
    /// What [`ClientRequest::SwitchAccount`] would do; nothing changes. Answered by
    /// `AccountSwitch` (`switched` false).
    CheckAccountSwitch {
        /// The session.
        session_key: String,
        /// The account's id (`ambient`: the agent's own login).
        account: String,
    } => AccountSwitch as Read,
    /// Opt a session in to (or out of) switching accounts by itself when its account's
    /// limit is used up (see `AutoSwitch`). Answered by `AutoSwitch`.
    SetAutoSwitch {
        /// The session.
        session_key: String,
        /// On or off.
        enabled: bool,
    } => AutoSwitch as Control,
    /// Whether a session switches accounts by itself. Answered by `AutoSwitch`.
    GetAutoSwitch {
        /// The session.
        session_key: String,
    } => AutoSwitch as Read,
    /// The MCP servers configured in Weft (`$WEFT_HOME/mcp.json`, the workspace's
    /// `.weft/mcp.json`), each with its file and whether it is on. Answered by `McpList`.
    ListMcp {
        /// The workspace whose `.weft/mcp.json` counts too.
        workdir: Option<String>,
        /// Whether each is on for this session (its own choices count).
        session_key: Option<String>,
    } => McpList as Read,
    /// What a workspace's `.weft/` and the agents' project files grant, and whether the
    /// user trusted it. Answered by `WorkspaceTrust`.
    GetWorkspaceTrust {
        /// The workspace folder.
        workdir: String,
    } => WorkspaceTrust as Read,
    /// Trust a workspace: what it grants takes effect. `hash` is the one the user was
    /// shown; when the folder changed since, the request is refused (show it again).
    /// Answered by `WorkspaceTrust`.
    TrustWorkspace {
        /// The workspace folder.
        workdir: String,
        /// The `hash` of the `WorkspaceTrust` the user saw.
        hash: String,
    } => WorkspaceTrust as Control,
    /// Say no to a workspace's grants: it keeps running without them, and the app does
    /// not ask again until they change. Answered by `WorkspaceTrust`.
    DeclineWorkspaceTrust {
        /// The workspace folder.
        workdir: String,
        /// The `hash` of the `WorkspaceTrust` the user saw.
        hash: String,
    } => WorkspaceTrust as Control,
    /// Forget every trust decision for a workspace's repository (or folder). Answered
    /// by `WorkspaceTrust`.
    RevokeWorkspaceTrust {
        /// The workspace folder.
        workdir: String,
    } => WorkspaceTrust as Control,
    /// Turn MCP servers on (`true`) or off for one session, from its next spawn.
    /// Answered by the session's `McpList`.
    SetMcpEnabled {
        /// The session.
        session_key: String,
        /// Server name → on.
        servers: std::collections::BTreeMap<String, bool>,
    } => McpList as Control,
    /// Keep a secret an MCP server's `${secret:NAME}` names, in the OS secret store;
    /// accepted over the Unix socket only. Answered by `null`.
    SetMcpSecret {
        /// Its name.
        name: String,
        /// Its value.
        value: crate::SecretText,
    } => () as Control,
    /// Forget an MCP secret. Answered by `null`.
    RemoveMcpSecret {
        /// Its name.
        name: String,
    } => () as Control,
    /// Place a skill once for every agent: copy the folder at `path` (with its
    /// SKILL.md) into `$WEFT_HOME/skills`. Answered by its `SkillInfo`.
    AddSkill {
        /// The skill's folder (or its SKILL.md), absolute.
        path: String,
    } => Option<SkillInfo> as Control,
    /// Bring in what the user set up in the agents themselves: the MCP servers of each
    /// agent's own configuration (its spec's `own_mcp` files) into `$WEFT_HOME/mcp.json`,
    /// keeping the servers there and never copying a value that looks like a secret
    /// (it becomes a `${secret:NAME}` to set), and the skill folders of each agent's
    /// own skills folders under `HOME` copied as `AddSkill` does. Nothing already in
    /// Weft is changed. With `dry_run`, only says what it would do. Answered by
    /// `AgentSetupImport`.
    ImportAgentSetup {
        /// Only report; write nothing.
        dry_run: bool,
        /// Import the MCP servers.
        servers: bool,
        /// Import the skills.
        skills: bool,
    } => AgentSetupImport as Control,
    /// Delete a global skill. Answered by `null`.
    RemoveSkill {
        /// Its name.
        name: String,
    } => () as Control,
    /// Turn a skill on or off for every agent, from their next spawn. Answered by `null`.
    SetSkillEnabled {
        /// Its name.
        name: String,
        /// On or off.
        enabled: bool,
    } => () as Control,
    /// Log a login account in: the agent's own login (its spec's login command, inside
    /// the account's home, as `weft accounts login ID` runs it) in a terminal of the
    /// daemon's, keyed `login:ID`, this connection attached. Answered by [`TerminalAttached`]; frames follow.
    LoginAccount {
        /// The account's id.
        account: String,
        /// The terminal's width in columns (default 80).
        cols: Option<u16>,
        /// The terminal's height in rows (default 24).
        rows: Option<u16>,
    } => TerminalAttached as Control,
    /// The agent CLIs Weft installs, where each was found. Answered by `AgentInstall`s.
    ListAgentInstalls {} => Vec<AgentInstall> as Read,
    /// Install (or update) an agent CLI: npm, as `weft agents install NAME` runs it, in
    /// a terminal of the daemon's, keyed `install:NAME`, showing npm's progress. Answered by
    /// [`TerminalAttached`]; frames follow.
    InstallAgent {
        /// An agent CLI offered for install (`listAgentInstalls` names them).
        name: String,
        /// Another version than the tested one.
        version: Option<String>,
        /// The terminal's width in columns (default 80).
        cols: Option<u16>,
        /// The terminal's height in rows (default 24).
        rows: Option<u16>,
    } => TerminalAttached as Control,
    /// The git worktrees Weft made for sessions, each with its branch, how far it is
    /// ahead of and behind its base, whether it has uncommitted changes, its ports and
    /// its sessions. Answered by `WorktreeInfo`s.
    ListWorktrees {
        /// Only the worktrees of the repository holding this folder.
        #[serde(default)]
        #[ts(optional)]
        repo: Option<String>,
    } => Vec<WorktreeInfo> as Read,
    /// Start a worktree's `run` command (its dev server, from the repository's trusted
    /// `.weft/worktree.toml`, with the worktree's `WEFT_PORT` and `WEFT_PORT_RANGE`) in
    /// a terminal of the daemon's keyed `run:<repo>/<name>`, and attach this connection
    /// (the one open under that key is reused). Answered by [`TerminalAttached`];
    /// frames follow.
    RunWorktree {
        /// The worktree's name.
        name: String,
        /// The repository (a folder in it), when two repositories have a worktree of
        /// that name.
        #[serde(default)]
        #[ts(optional)]
        repo: Option<String>,
        /// The terminal's width in columns (default 80).
        cols: Option<u16>,
        /// The terminal's height in rows (default 24).
        rows: Option<u16>,
    } => TerminalAttached as Control,
    /// Land a session's worktree branch: commit its changes (`message`, else one
    /// proposed from the session's prompts), then merge, squash or rebase it into its
    /// base in the base repository; on conflicts the merge is aborted and they are
    /// answered. With `push` the branch is pushed to its remote instead, and with `pr`
    /// a pull request is opened with `gh`. Answered by `MergeOutcome`.
    MergeSession {
        /// The session (one started in a worktree).
        session_key: String,
        /// Merge commit, squash or rebase.
        #[serde(default)]
        mode: MergeMode,
        /// The commit message.
        #[serde(default)]
        #[ts(optional)]
        message: Option<String>,
        /// Push the branch to its remote instead of merging locally.
        #[serde(default)]
        push: bool,
        /// Push and open a pull request with `gh`.
        #[serde(default)]
        pr: bool,
    } => MergeOutcome as Control,
}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_verb_is_its_variant_and_every_wire_name_is_serdes() {
        let stop: ClientRequest = verb::Stop {
            session_key: "k".into(),
        }
        .into();
        assert_eq!(
            stop,
            ClientRequest::Stop {
                session_key: "k".into()
            }
        );
        let tag = serde_json::to_value(&stop).unwrap_or_default()["type"].clone();
        assert_eq!(tag, "stop");
        assert!(REPLIES.iter().any(|r| r.wire() == "listAgentInfo"));
        // Each verb's scope is declared beside its reply.
        assert_eq!(ClientRequest::ListAgentInfo {}.scope(), Scope::Read);
        assert_eq!(
            ClientRequest::Stop {
                session_key: "k".into()
            }
            .scope(),
            Scope::Control
        );
        assert_eq!(
            ClientRequest::Prompt(PromptRequest::default()).scope(),
            Scope::Control
        );
        let mut wires: Vec<String> = REPLIES.iter().map(ReplyType::wire).collect();
        wires.sort();
        wires.dedup();
        assert_eq!(wires.len(), REPLIES.len());
    }
}
