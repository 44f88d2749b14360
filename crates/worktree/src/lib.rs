//! A git worktree per session, made and removed with the real `git` binary.
//!
//! Two agents in one folder clobber each other's files; each in its own worktree (its
//! own branch `weft/<name>`, its own folder, one shared object store) they cannot. The
//! worktree lives **outside** the repository, under `$WEFT_WORKTREES` or
//! `$XDG_DATA_HOME/weft/worktrees/<repo>/<name>` (`~/.local/share/weft/worktrees/…`):
//! inside it, every tool that walks the repository (ripgrep, an IDE's indexer, a test
//! runner's glob) would see the files twice, and under `$WEFT_HOME` the sandbox, which
//! hides that folder from agents' commands, would hide the worktree too.
//!
//! **Only what Weft made.** Every worktree Weft makes is recorded in the registry
//! (`registry.rs`, `$WEFT_HOME/worktrees.json`) with its port range; [`Worktrees::remove`]
//! refuses a folder that is not recorded there, one with uncommitted changes, and one a
//! live session still works in (the caller knows which sessions are live). Peers lost
//! users' work exactly there (research notes §2: a pool that reused a live sibling's
//! worktree). A removal keeps the branch: what was committed stays reachable.
//!
//! **What a worktree lacks** (ignored files, dependencies) comes from the repository's
//! `.weft/worktree.toml` ([`config`]), honoured only when the workspace is trusted.
//!
//! **Trust.** Git runs with hooks and `core.fsmonitor` off and the repository's own
//! content filters disarmed (`git.rs`): `worktree add` would otherwise run the
//! repository's `post-checkout` hook before the user trusted anything.

pub mod config;
mod git;
pub mod hook;
pub mod merge;
mod names;
pub mod registry;

use std::path::{Path, PathBuf};

pub use config::WorktreeConfig;
pub use registry::{Entry, Registry, PORTS_PER_WORKTREE};

use git::Git;

/// The default first port of the first worktree (`WEFT_PORT_BASE` changes it).
pub const DEFAULT_PORT_BASE: u16 = 40000;

/// What went wrong, typed so a surface can say what to do.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// git could not be started.
    #[error("could not run `{command}`: {source}")]
    Spawn {
        /// The git command.
        command: String,
        /// Why.
        source: std::io::Error,
    },
    /// git failed.
    #[error("`{command}` failed ({}): {stderr}", status.map_or("killed".to_string(), |s| format!("exit {s}")))]
    Git {
        /// The git command.
        command: String,
        /// Its exit status.
        status: Option<i32>,
        /// What it said.
        stderr: String,
    },
    /// A file could not be read or written.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// `.weft/worktree.toml` or the registry is not valid.
    #[error("{}: {message}", path.display())]
    Config {
        /// The file.
        path: PathBuf,
        /// Why.
        message: String,
    },
    /// Not a folder inside a git work tree.
    #[error("{0} is not inside a git repository; a worktree needs one (`git init`)")]
    NotARepository(PathBuf),
    /// A name git or the folder layout cannot take.
    #[error("`{0}` is not a worktree name: use letters, digits, `-`, `_` and `.`, not first")]
    BadName(String),
    /// The name is taken.
    #[error("a worktree or branch named `{0}` already exists; pick another name (or `auto`)")]
    Exists(String),
    /// No worktree Weft made is there.
    #[error("{0} is not a worktree Weft made; Weft never removes one it did not make")]
    NotOurs(PathBuf),
    /// It has uncommitted changes.
    #[error("the worktree {} has uncommitted changes ({}); commit them (`weft merge`, or git commit) or stash them (git stash) first", path.display(), files.join(", "))]
    Dirty {
        /// The worktree.
        path: PathBuf,
        /// Some of the changed files.
        files: Vec<String>,
    },
    /// A live session works in it.
    #[error("the worktree {} is in use by {}; archive or stop those sessions first", path.display(), sessions.join(", "))]
    Live {
        /// The worktree.
        path: PathBuf,
        /// The sessions.
        sessions: Vec<String>,
    },
    /// Every port range from the base is held.
    #[error("no free port range from {base}; remove a worktree or lower WEFT_PORT_BASE")]
    NoPorts {
        /// The configured base.
        base: u16,
    },
    /// The merge cannot start (the base is not checked out, or it has changes).
    #[error("{0}")]
    Refused(String),
}

