//! The kernel's checkpoints port over `weft-checkpoint`: git trees of the session's
//! folder before and after every turn, on the session's private ref, a shadow git dir
//! under `$WEFT_HOME/checkpoints` for a folder outside any repository.
//!
//! Each commit's first line names its turn (`weft turn 3 before`, `weft turn 3 after`),
//! which is how a restore finds it; a restore's own checkpoints say `weft: before
//! restoring …` (the crate's, what `undo` goes back to) and `weft restored …`.
//!
//! Guard: a folder outside git that holds more than `WEFT_CHECKPOINT_MAX_FILES` files
//! (default 50,000; `.gitignore`d ones not counted) is not shadowed: the first snapshot
//! would hash all of it (a session started in `$HOME` or `/`), so the session runs
//! without checkpoints and says so in `degraded`. A repository whose work tree is the
//! home folder or `/` (dotfiles kept in git) is counted the same way: every snapshot of
//! it would walk, and store, everything under it. `WEFT_CHECKPOINT_MAX_FILE_SIZE` (bytes,
//! default 10 MiB) is the size over which an untracked file is listed, not stored.
//! Files git ignores (`.env`, `node_modules`, build output) are outside checkpoints
//! altogether; the turn's diff names those the checkpoints' watch saw change
//! (`ignored`: a file, or an ignored folder something was made or removed in), so the
//! turn and the restore dialog can say they are not restored.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use parking_lot::Mutex;
use weft_checkpoint::{Checkpoints, FileChange, Options};
use weft_kernel::checkpoints::{CheckpointError, Checkpointer, RestoreRequest};
use weft_protocol::{NotStored, RestoreSide, Restored, TurnChange, TurnDiff, TurnFile};

/// Default of `WEFT_CHECKPOINT_MAX_FILES`.
const DEFAULT_MAX_FILES: usize = 50_000;
/// The hunks a turn's diff carries in the snapshot, all files together; past it the
/// remaining files are listed with their line counts only. Every client of the
/// session gets the snapshot, so it stays small.
const MAX_HUNK_BYTES: usize = 256 * 1024;
/// The hunks a diff asked for (`sessionDiff`: the Review) carries: it goes to the one
/// client that asked, which draws it virtualized, so a 20,000-line diff of ordinary
/// lines (1–3 MB) comes whole; far under the wire's 64 MiB frame.
const MAX_REVIEW_HUNK_BYTES: usize = 16 * 1024 * 1024;
/// The files a turn's diff lists; past it they are counted only.
const MAX_FILES_LISTED: usize = 2_000;
/// The ignored paths a turn's diff names.
const MAX_IGNORED_LISTED: usize = 200;
const RESTORING: &str = "weft: before restoring";

/// The port: one opened [`Checkpoints`] per folder, or why that folder has none.
pub struct GitCheckpoints {
    shadow_root: PathBuf,
    max_files: usize,
    options: Options,
    opened: Mutex<HashMap<PathBuf, Result<Arc<Checkpoints>, String>>>,
}

impl GitCheckpoints {
    /// Shadow git dirs under `home/checkpoints`; limits from the environment.
    pub fn new(home: &Path) -> Self {
        let var = |name: &str| std::env::var(name).ok().and_then(|v| v.trim().parse().ok());
        let mut options = Options::default();
        if let Some(size) = var("WEFT_CHECKPOINT_MAX_FILE_SIZE") {
            options.max_untracked_size = size;
        }
        Self {
            shadow_root: home.join("checkpoints"),
            max_files: var("WEFT_CHECKPOINT_MAX_FILES")
                .and_then(|n: u64| usize::try_from(n).ok())
                .unwrap_or(DEFAULT_MAX_FILES),
            options,
            opened: Mutex::new(HashMap::new()),
        }
    }

    fn open(&self, workdir: &Path) -> Result<Arc<Checkpoints>, CheckpointError> {
        if let Some(known) = self.opened.lock().get(workdir) {
            return known.clone().map_err(CheckpointError::Unavailable);
        }
        let opened = self.open_new(workdir);
        match &opened {
            Ok(_) | Err(CheckpointError::Unavailable(_)) => {
                let kept = opened.clone().map_err(|e| e.to_string());
                self.opened.lock().insert(workdir.to_owned(), kept);
            }
            // A failure of git may pass; the next turn tries again.
            Err(_) => {}
        }
        opened
    }

