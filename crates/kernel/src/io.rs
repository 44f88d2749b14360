//! What the kernel's verbs speak: who asks ([`Caller`]), a terminal opened, a
//! subscription.

use std::sync::Arc;

use weft_protocol::{ClientEnv, SnapshotAt};

use crate::driver::TuiSpec;
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
