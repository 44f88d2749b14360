//! What a turn changed on disk, from the checkpoints Weft takes before and after it, and
//! the `restore` verb's request and reply.
//!
//! A turn's diff is computed from the files themselves, not from what the agent's edit
//! tools said: a file a shell command wrote shows the same as one an edit tool wrote.

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// The files one turn changed, between its two checkpoints.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct TurnDiff {
    /// The turn's number in the session: 1 for the first, counted across agent switches
    /// in history order (what `weft restore --turn N` takes).
    pub turn: u32,
    /// The checkpoint (a commit id) taken just before the turn.
    pub before: String,
    /// The checkpoint taken just after it.
    pub after: String,
    /// The changed files, in path order.
    pub files: Vec<TurnFile>,
    /// Untracked files the turn left that were over the size cap: listed, not stored,
    /// so not restorable.
    pub not_stored: Vec<NotStored>,
    /// Ignored files (`.env`) and ignored folders (`node_modules/`, ending in `/`) the
    /// turn changed: outside checkpoints, so not in the diff and never restored. Only
    /// what Weft's watch of the folder saw (an ignored folder's own entries, not deeper).
    pub ignored: Vec<String>,
    /// What was left out to keep the diff small (the hunks of some files), in words;
    /// none when nothing was.
    pub cut: Option<String>,
}

/// How a turn changed a file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum TurnChange {
    /// It is new.
    Added,
    /// Its content or mode changed.
    #[default]
    Modified,
    /// It is gone.
    Deleted,
    /// It moved from `oldPath` (its content may have changed too).
    Renamed,
}

/// One file a turn changed.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct TurnFile {
    /// Relative to the top of the work tree (the repository's, or the folder's).
    pub path: String,
    /// Where a renamed file was.
    pub old_path: Option<String>,
    /// Added, modified, deleted or renamed.
    pub change: TurnChange,
    /// Lines added.
    pub added: u32,
    /// Lines removed.
    pub removed: u32,
    /// A binary file (or a submodule): no hunks.
    pub binary: bool,
    /// The change as a unified diff (`--- a/…`, `+++ b/…`, `@@` hunks); none for a
    /// binary file and when the turn's hunks were over their cap (see `TurnDiff::cut`).
    pub hunks: Option<String>,
}

/// An untracked file left out of a checkpoint for its size.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct NotStored {
    /// Relative to the top of the work tree.
    pub path: String,
    /// Its size in bytes.
    #[ts(type = "number")]
    pub size: u64,
}

/// Which checkpoint of a turn a restore goes back to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum RestoreSide {
    /// As the files were just before the turn (undoes it).
    #[default]
    Before,
    /// As the turn left them.
    After,
}

/// What a restore did, or why it did nothing.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct Restored {
    /// Edits made since the session's last checkpoint that the restore would have
    /// overwritten: when set, nothing was written, and the same request with `yes`
    /// restores anyway (the edits are checkpointed first, so that too can be undone).
    pub overwrites: Option<TurnDiff>,
    /// The checkpoint of the files just before the restore: `restore --undo` goes back
    /// to it.
    pub undo: String,
    /// Files written back.
    pub written: Vec<String>,
    /// Files deleted (the target did not have them).
    pub deleted: Vec<String>,
    /// Files the target has that were left alone, because they would have overwritten
    /// a file no checkpoint holds (an untracked file over the size cap).
    pub kept: Vec<String>,
}
