//! A checkpoint of a folder's files before and after every agent turn, for every agent.
//!
//! Edit-tool snapshots miss what an agent changes through a shell (lockfiles, generated
//! code, `sed -i`), so a checkpoint records what is on disk: the folder's files as a git
//! tree. Trees are written through an index of Weft's own, never the user's. The first
//! snapshot of a folder copies the user's index (the copy keeps the stat data and the
//! untracked cache, so only changed files are hashed; it keeps the original's mtime too,
//! or git's racy-timestamp check would be lost), runs `git status` on it to name what
//! changed, stages just those paths (`update-index`, or `add` for new files) and runs
//! `write-tree`. That index is then **kept** for the next snapshot, and the folder's
//! folders are **watched** (inotify, `watch.rs`): the next snapshot asks git only about
//! the paths something happened to, and when nothing did it is the last tree, without
//! running git at all. A whole `git status` (one `lstat` per file: ~90 ms at 30,000
//! files on a 2-core virtual machine) is left for when the watch's log cannot be trusted
//! or the user's index or exclude files changed (what is tracked may have changed: the
//! next snapshot starts again from a copy of the user's index). BENCHMARKS.md has the
//! figures. The tree is committed with `commit-tree`, each commit's parent the session's
//! previous checkpoint (none for the first, so a repository without commits works),
//! and the session's private ref (`refs/weft/checkpoints/<agent>/<id>`) moved with a
//! compare-and-swap `update-ref`. `git log` of that ref is the session's whole history:
//! pre and post of every turn ([`Checkpoints::snapshot_if_changed`] returns the latest
//! checkpoint instead of a new one when nothing changed). The user's index, stash, HEAD,
//! branches and working tree are never written (tests hash them before and after).
//!
//! **Which folder.** A folder inside a git work tree checkpoints that **whole work tree**,
//! not only the subfolder: an agent started in `repo/app` routinely edits `repo/Cargo.lock`
//! through its shell, and a turn's diff that hid that would lie. Paths in diffs, restores
//! and errors are relative to the work tree's top ([`Checkpoints::top`]). A linked worktree
//! is its own work tree with its own index; its refs live in the shared repository, so a
//! session's ref is visible from every worktree of the repository (the names differ per
//! session). A folder outside any repository gets a **shadow** git dir under the caller's
//! `shadow_root` (`GIT_DIR` there, `GIT_WORK_TREE` = the folder), named by a hash of the
//! folder's canonical path, so it behaves the same and the folder gains no `.git`.
//!
//! **What is not captured.** Ignored files (`.gitignore`, `info/exclude`, the user's global
//! excludes): `.env`, `node_modules`, build output. Listing which ignored paths a turn
//! changed would need a walk of the ignored trees on every snapshot, which is what makes
//! `node_modules` expensive, so it is not done here; the caller says that ignored files are
//! outside checkpoints. Untracked files larger than [`Options::max_untracked_size`] are not
//! stored either, and are listed in [`Checkpoint::skipped`]. "Untracked" means not in the
//! index the snapshot starts from: a copy of the user's index, or the index kept from the
//! previous snapshot (so a file that grows past the limit after its first capture keeps
//! being captured while that index is kept; a shadow's is kept for good).
//!
//! **Trust.** Every git call runs with `core.fsmonitor` and hooks disabled and without the
//! daemon's own `GIT_*` variables (see `git.rs`). Content filters (clean, smudge,
//! process) that the repository's own config defines are turned off for every call
//! (`Git::disarm_filters`): they are commands. The user's global ones (git-lfs) stay.
//!
//! **Restores** write files with `checkout-index` from a temporary index read from the
//! target tree, and delete the files the target does not have; untracked files that were
//! never captured (ignored or too large) are never deleted. Every restore first snapshots
//! the folder on the session's ref, so it can be undone, and can refuse when the folder
//! changed since an expected checkpoint (newer edits the caller should show first).

mod diff;
mod git;
mod hunk;
mod refname;
mod restore;
mod snapshot;
mod watch;

use std::collections::HashMap;
use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use sha2::{Digest, Sha256};

pub use diff::{FileChange, FileDiff, TurnDiff};
pub use refname::ref_name;
pub use restore::Restored;
pub use snapshot::LookedAt;