    fn open_new(&self, workdir: &Path) -> Result<Arc<Checkpoints>, CheckpointError> {
        if !in_git(workdir) {
            self.check_size(workdir, "is not in a git repository")?;
        }
        let checkpoints = Checkpoints::open_with(workdir, &self.shadow_root, self.options.clone())
            .map_err(|e| match e {
                weft_checkpoint::Error::NotAFolder(_) | weft_checkpoint::Error::NotAWorkTree(_) => {
                    CheckpointError::Unavailable(format!("no checkpoints: {e}"))
                }
                e => CheckpointError::Failed(e.to_string()),
            })?;
        // A repository whose work tree is the home folder or `/` (dotfiles kept in git)
        // would have every snapshot walk, and store, everything under it.
        if !checkpoints.is_shadow() && is_home_or_root(checkpoints.top()) {
            self.check_size(
                checkpoints.top(),
                "is a git work tree that is the home folder (or /)",
            )?;
        }
        Ok(Arc::new(checkpoints))
    }

    /// Refuses a folder (`what` it is) with more files than the limit, counted only up
    /// to it, so `/` costs what a folder at the limit does.
    fn check_size(&self, dir: &Path, what: &str) -> Result<(), CheckpointError> {
        let mut files = 0usize;
        let walk = ignore::WalkBuilder::new(dir)
            .hidden(false)
            .git_ignore(true)
            .git_exclude(false)
            .git_global(true)
            .require_git(false)
            .parents(false)
            .filter_entry(|e| e.file_name() != ".git")
            .build();
        for entry in walk.flatten() {
            if entry.file_type().is_some_and(|t| !t.is_dir()) {
                files += 1;
                if files > self.max_files {
                    return Err(CheckpointError::Unavailable(format!(
                        "no checkpoints: {} {what} and holds more than {} files (WEFT_CHECKPOINT_MAX_FILES); turns cannot be restored",
                        dir.display(),
                        self.max_files
                    )));
                }
            }
        }
        Ok(())
    }
}

/// Whether `top` is the home folder of the daemon's user, or `/`.
fn is_home_or_root(top: &Path) -> bool {
    let home = std::env::var_os("HOME")
        .map(PathBuf::from)
        .and_then(|h| h.canonicalize().ok());
    top == Path::new("/") || home.as_deref() == Some(top)
}

/// Whether `dir` or a folder above it has a `.git` (git's own discovery decides in the
/// end; this only spares a large repository the count).
fn in_git(dir: &Path) -> bool {
    dir.ancestors().any(|d| d.join(".git").exists())
}

fn failed(e: weft_checkpoint::Error) -> CheckpointError {
    CheckpointError::Failed(e.to_string())
}

fn message(turn: u32, side: &str, session_key: &str, task_id: &str) -> String {
    format!("weft turn {turn} {side}\n\nsession {session_key}\ntask {task_id}\n")
}

impl Checkpointer for GitCheckpoints {
    fn before_turn(
        &self,
        session_key: &str,
        workdir: &Path,
        turn: u32,
        task_id: &str,
    ) -> Result<String, CheckpointError> {
        let checkpoints = self.open(workdir)?;
        let msg = message(turn, "before", session_key, task_id);
        // A turn that follows the last one with nothing changed in between starts from
        // its "after" checkpoint: no commit of its own (a restore finds it as the parent
        // of this turn's "after").
        let checkpoint = checkpoints
            .snapshot_if_changed(session_key, &msg)
            .map_err(failed)?;
        Ok(checkpoint.commit)
    }

    fn after_turn(
        &self,
        session_key: &str,
        workdir: &Path,
        turn: u32,
        task_id: &str,
        before: &str,
    ) -> Result<TurnDiff, CheckpointError> {
        let checkpoints = self.open(workdir)?;
        let msg = message(turn, "after", session_key, task_id);
        let after = checkpoints.snapshot(session_key, &msg).map_err(failed)?;
        let diff = checkpoints.diff(before, &after.commit).map_err(failed)?;
        let mut turn_diff = to_wire(diff, MAX_HUNK_BYTES);
        turn_diff.turn = turn;
        turn_diff.before = before.to_owned();
        turn_diff.after = after.commit;
        turn_diff.ignored = after.ignored.into_iter().take(MAX_IGNORED_LISTED).collect();
        turn_diff.not_stored = after
            .skipped
            .into_iter()
            .map(|s| NotStored {
                path: s.path,
                size: s.size,
            })
            .collect();
        Ok(turn_diff)
    }

