//! The checkpoints port: the session's files recorded before and after every turn of
//! every agent, each turn's diff computed from them, and restores.
//!
//! The kernel decides *when* (around each turn, on a blocking thread, never while a turn
//! runs for a restore) and *which turn* (its number `N`, counted from 1 over the
//! session's history across agent switches, as `forkSession`'s `at` counts); the port
//! decides *how* (the service wires git trees under private refs, `weft-checkpoint`).
//! The default keeps none, so a kernel without the port runs turns exactly as before.

use std::path::Path;

use weft_protocol::{RestoreSide, Restored, TurnDiff};

/// A restore as the kernel hands it to the port (see `ClientRequest::Restore`).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct RestoreRequest {
    /// The turn; none: the last checkpointed one.
    pub turn: Option<u32>,
    /// Before or after it.
    pub side: RestoreSide,
    /// Only these files (relative to the top of the work tree).
    pub paths: Option<Vec<String>>,
    /// Overwrite edits made since the session's last checkpoint.
    pub yes: bool,
    /// Undo the last restore instead.
    pub undo: bool,
}

/// Why a checkpoint call did nothing or failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CheckpointError {
    /// This folder is not checkpointed (too large outside git, not a folder, …): the
    /// session runs without checkpoints, and says why.
    #[error("{0}")]
    Unavailable(String),
    /// The request names no checkpoint there is (no such turn, nothing to undo).
    #[error("{0}")]
    Invalid(String),
    /// Git (or the disk) failed.
    #[error("{0}")]
    Failed(String),
}

/// Records and restores a session's files. Every method blocks (it runs `git`): the
/// kernel calls them on a blocking thread.
pub trait Checkpointer: Send + Sync {
    /// False when this port keeps no checkpoints at all (the kernel then skips the
    /// bookkeeping around turns).
    fn active(&self) -> bool {
        true
    }

    /// Records `workdir`'s files just before turn `turn` (task `task_id`) of
    /// `session_key`; the checkpoint's id.
    fn before_turn(
        &self,
        session_key: &str,
        workdir: &Path,
        turn: u32,
        task_id: &str,
    ) -> Result<String, CheckpointError>;

    /// Records them just after the turn and answers what changed since `before`.
    fn after_turn(
        &self,
        session_key: &str,
        workdir: &Path,
        turn: u32,
        task_id: &str,
        before: &str,
    ) -> Result<TurnDiff, CheckpointError>;

    /// Puts the files back as `request` says (see [`RestoreRequest`]).
    fn restore(
        &self,
        session_key: &str,
        workdir: &Path,
        request: &RestoreRequest,
    ) -> Result<Restored, CheckpointError>;

    /// Reverse-applies one hunk to `path` (see `ClientRequest::RevertHunk`), the folder
    /// checkpointed first so the revert can be undone.
    fn revert_hunk(
        &self,
        _session_key: &str,
        _workdir: &Path,
        _path: &str,
        _hunk: &str,
    ) -> Result<Restored, CheckpointError> {
        Err(CheckpointError::Unavailable(
            "this Weft keeps no checkpoints".into(),
        ))
    }

    /// What changed between two of `session_key`'s checkpoints (none: its first, its
    /// latest). Either must be one of this session's: no other commit is read.
    fn diff(
        &self,
        _session_key: &str,
        _workdir: &Path,
        _from: Option<&str>,
        _to: Option<&str>,
    ) -> Result<TurnDiff, CheckpointError> {
        Err(CheckpointError::Unavailable(
            "this Weft keeps no checkpoints".into(),
        ))
    }
}

/// No checkpoints: turns run as they did before checkpoints existed; a restore says so.
pub struct NoCheckpoints;

impl Checkpointer for NoCheckpoints {
    fn active(&self) -> bool {
        false
    }

    fn before_turn(&self, _: &str, _: &Path, _: u32, _: &str) -> Result<String, CheckpointError> {
        Err(Self::none())
    }

    fn after_turn(
        &self,
        _: &str,
        _: &Path,
        _: u32,
        _: &str,
        _: &str,
    ) -> Result<TurnDiff, CheckpointError> {
        Err(Self::none())
    }

    fn restore(&self, _: &str, _: &Path, _: &RestoreRequest) -> Result<Restored, CheckpointError> {
        Err(Self::none())
    }
}

impl NoCheckpoints {
    fn none() -> CheckpointError {
        CheckpointError::Unavailable("this Weft keeps no checkpoints".into())
    }
}