impl Error {
    pub(crate) fn io(path: &Path, source: std::io::Error) -> Self {
        Error::Io {
            path: path.to_path_buf(),
            source,
        }
    }
}

/// Where worktrees go, where they are recorded, and where ports start.
#[derive(Debug, Clone)]
pub struct Worktrees {
    /// The worktrees root (`<root>/<repo>/<name>`).
    pub root: PathBuf,
    /// The registry.
    pub registry: Registry,
    /// The first port of the first range.
    pub port_base: u16,
}

/// A worktree as made: its record and what `.weft/worktree.toml` brought in.
#[derive(Debug, Clone)]
pub struct Created {
    /// Its record.
    pub entry: Entry,
    /// The repository's config (default when untrusted or absent).
    pub config: WorktreeConfig,
    /// Ignored files copied in by `include`.
    pub included: Vec<PathBuf>,
    /// Folders shared by `link`.
    pub linked: Vec<PathBuf>,
}

/// A worktree's state now.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Status {
    /// The branch checked out there (none: a detached HEAD).
    pub branch: Option<String>,
    /// Commits on it that its base has not.
    pub ahead: u32,
    /// Commits on its base that it has not.
    pub behind: u32,
    /// Changed or untracked files (ignored ones do not count).
    pub dirty: Vec<String>,
}

impl Worktrees {
    /// From the environment: `WEFT_WORKTREES`, else `$XDG_DATA_HOME/weft/worktrees`,
    /// else `~/.local/share/weft/worktrees`; `WEFT_PORT_BASE` (default 40000); the
    /// registry in `weft_home`.
    pub fn from_env(weft_home: &Path) -> Self {
        let var = |k: &str| {
            std::env::var_os(k)
                .filter(|v| !v.is_empty())
                .map(PathBuf::from)
        };
        let root = var("WEFT_WORKTREES").unwrap_or_else(|| {
            var("XDG_DATA_HOME")
                .or_else(|| var("HOME").map(|h| h.join(".local/share")))
                .unwrap_or_else(|| PathBuf::from("/tmp"))
                .join("weft/worktrees")
        });
        let port_base = std::env::var("WEFT_PORT_BASE")
            .ok()
            .and_then(|v| v.trim().parse().ok())
            .unwrap_or(DEFAULT_PORT_BASE);
        Self {
            root,
            registry: Registry::new(weft_home),
            port_base,
        }
    }