    fn restore(
        &self,
        session_key: &str,
        workdir: &Path,
        request: &RestoreRequest,
    ) -> Result<Restored, CheckpointError> {
        let checkpoints = self.open(workdir)?;
        let history = checkpoints.history(session_key).map_err(failed)?;
        let (target, what) = target(&history, request)?;
        let paths: Option<Vec<&str>> = request
            .paths
            .as_ref()
            .map(|p| p.iter().map(String::as_str).collect());
        if !request.yes {
            // The newest checkpoint is the folder as the last turn (or restore) left it;
            // what differs now is someone's edit that only the restore would undo.
            if let Some((head, _)) = history.first() {
                let since = checkpoints
                    .changes_since(&head.commit, paths.as_deref())
                    .map_err(failed)?;
                if !since.files.is_empty() {
                    return Ok(Restored {
                        overwrites: Some(to_wire(since, MAX_HUNK_BYTES)),
                        ..Default::default()
                    });
                }
            }
        }
        let done = checkpoints
            .restore(session_key, &target, paths.as_deref(), None)
            .map_err(failed)?;
        // The restored state is the session's newest checkpoint: a later restore compares
        // the folder with it, not with the state this one replaced.
        let msg = format!(
            "weft restored {what}\n\nsession {session_key}\nundo {}\n",
            done.undo.commit
        );
        checkpoints.snapshot(session_key, &msg).map_err(failed)?;
        Ok(Restored {
            overwrites: None,
            undo: done.undo.commit,
            written: done.written,
            deleted: done.deleted,
            kept: done.kept,
        })
    }

    fn revert_hunk(
        &self,
        session_key: &str,
        workdir: &Path,
        path: &str,
        hunk: &str,
    ) -> Result<Restored, CheckpointError> {
        let checkpoints = self.open(workdir)?;
        let done = checkpoints
            .revert_hunk(session_key, path, hunk)
            .map_err(|e| match e {
                weft_checkpoint::Error::Changed { .. } => CheckpointError::Invalid(format!(
                    "{path} changed where the hunk was since the diff was read; read the diff again"
                )),
                e @ (weft_checkpoint::Error::BadHunk(_) | weft_checkpoint::Error::NotText(_)) => {
                    CheckpointError::Invalid(e.to_string())
                }
                e => failed(e),
            })?;
        let msg = format!(
            "weft restored a hunk of {path}\n\nsession {session_key}\nundo {}\n",
            done.undo.commit
        );
        checkpoints.snapshot(session_key, &msg).map_err(failed)?;
        Ok(Restored {
            overwrites: None,
            undo: done.undo.commit,
            written: done.written,
            deleted: done.deleted,
            kept: done.kept,
        })
    }

    fn diff(
        &self,
        session_key: &str,
        workdir: &Path,
        from: Option<&str>,
        to: Option<&str>,
    ) -> Result<TurnDiff, CheckpointError> {
        let checkpoints = self.open(workdir)?;
        let history = checkpoints.history(session_key).map_err(failed)?;
        // Only this session's own checkpoints: a client naming any other commit (another
        // session's, the repository's history) is refused, not read.
        let pick =
            |id: Option<&str>, default: Option<&(weft_checkpoint::Checkpoint, String)>| match id {
                None => default.map(|(c, _)| c.commit.clone()).ok_or_else(|| {
                    CheckpointError::Invalid("this session has no checkpoints yet".into())
                }),
                Some(id) => history
                    .iter()
                    .find(|(c, _)| c.commit == id)
                    .map(|(c, _)| c.commit.clone())
                    .ok_or_else(|| {
                        CheckpointError::Invalid(format!(
                            "{id} is not one of this session's checkpoints"
                        ))
                    }),
            };
        let from = pick(from, history.last())?;
        let to = pick(to, history.first())?;
        let diff = checkpoints.diff(&from, &to).map_err(failed)?;
        let mut turn_diff = to_wire(diff, MAX_REVIEW_HUNK_BYTES);
        turn_diff.before = from;
        turn_diff.after = to;
        Ok(turn_diff)
    }
}

