//! `LoomIO`: the verbs every surface calls. Surfaces are one-line calls into this.

use std::sync::Arc;

use async_trait::async_trait;
use weft_protocol::{
    AgentInfo, ClientEnv, InteractRequest, ModelInfo, OpenTerminalRequest, PromptAccepted,
    PromptRequest, SearchHit, SessionInfo, SkillInfo, SnapshotAt, SteerOutcome, ToolInfo,
    UniversalSnapshot,
};

use crate::driver::TuiSpec;
use crate::error::KernelError;
use crate::feed::Patches;

/// Who is asking: the surface (for the record of who answered what) and the
/// environment its turns run their agents with.
#[derive(Debug, Clone, Default)]
pub struct Caller {
    /// `cli`, `app`, `browser`, … (empty: the kernel's own process).
    pub surface: String,
    /// The client's environment; `None`: the kernel's own.
    pub env: Option<Arc<ClientEnv>>,
}

impl Caller {
    /// A caller in the kernel's own process, with its environment.
    pub fn local() -> Self {
        Self::default()
    }
}

/// A terminal opened for a session: run `spec` in a PTY, then call `close_terminal`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TerminalOpened {
    /// The session the terminal belongs to.
    pub session_key: String,
    /// The terminal turn's task id.
    pub task_id: String,
    /// What to run.
    pub spec: TuiSpec,
    /// The environment to start it from instead of the caller's whole one: set when
    /// the session's account asks for a cleared environment (its allow-listed part).
    pub base_env: Option<Arc<ClientEnv>>,
}

/// A session's snapshot now, and every patch after it.
pub struct Subscription {
    /// The snapshot and the seq it is current at.
    pub snapshot: SnapshotAt,
    /// Patches with `seq > snapshot.seq`, in order. An `Overflowed` error means patches
    /// were missed: take a fresh snapshot.
    pub patches: Patches,
}

/// The kernel's verbs.
#[async_trait]
pub trait LoomIO: Send + Sync {
    /// Starts (or queues) a turn.
    async fn prompt(&self, request: PromptRequest) -> Result<PromptAccepted, KernelError>;
    /// Stops the running turn of a session; the next queued prompt starts.
    async fn stop(&self, session_key: &str) -> Result<(), KernelError>;
    /// Sends a message into the running turn, or queues it.
    async fn steer(&self, session_key: &str, text: String) -> Result<SteerOutcome, KernelError>;
    /// Opens the agent's own terminal UI for a session. While it is open the session has
    /// one writer: structured prompts queue until `close_terminal`.
    async fn open_terminal(
        &self,
        request: OpenTerminalRequest,
    ) -> Result<TerminalOpened, KernelError>;
    /// The terminal closed: the structured rail takes the session back.
    async fn close_terminal(&self, session_key: &str) -> Result<(), KernelError>;
    /// Answers a pending interaction.
    async fn interact(&self, request: InteractRequest) -> Result<(), KernelError>;
    /// One session's snapshot, then its patches.
    async fn subscribe(&self, session_key: &str) -> Result<Subscription, KernelError>;
    /// Every session's patches (what a window forwards). On `Overflowed`, re-read
    /// snapshots.
    fn subscribe_all(&self) -> Patches;
    /// One session's current snapshot.
    async fn get_snapshot(&self, session_key: &str) -> Result<SnapshotAt, KernelError>;
    /// Final snapshots of a session's turns, oldest first.
    async fn get_history(&self, session_key: &str) -> Result<Vec<UniversalSnapshot>, KernelError>;
    /// Sessions, newest first.
    async fn list_sessions(&self, workdir: Option<&str>) -> Result<Vec<SessionInfo>, KernelError>;
    /// Past turns whose prompt or reply contain every word of `query` (the last one as
    /// a prefix), best match first, at most `limit`.
    async fn search(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, KernelError>;
    /// Every registered agent, installed or not.
    async fn list_agent_info(&self) -> Vec<AgentInfo>;
    /// An agent's models.
    async fn list_models(&self, agent: &str) -> Result<Vec<ModelInfo>, KernelError>;
    /// An agent's reasoning efforts.
    async fn list_effort(&self, agent: &str) -> Result<Vec<String>, KernelError>;
    /// Tools offered to agents.
    async fn list_tools(&self) -> Vec<ToolInfo>;
    /// Skills visible from a folder.
    async fn list_skills(&self, workdir: Option<&str>) -> Vec<SkillInfo>;
}