use git::Git;

/// The cap on untracked files stored in a checkpoint unless the caller sets another one.
pub const DEFAULT_MAX_UNTRACKED_SIZE: u64 = 10 * 1024 * 1024;

/// What can go wrong; callers branch on the variant, never on the message.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    #[error("could not start {command}: {source}")]
    Spawn {
        command: String,
        source: std::io::Error,
    },
    #[error("{command} failed ({status:?}): {stderr}")]
    Git {
        command: String,
        status: Option<i32>,
        stderr: String,
    },
    #[error("{0}")]
    Io(#[from] std::io::Error),
    #[error("{0} is not a folder")]
    NotAFolder(PathBuf),
    #[error("{0} is inside a git directory or a bare repository, not a work tree")]
    NotAWorkTree(PathBuf),
    #[error("{0} is not a checkpoint commit")]
    UnknownCheckpoint(String),
    /// Someone else moved the session's ref between reading it and moving it.
    #[error("the checkpoint ref {name} moved while a checkpoint was written")]
    RefMoved { name: String },
    /// The folder changed since the checkpoint the caller expected: restoring would
    /// overwrite these paths' newer contents.
    #[error("changed since the expected checkpoint: {}", paths.join(", "))]
    Changed { paths: Vec<String> },
    /// A hunk to revert that is not one, or names no file of the folder.
    #[error("{0}")]
    BadHunk(String),
    /// The file is not UTF-8 text: no hunk of lines to revert in it.
    #[error("{0} is not text")]
    NotText(String),
}

/// One recorded state of the folder's files.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Checkpoint {
    pub commit: String,
    pub tree: String,
    /// Untracked files not stored because they were over the size cap.
    pub skipped: Vec<Skipped>,
    /// Ignored files (and ignored folders, ending in `/`, something was made or removed
    /// in) that changed since the previous snapshot of the folder: never captured, so
    /// never restored. Known only with the watch ([`Options::watch`]): an ignored file
    /// git reports nothing for, or an ignored folder's own entries; deeper changes inside
    /// an ignored folder are not seen.
    pub ignored: Vec<String>,
}

/// An untracked file left out of a checkpoint, and its size in bytes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    pub path: String,
    pub size: u64,
}

/// Tunables; [`Default`] is what the daemon uses.
#[derive(Debug, Clone)]
pub struct Options {
    pub max_untracked_size: u64,
    /// Watch the work tree's folders (inotify) so a snapshot asks git only about what
    /// changed (`watch.rs`); off, every snapshot runs `git status` over everything.
    pub watch: bool,
}

impl Default for Options {
    fn default() -> Self {
        Self {
            max_untracked_size: DEFAULT_MAX_UNTRACKED_SIZE,
            watch: true,
        }
    }
}

/// Checkpoints of one folder's files.
#[derive(Debug, Clone)]
pub struct Checkpoints {
    git: Git,
    options: Options,
    /// The work tree's real index (a linked worktree has its own), copied, never written.
    index: PathBuf,
    /// `info/exclude` of the repository (or the shadow).
    exclude: PathBuf,
    work: Arc<Mutex<snapshot::Work>>,
    cache: Arc<Mutex<Cache>>,
}

/// What git said once and never changes: a commit's tree; and the head each session ref
/// had when this process last wrote or read it.
#[derive(Debug, Default)]
struct Cache {
    trees: HashMap<String, String>,
    heads: HashMap<String, Checkpoint>,
}

/// Entries past which the cache starts over.
const CACHE_MAX: usize = 4096;

impl Checkpoints {
    /// Opens `workdir`: its repository when it is in a git work tree, else a shadow git
    /// dir under `shadow_root` (created on first use).
    pub fn open(workdir: &Path, shadow_root: &Path) -> Result<Self, Error> {
        Self::open_with(workdir, shadow_root, Options::default())
    }