/// The checkpoint `request` names in the session's `history` (newest first), and how
/// to say it.
fn target(
    history: &[(weft_checkpoint::Checkpoint, String)],
    request: &RestoreRequest,
) -> Result<(String, String), CheckpointError> {
    if request.undo {
        return history
            .iter()
            .find(|(_, m)| m.starts_with(RESTORING))
            .map(|(c, _)| {
                (
                    c.commit.clone(),
                    "the files as they were before the last restore".into(),
                )
            })
            .ok_or_else(|| CheckpointError::Invalid("this session has no restore to undo".into()));
    }
    let side = match request.side {
        RestoreSide::Before => "before",
        RestoreSide::After => "after",
    };
    let turn_of = |m: &str| -> Option<(u32, String)> {
        let rest = m.lines().next()?.strip_prefix("weft turn ")?;
        let (n, s) = rest.split_once(' ')?;
        Some((n.parse().ok()?, s.to_owned()))
    };
    let turn = match request.turn {
        Some(n) => n,
        None => history
            .iter()
            .find_map(|(_, m)| turn_of(m).map(|(n, _)| n))
            .ok_or_else(|| {
                CheckpointError::Invalid("this session has no checkpointed turn yet".into())
            })?,
    };
    let named = |side: &str| {
        history
            .iter()
            .position(|(_, m)| turn_of(m).is_some_and(|(n, s)| n == turn && s == side))
    };
    let found = match named(side) {
        Some(i) => Some(i),
        // A turn that started where the one before ended has no "before" commit: the
        // state before it is its "after"'s parent, the next older entry of the chain.
        None if side == "before" => named("after").map(|i| i + 1),
        None => None,
    };
    found
        .and_then(|i| history.get(i))
        .map(|(c, _)| (c.commit.clone(), format!("turn {turn} {side}")))
        .ok_or_else(|| {
            CheckpointError::Invalid(format!(
                "turn {turn} of this session has no checkpoint {side} it (turns before checkpoints existed, or in a folder without them, have none)"
            ))
        })
}

/// The crate's diff as the wire's, its hunks capped at `max_hunk_bytes` for all files
/// together ([`MAX_HUNK_BYTES`] in a snapshot).
fn to_wire(diff: weft_checkpoint::TurnDiff, max_hunk_bytes: usize) -> TurnDiff {
    let total = diff.files.len();
    let mut budget = max_hunk_bytes;
    let mut hunks_cut = 0usize;
    let mut files = Vec::new();
    for f in diff.files.into_iter().take(MAX_FILES_LISTED) {
        let hunks = if f.binary || f.unified.is_empty() {
            None
        } else if f.unified.len() <= budget {
            budget -= f.unified.len();
            Some(f.unified)
        } else {
            hunks_cut += 1;
            None
        };
        files.push(TurnFile {
            path: f.path,
            old_path: f.old_path,
            change: match f.change {
                FileChange::Added => TurnChange::Added,
                FileChange::Deleted => TurnChange::Deleted,
                FileChange::Renamed => TurnChange::Renamed,
                _ => TurnChange::Modified,
            },
            added: u32::try_from(f.added).unwrap_or(u32::MAX),
            removed: u32::try_from(f.removed).unwrap_or(u32::MAX),
            binary: f.binary,
            hunks,
        });
    }
    let mut cut = Vec::new();
    if hunks_cut > 0 {
        cut.push(format!(
            "the hunks of {hunks_cut} file(s) are left out (over {} KiB of hunks); their line counts are kept",
            max_hunk_bytes / 1024
        ));
    }
    if total > MAX_FILES_LISTED {
        cut.push(format!(
            "{} more changed file(s) are not listed (over {MAX_FILES_LISTED} files)",
            total - MAX_FILES_LISTED
        ));
    }
    TurnDiff {
        files,
        cut: (!cut.is_empty()).then(|| cut.join("; ")),
        ..Default::default()
    }
}
