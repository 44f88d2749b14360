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
mod error;
mod event;
mod key;
mod library;
mod patch;
mod snapshot;
mod wire;

pub use account::{
    AccountInfo, AccountTest, AccountUsageDay, AddAccountRequest, LimitWindow, SecretInput,
    SecretSource, SecretText,
};
pub use accumulate::{Accumulator, ACTIVITY_LINES};
pub use api::{
    frame_kind, AnswerRequest, ClientEnv, ClientMessage, ClientRequest, DaemonStatus, Hello,
    InboxItem, Listening, Scope, ServerMessage, TerminalAttached, TerminalFrame, TerminalInput,
    Welcome,
};
pub use error::{ErrorCode, WireError};
pub use event::DriverEvent;
pub use key::{make_session_key, split_session_key};
pub use library::{
    LibraryHit, LibraryProgress, LibraryQuery, LibrarySearch, LibrarySession, ModelCost, Origin,
    SessionAction, TranscriptPage, UsageBy, UsageRow,
};
pub use patch::{apply, apply_in_place, diff, PatchEvent, SnapshotPatch};
pub use snapshot::{
    Artifact, ArtifactKind, Choice, Interaction, InteractionKind, Phase, Plan, PlanStep, Question,
    QuestionType, QueuedPrompt, StepStatus, SubAgent, ToolCall, ToolKind, ToolStatus,
    UniversalSnapshot, Usage,
};
pub use wire::{
    permission, AgentInfo, AskedInteraction, Capabilities, InteractAction, InteractRequest,
    InteractionResponse, ModelInfo, NativeSessionInfo, OpenTerminalRequest, PromptAccepted,
    PromptRequest, SearchHit, SessionInfo, SessionRecord, SkillInfo, SnapshotAt, SteerOutcome,
    ToolInfo,
};
