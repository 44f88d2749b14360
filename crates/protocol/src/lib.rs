//! Weft's wire vocabulary, shared by the kernel, the store, every driver and every surface.
//!
//! Serde types only: no runtime, no I/O. A session's state is one [`UniversalSnapshot`]
//! per turn, accumulated from [`DriverEvent`]s by the [`Accumulator`]; surfaces receive
//! [`SnapshotPatch`]es (see [`diff`] and [`apply`]) numbered by a gap-free per-session
//! `seq` in a [`PatchEvent`]. TypeScript types for the UI are generated from these
//! (ts-rs) into `ui/src/generated/`; `cargo test -p weft-protocol` fails when they drift.
//!
//! Conventions (codex's app-server rules): tagged enums with a `type` field, camelCase
//! fields, string ids, timestamps as integer milliseconds since the epoch.
#![deny(missing_docs)]

mod account;
mod accumulate;
mod api;
mod command;
pub mod degraded;
mod error;
mod event;
mod files;
mod install;
mod key;
mod library;
mod mcp;
mod patch;
mod snapshot;
mod status;
mod terminal_frame;
mod trust;
mod turn_diff;
mod verbs;
mod wire;
mod worktree;

pub use account::{
    AccountInfo, AccountSwitch, AccountTest, AccountUsageDay, AddAccountRequest, AutoSwitch,
    LimitWindow, SecretInput, SecretSource, SecretText,
};
pub use accumulate::{Accumulator, ACTIVITY_LINES};
pub use api::{
    AnswerRequest, ClientEnv, ClientMessage, Hello, InboxItem, Listening, Scope, ServerMessage,
    TerminalAttached, Welcome,
};
pub use command::{CommandSource, SlashCommand};
pub use degraded::Degraded;
pub use error::{ErrorCode, WireError};
pub use event::DriverEvent;
pub use files::{
    DirEntry, DirListing, FileContent, WorkspaceEntry, WorkspaceEntryKind, WorkspaceFilesQuery,
};
pub use install::AgentInstall;
pub use key::{make_session_key, split_session_key};
pub use library::{
    ExportFormat, ExportWritten, LibraryHit, LibraryProgress, LibraryQuery, LibrarySearch,
    LibrarySession, ModelCost, Origin, SessionAction, TranscriptPage, UsageBlock, UsageBy,
    UsageRow,
};
pub use mcp::{
    AgentSetupImport, ImportOutcome, ImportedMcpServer, ImportedSkill, McpList, McpServerInfo,
    McpServerStatus, McpState,
};
pub use patch::{apply, apply_in_place, diff, PatchEvent, SnapshotPatch};
pub use snapshot::{
    Artifact, ArtifactKind, ChangeKind, Choice, CommandRisk, CommandVerdict, FileChange,
    Interaction, InteractionKind, Phase, Plan, PlanStep, Question, QuestionType, QueuedPrompt,
    StepStatus, SubAgent, ToolCall, ToolKind, ToolStatus, UniversalSnapshot, Usage,
};
pub use status::{
    DaemonStatus, PrewarmRequest, Prewarmed, SandboxStatus, SurfaceCommandRequest, SurfaceOutput,
    SurfaceStatus, WarmProcess,
};
pub use terminal_frame::{frame_kind, TerminalFrame, TerminalInput};
pub use trust::{TrustGrant, WorkspaceTrust};
pub use turn_diff::{NotStored, RestoreSide, Restored, TurnChange, TurnDiff, TurnFile};
pub use verbs::{verb, ClientRequest, ReplyType, Verb, REPLIES};
pub use wire::{
    permission, AccountKindInfo, AgentFacts, AgentInfo, AskedInteraction, Capabilities, ForkOrigin,
    Given, InteractAction, InteractRequest, InteractionResponse, ModelInfo, OpenTerminalRequest,
    PendingSwitch, PromptAccepted, PromptRequest, SearchHit, SessionInfo, SessionRecord, SkillInfo,
    SnapshotAt, SteerOutcome, ToolInfo,
};
pub use worktree::{
    MergeConflict, MergeMode, MergeOutcome, PrCheck, SessionWorktree, WorktreeInfo, WorktreeRequest,
};
