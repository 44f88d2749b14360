//! The `restore` verb: a session's files put back as they were before or after one of
//! its turns, through the checkpoints port, between turns only.

use weft_protocol::{Restored, TurnDiff};

use crate::checkpoints::{CheckpointError, RestoreRequest};
use crate::error::KernelError;
use crate::hub::Loom;

impl Loom {
    /// Restores `session_key`'s files as `request` says (see `ClientRequest::Restore`).
    pub async fn restore_files(
        &self,
        session_key: &str,
        request: RestoreRequest,
    ) -> Result<Restored, KernelError> {
        let runner = self.runner(session_key).await?;
        let port = self.env.checkpoints.clone();
        let key = session_key.to_owned();
        let result = runner
            .between_turns(move |workdir| port.restore(&key, &workdir, &request))
            .await?;
        result.map_err(|e| match e {
            CheckpointError::Invalid(m) | CheckpointError::Unavailable(m) => {
                KernelError::BadRequest(m)
            }
            CheckpointError::Failed(m) => KernelError::Internal(m),
        })
    }

    /// Reverts one hunk of `session_key`'s diff in `path` (see
    /// `ClientRequest::RevertHunk`), between turns only.
    pub async fn revert_hunk(
        &self,
        session_key: &str,
        path: String,
        hunk: String,
    ) -> Result<Restored, KernelError> {
        let runner = self.runner(session_key).await?;
        let port = self.env.checkpoints.clone();
        let key = session_key.to_owned();
        let result = runner
            .between_turns(move |workdir| port.revert_hunk(&key, &workdir, &path, &hunk))
            .await?;
        result.map_err(|e| match e {
            CheckpointError::Invalid(m) | CheckpointError::Unavailable(m) => {
                KernelError::BadRequest(m)
            }
            CheckpointError::Failed(m) => KernelError::Internal(m),
        })
    }

    /// What `session_key` changed between two of its checkpoints (see
    /// `ClientRequest::SessionDiff`). Reads only: any time, a turn running or not.
    pub async fn session_diff(
        &self,
        session_key: &str,
        from: Option<String>,
        to: Option<String>,
    ) -> Result<TurnDiff, KernelError> {
        let runner = self.runner(session_key).await?;
        let workdir = std::path::PathBuf::from(&runner.record().workdir);
        let port = self.env.checkpoints.clone();
        let key = session_key.to_owned();
        let result = tokio::task::spawn_blocking(move || {
            port.diff(&key, &workdir, from.as_deref(), to.as_deref())
        })
        .await
        .map_err(|e| KernelError::Internal(format!("a checkpoint diff failed: {e}")))?;
        result.map_err(|e| match e {
            CheckpointError::Invalid(m) | CheckpointError::Unavailable(m) => {
                KernelError::BadRequest(m)
            }
            CheckpointError::Failed(m) => KernelError::Internal(m),
        })
    }
}