    /// Makes branch `weft/<name>` from `from` (default: HEAD of `dir`'s repository) and
    /// its worktree, records it with a free port range, and brings in what the
    /// repository's `.weft/worktree.toml` says (when `trusted`). `name` `auto` picks a
    /// free readable name. The setup command is the caller's to run ([`hook`]).
    pub fn create(
        &self,
        dir: &Path,
        name: &str,
        from: Option<&str>,
        trusted: bool,
    ) -> Result<Created, Error> {
        let repo_git = Git::open(dir).map_err(|_| Error::NotARepository(dir.to_path_buf()))?;
        let top = repo_git
            .line(["rev-parse", "--show-toplevel"])
            .map_err(|_| Error::NotARepository(dir.to_path_buf()))?;
        let top = std::fs::canonicalize(&top).map_err(|e| Error::io(Path::new(&top), e))?;
        let repo_git = Git::open(&top)?;
        let config = WorktreeConfig::load(&top, trusted)?;
        let start = match from {
            Some(r) => repo_git
                .line([
                    "rev-parse",
                    "--verify",
                    "--end-of-options",
                    &format!("{r}^{{commit}}"),
                ])
                .map_err(|_| {
                    Error::Refused(format!("`{r}` names no commit in {}", top.display()))
                })?,
            None => repo_git
                .line(["rev-parse", "--verify", "HEAD^{commit}"])
                .map_err(|_| {
                    Error::Refused(format!(
                        "{} has no commit yet; commit once first",
                        top.display()
                    ))
                })?,
        };
        let base = base_of(&repo_git, from)?;
        let repo_name = top
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_else(|| "repo".into());
        // Canonical, as the kernel records a session's folder: a spawn's folder is then
        // found in the registry by a plain prefix test.
        let repo_root = self.root.join(&repo_name);
        std::fs::create_dir_all(&repo_root).map_err(|e| Error::io(&repo_root, e))?;
        let repo_root = std::fs::canonicalize(&repo_root).map_err(|e| Error::io(&repo_root, e))?;
        let entry = self.registry.update(|all| {
            let name = if name == "auto" {
                names::pick(|n| taken(&repo_git, all, &top, &repo_root, n))?
            } else {
                check_name(&repo_git, name)?;
                if taken(&repo_git, all, &top, &repo_root, name)? {
                    return Err(Error::Exists(name.to_string()));
                }
                name.to_string()
            };
            let port = registry::free_port(all, self.port_base)?;
            let path = repo_root.join(&name);
            let branch = format!("weft/{name}");
            // Parallel checkout: on this project's 2-core machine a 30,000-file worktree
            // took ~10 s with git's default (one process, almost all of it system time
            // in `openat`) and 1–2 s with four workers (BENCHMARKS.md). Older gits ignore
            // the setting.
            repo_git.run([
                "-c".as_ref(),
                "checkout.workers=4".as_ref(),
                "worktree".as_ref(),
                "add".as_ref(),
                "-b".as_ref(),
                branch.as_ref(),
                path.as_os_str(),
                start.as_ref(),
            ])?;
            let entry = Entry {
                name,
                repo: top.clone(),
                path,
                branch,
                base: base.clone(),
                port,
                sessions: Vec::new(),
                created_at: now_ms(),
                setup_log: None,
                linked: Vec::new(),
            };
            all.push(entry.clone());
            Ok(entry)
        })?;
        let included = config::copy_included(&repo_git, &entry.path, &config.include)?;
        let linked = config::link_shared(&top, &entry.path, &config.link)?;
        let entry = if linked.is_empty() {
            entry
        } else {
            let strings: Vec<String> = linked.iter().map(|p| p.display().to_string()).collect();
            self.registry.update(|all| {
                let e = all
                    .iter_mut()
                    .find(|e| e.path == entry.path)
                    .ok_or_else(|| Error::NotOurs(entry.path.clone()))?;
                e.linked = strings;
                Ok(e.clone())
            })?
        };
        Ok(Created {
            entry,
            config,
            included,
            linked,
        })
    }

    /// The recorded worktree at `path` (or holding it).
    pub fn find(&self, path: &Path) -> Result<Option<Entry>, Error> {
        self.registry.find_by_dir(path)
    }

    /// Branch, ahead/behind its base, and uncommitted changes of a recorded worktree.
    pub fn status(&self, entry: &Entry) -> Result<Status, Error> {
        let git = Git::open(&entry.path)?;
        let branch = git
            .line(["symbolic-ref", "--short", "-q", "HEAD"])
            .ok()
            .filter(|b| !b.is_empty());
        let (behind, ahead) = match git.line([
            "rev-list",
            "--left-right",
            "--count",
            &format!("{}...HEAD", entry.base),
        ]) {
            Ok(counts) => {
                let mut it = counts.split_whitespace().map(|n| n.parse().unwrap_or(0));
                (it.next().unwrap_or(0), it.next().unwrap_or(0))
            }
            // The base branch is gone: nothing to count against.
            Err(_) => (0, 0),
        };
        Ok(Status {
            branch,
            ahead,
            behind,
            dirty: dirty_files(&git, &entry.linked)?,
        })
    }

