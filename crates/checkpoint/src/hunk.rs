//! Reverting one hunk of a session's diff: the file's lines put back as they were
//! before that change only, through the checkpoints (the folder is checkpointed first,
//! so the revert is undone like any restore).
//!
//! The hunk must still apply exactly where it was: it comes from a diff whose newer
//! side is the session's latest checkpoint, and a file edited since no longer holds the
//! hunk's lines there, so the revert is refused (naming the file) instead of guessed.

use std::path::{Component, Path};

use crate::restore::Restored;
use crate::{ref_name, Checkpoint, Checkpoints, Error};

impl Checkpoints {
    /// Reverse-applies `hunk` (one `@@` hunk of a unified diff, its header first) to the
    /// file `path` (relative to [`Self::top`]), after checkpointing the folder on
    /// `session_ref` (the restore's undo point, message `weft: before restoring …`).
    pub fn revert_hunk(
        &self,
        session_ref: &str,
        path: &str,
        hunk: &str,
    ) -> Result<Restored, Error> {
        let full = self.work_file(path)?;
        let text = std::fs::read(&full)?;
        let text = String::from_utf8(text).map_err(|_| Error::NotText(path.to_owned()))?;
        let header = format!("--- a/{path}\n+++ b/{path}\n");
        let body = if hunk.ends_with('\n') {
            hunk.to_owned()
        } else {
            format!("{hunk}\n")
        };
        let patch = format!("{header}{body}");
        let patch = diffy::Patch::from_str(&patch)
            .map_err(|e| Error::BadHunk(format!("not a hunk of a unified diff: {e}")))?;
        if patch.hunks().len() != 1 {
            return Err(Error::BadHunk(format!(
                "give one hunk, not {}",
                patch.hunks().len()
            )));
        }
        let reverted = diffy::apply(&text, &patch.reverse()).map_err(|_| Error::Changed {
            paths: vec![path.to_owned()],
        })?;

        let name = ref_name(session_ref);
        let prev = self.resolve(&name)?;
        let (current, skipped) = self.write_tree()?;
        let message = format!("weft: before restoring a hunk of {path}");
        let commit = self.commit_on(&name, prev.as_deref(), &current, &message)?;
        std::fs::write(&full, reverted)?;
        Ok(Restored {
            undo: Checkpoint {
                commit,
                tree: current,
                skipped,
                ignored: Vec::new(),
            },
            written: vec![path.to_owned()],
            deleted: Vec::new(),
            kept: Vec::new(),
        })
    }

    /// `path` under the work tree's top, refused when it could lead anywhere else (an
    /// absolute path, `..`, a symbolic link) or is not a regular file.
    fn work_file(&self, path: &str) -> Result<std::path::PathBuf, Error> {
        let rel = Path::new(path);
        if path.is_empty() || !rel.components().all(|c| matches!(c, Component::Normal(_))) {
            return Err(Error::BadHunk(format!(
                "{path} is not a path inside the folder"
            )));
        }
        let mut at = self.top().to_path_buf();
        for part in rel.components() {
            at.push(part);
            let meta = std::fs::symlink_metadata(&at)?;
            if meta.file_type().is_symlink() {
                return Err(Error::BadHunk(format!(
                    "{path} goes through a symbolic link; revert it by hand"
                )));
            }
        }
        if !std::fs::metadata(&at)?.is_file() {
            return Err(Error::BadHunk(format!("{path} is not a file")));
        }
        Ok(at)
    }
}