    pub fn open_with(workdir: &Path, shadow_root: &Path, options: Options) -> Result<Self, Error> {
        if !workdir.is_dir() {
            return Err(Error::NotAFolder(workdir.to_owned()));
        }
        let probe = Git {
            top: workdir.to_owned(),
            shadow_dir: None,
            filters: Vec::new(),
        };
        let mut cmd = probe.command(None);
        // `--show-toplevel` fails in a bare repository, so ask first whether this is one.
        cmd.args(["rev-parse", "--is-inside-work-tree"]);
        let out = git::output(cmd, None)?;
        let inside = String::from_utf8_lossy(&out.stdout).trim() == "true";
        let git = if out.status.success() {
            if !inside {
                return Err(Error::NotAWorkTree(workdir.to_owned()));
            }
            let mut git = Git {
                top: PathBuf::from(probe.line(None, ["rev-parse", "--show-toplevel"])?),
                shadow_dir: None,
                filters: Vec::new(),
            };
            git.disarm_filters()?;
            git
        } else if String::from_utf8_lossy(&out.stderr).contains("safe.directory") {
            // A repository git refuses (another user's, not in safe.directory) is still a
            // repository: a shadow beside it would checkpoint the wrong history.
            return Err(git::failed("git rev-parse".to_owned(), &out));
        } else {
            shadow(workdir, shadow_root)?
        };
        let index = match &git.shadow_dir {
            Some(dir) => dir.join("index"),
            None => git
                .top
                .join(git.line(None, ["rev-parse", "--git-path", "index"])?),
        };
        remove_stale_indexes(&index);
        let exclude = match &git.shadow_dir {
            Some(dir) => dir.join("info").join("exclude"),
            None => git
                .top
                .join(git.line(None, ["rev-parse", "--git-path", "info/exclude"])?),
        };
        Ok(Self {
            git,
            options,
            index,
            exclude,
            work: Arc::default(),
            cache: Arc::default(),
        })
    }

    /// The folder whose files are checkpointed; checkpoint paths are relative to it.
    pub fn top(&self) -> &Path {
        &self.git.top
    }

    /// Whether this folder is checkpointed in a shadow git dir (it is not in a repository).
    pub fn is_shadow(&self) -> bool {
        self.git.shadow_dir.is_some()
    }

    /// The session's latest checkpoint, if it has one.
    pub fn head(&self, session_ref: &str) -> Result<Option<Checkpoint>, Error> {
        let name = ref_name(session_ref);
        match self.resolve(&name)? {
            None => Ok(None),
            Some(commit) => self.checkpoint(&commit).map(Some),
        }
    }

    /// Every checkpoint of the session, newest first, with each commit's message.
    pub fn history(&self, session_ref: &str) -> Result<Vec<(Checkpoint, String)>, Error> {
        let name = ref_name(session_ref);
        if self.resolve(&name)?.is_none() {
            return Ok(Vec::new());
        }
        let out = self
            .git
            .run(None, ["log", "-z", "--format=%H %T %B", &name, "--"])?;
        Ok(git::nul_fields(&out)
            .filter_map(|entry| {
                let text = String::from_utf8_lossy(entry);
                let mut parts = text.splitn(3, ' ');
                let commit = parts.next()?.to_owned();
                let tree = parts.next()?.to_owned();
                let message = parts.next().unwrap_or_default().trim_end().to_owned();
                let checkpoint = Checkpoint {
                    commit,
                    tree,
                    skipped: Vec::new(),
                    ignored: Vec::new(),
                };
                Some((checkpoint, message))
            })
            .collect())
    }

    /// Deletes the session's ref; its commits become unreachable and git's gc takes them.
    pub fn delete(&self, session_ref: &str) -> Result<(), Error> {
        let name = ref_name(session_ref);
        if self.resolve(&name)?.is_some() {
            self.git.run(None, ["update-ref", "-d", &name])?;
        }
        self.remember_head(&name, None);
        Ok(())
    }

    fn lock_cache(&self) -> std::sync::MutexGuard<'_, Cache> {
        self.cache
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// The session ref's head as this process last wrote or read it.
    pub(crate) fn cached_head(&self, name: &str) -> Option<Checkpoint> {
        self.lock_cache().heads.get(name).cloned()
    }

    pub(crate) fn remember_head(&self, name: &str, head: Option<Checkpoint>) {
        let mut cache = self.lock_cache();
        if cache.heads.len() > CACHE_MAX {
            cache.heads.clear();
        }
        match head {
            Some(head) => {
                if cache.trees.len() > CACHE_MAX {
                    cache.trees.clear();
                }
                cache.trees.insert(head.commit.clone(), head.tree.clone());
                cache.heads.insert(name.to_owned(), head);
            }
            None => {
                cache.heads.remove(name);
            }
        }
    }