    /// Removes a recorded worktree: refused when `live` names sessions still working
    /// there, or when it has uncommitted changes. Runs nothing itself: the caller runs
    /// `teardown` first ([`hook`]). The branch stays; the record goes.
    pub fn remove(&self, path: &Path, live: &[String]) -> Result<Entry, Error> {
        let entry = self
            .registry
            .list()?
            .into_iter()
            .find(|e| e.path == path)
            .ok_or_else(|| Error::NotOurs(path.to_path_buf()))?;
        if !live.is_empty() {
            return Err(Error::Live {
                path: entry.path.clone(),
                sessions: live.to_vec(),
            });
        }
        if entry.path.exists() {
            let git = Git::open(&entry.path)?;
            let dirty = dirty_files(&git, &entry.linked)?;
            if !dirty.is_empty() {
                return Err(Error::Dirty {
                    path: entry.path.clone(),
                    files: dirty,
                });
            }
            // The shared folders are symlinks git would call untracked.
            for rel in &entry.linked {
                let link = entry.path.join(rel);
                if std::fs::symlink_metadata(&link).is_ok_and(|m| m.file_type().is_symlink()) {
                    std::fs::remove_file(&link).map_err(|e| Error::io(&link, e))?;
                }
            }
            // No --force: git itself refuses a worktree with changes we did not see.
            Git::open(&entry.repo)?.run([
                "worktree".as_ref(),
                "remove".as_ref(),
                entry.path.as_os_str(),
            ])?;
        } else {
            Git::open(&entry.repo)?.run(["worktree", "prune"])?;
        }
        self.registry.update(|all| {
            all.retain(|e| e.path != entry.path);
            Ok(())
        })?;
        Ok(entry)
    }
}

/// What a new worktree merges back into: `from` when it is a local branch, else the
/// branch checked out now (a commit id on a detached HEAD).
fn base_of(git: &Git, from: Option<&str>) -> Result<String, Error> {
    if let Some(r) = from {
        let short = r.strip_prefix("refs/heads/").unwrap_or(r);
        if git
            .line([
                "rev-parse",
                "--verify",
                "-q",
                &format!("refs/heads/{short}"),
            ])
            .is_ok()
        {
            return Ok(short.to_string());
        }
    }
    match git.line(["symbolic-ref", "--short", "-q", "HEAD"]) {
        Ok(b) if !b.is_empty() => Ok(b),
        _ => git.line(["rev-parse", "HEAD"]),
    }
}

fn check_name(git: &Git, name: &str) -> Result<(), Error> {
    let ok_chars = !name.is_empty()
        && name.len() <= 100
        && !name.starts_with(['-', '.'])
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !ok_chars
        || git
            .run(["check-ref-format", &format!("refs/heads/weft/{name}")])
            .is_err()
    {
        return Err(Error::BadName(name.to_string()));
    }
    Ok(())
}

/// A name is taken when recorded for this repository, its branch exists, or its folder.
fn taken(
    git: &Git,
    all: &[Entry],
    top: &Path,
    repo_root: &Path,
    name: &str,
) -> Result<bool, Error> {
    if all.iter().any(|e| e.repo == top && e.name == name) || repo_root.join(name).exists() {
        return Ok(true);
    }
    let branch = format!("refs/heads/weft/{name}");
    Ok(git.line(["rev-parse", "--verify", "-q", &branch]).is_ok())
}

/// Changed and untracked files, ignoring the shared folders' symlinks.
fn dirty_files(git: &Git, linked: &[String]) -> Result<Vec<String>, Error> {
    let mut args: Vec<String> = [
        "status",
        "--porcelain",
        "-z",
        "--untracked-files=normal",
        "--",
        ".",
    ]
    .map(String::from)
    .to_vec();
    args.extend(linked.iter().map(|l| format!(":(exclude,top,literal){l}")));
    let out = git.run(&args)?;
    Ok(out
        .split('\0')
        .filter(|s| s.len() > 3)
        .map(|s| s[3..].to_string())
        .take(20)
        .collect())
}

pub(crate) fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
}

#[cfg(test)]
mod tests;