    pub(crate) fn cached_tree(&self, rev: &str) -> Option<String> {
        self.lock_cache().trees.get(rev).cloned()
    }

    pub(crate) fn remember_tree(&self, rev: &str, tree: &str) {
        let mut cache = self.lock_cache();
        if cache.trees.len() > CACHE_MAX {
            cache.trees.clear();
        }
        cache.trees.insert(rev.to_owned(), tree.to_owned());
    }

    fn resolve(&self, name: &str) -> Result<Option<String>, Error> {
        let mut cmd = self.git.command(None);
        cmd.args(["rev-parse", "--verify", "--quiet"])
            .arg(format!("{name}^{{commit}}"));
        let out = git::output(cmd, None)?;
        let id = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        Ok((out.status.success() && !id.is_empty()).then_some(id))
    }

    /// A commit id (or anything naming a commit) as a [`Checkpoint`].
    fn checkpoint(&self, rev: &str) -> Result<Checkpoint, Error> {
        let mut cmd = self.git.command(None);
        cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{commit}}"));
        let out = git::output(cmd, None)?;
        let commit = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if !out.status.success() || commit.is_empty() {
            return Err(Error::UnknownCheckpoint(rev.to_owned()));
        }
        let tree = self.tree_of(&commit)?;
        Ok(Checkpoint {
            commit,
            tree,
            skipped: Vec::new(),
            ignored: Vec::new(),
        })
    }
}

/// A temporary index outlives its snapshot only when the process died mid-way (it is as
/// large as the real index); one older than an hour belongs to no running snapshot.
fn remove_stale_indexes(index: &Path) {
    const STALE: std::time::Duration = std::time::Duration::from_secs(3600);
    let Some(Ok(entries)) = index.parent().map(std::fs::read_dir) else {
        return;
    };
    for entry in entries.flatten() {
        let name = entry.file_name();
        if !name.to_string_lossy().starts_with("weft-index") {
            continue;
        }
        // By ctime: a live copy carries the real index's (maybe old) mtime on purpose.
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_secs());
        let old = entry.metadata().is_ok_and(|m| {
            use std::os::unix::fs::MetadataExt;
            u64::try_from(m.ctime()).is_ok_and(|c| now.saturating_sub(c) > STALE.as_secs())
        });
        if old {
            let _ = std::fs::remove_file(entry.path());
        }
    }
}

/// The shadow git dir of a folder outside any repository.
fn shadow(workdir: &Path, shadow_root: &Path) -> Result<Git, Error> {
    let top = workdir.canonicalize()?;
    let digest = Sha256::digest(top.as_os_str().as_encoded_bytes());
    let name: String = digest.iter().take(12).map(|b| format!("{b:02x}")).collect();
    std::fs::create_dir_all(shadow_root)?;
    // Absolute, because git runs in the folder and would resolve a relative GIT_DIR there.
    let dir = shadow_root.canonicalize()?.join(format!("{name}.git"));
    let git = Git {
        top,
        shadow_dir: Some(dir.clone()),
        filters: Vec::new(),
    };
    if !dir.join("HEAD").is_file() {
        // `init --bare` because the folder must not get a `.git`; the work tree is given on
        // every call instead (GIT_WORK_TREE).
        let bare = Git {
            top: shadow_root.to_owned(),
            shadow_dir: None,
            filters: Vec::new(),
        };
        let init = [
            OsStr::new("init"),
            OsStr::new("--quiet"),
            OsStr::new("--bare"),
        ];
        bare.run(None, init.into_iter().chain([dir.as_os_str()]))?;
        git.run(None, ["config", "core.bare", "false"])?;
        git.run(None, ["config", "core.untrackedCache", "true"])?;
        // Said for the person who finds this folder: which folder it shadows.
        std::fs::write(
            dir.join("weft-folder"),
            git.top.as_os_str().as_encoded_bytes(),
        )?;
        std::fs::create_dir_all(dir.join("info"))?;
        std::fs::write(
            dir.join("info").join("exclude"),
            "# Weft's shadow of a folder outside git: the folder's own .gitignore files apply too.\n",
        )?;
    }
    Ok(git)
}
