//! The worktrees Weft made, with each one's port range: `$WEFT_HOME/worktrees.json`.
//!
//! A JSON file rather than the session store: the registry is a handful of records that
//! the daemon, a test and a user reading it by hand all need, it has to be written
//! before the store knows the session (the worktree exists before the session's first
//! turn), and nothing else in the store joins on it. It is written whole to a temporary
//! file and renamed over the old one (a crash leaves the old or the new file, never half
//! of one), under an exclusive lock on a lock file beside it, so two daemons' or a
//! daemon's and a test's read-modify-write never interleave.
//!
//! **Ports.** Each worktree gets [`PORTS_PER_WORKTREE`] ports starting at
//! `base + 10·k` for the lowest `k` no recorded worktree holds; a range is held as long
//! as its record exists, so it is never handed to another worktree while that one lives.

use std::fs::File;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::Error;

/// Ports per worktree.
pub const PORTS_PER_WORKTREE: u16 = 10;

/// The file's name in a Weft home.
pub const FILE: &str = "worktrees.json";

/// One worktree Weft made.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Entry {
    /// Its name (`weft/<name>` is its branch).
    pub name: String,
    /// The main work tree of its repository.
    pub repo: PathBuf,
    /// The worktree's folder.
    pub path: PathBuf,
    /// Its branch.
    pub branch: String,
    /// What it merges into: the branch checked out when it was made (or `--from`'s
    /// branch); a commit id when that was a detached HEAD.
    pub base: String,
    /// The first of its ports.
    pub port: u16,
    /// Sessions started in it (keys).
    #[serde(default)]
    pub sessions: Vec<String>,
    /// Made (ms since the epoch).
    pub created_at: i64,
    /// The setup command's log, when one ran.
    #[serde(default)]
    pub setup_log: Option<PathBuf>,
    /// The folders `link` shared (symlinks: not changes, removed before the worktree).
    #[serde(default)]
    pub linked: Vec<String>,
}

impl Entry {
    /// `first-last`, as `WEFT_PORT_RANGE` says it.
    pub fn port_range(&self) -> String {
        format!(
            "{}-{}",
            self.port,
            self.port.saturating_add(PORTS_PER_WORKTREE - 1)
        )
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct Records {
    #[serde(default)]
    worktrees: Vec<Entry>,
}

/// The registry file of a Weft home.
#[derive(Debug, Clone)]
pub struct Registry {
    path: PathBuf,
}

impl Registry {
    /// The registry of the Weft home `home`.
    pub fn new(home: &Path) -> Self {
        Self {
            path: home.join(FILE),
        }
    }

    /// Every record.
    pub fn list(&self) -> Result<Vec<Entry>, Error> {
        let _lock = self.lock()?;
        Ok(self.read()?.worktrees)
    }

    /// The record of the worktree that holds `dir` (its folder or one inside it).
    pub fn find_by_dir(&self, dir: &Path) -> Result<Option<Entry>, Error> {
        Ok(self.list()?.into_iter().find(|e| dir.starts_with(&e.path)))
    }

    /// Changes the records under the lock and writes them back (nothing is written
    /// when `f` fails).
    pub fn update<T>(
        &self,
        f: impl FnOnce(&mut Vec<Entry>) -> Result<T, Error>,
    ) -> Result<T, Error> {
        let _lock = self.lock()?;
        let mut records = self.read()?;
        let out = f(&mut records.worktrees)?;
        self.write(&records)?;
        Ok(out)
    }

    /// Adds `key` to the sessions of the worktree at `path`.
    pub fn add_session(&self, path: &Path, key: &str) -> Result<(), Error> {
        self.update(|all| {
            if let Some(e) = all.iter_mut().find(|e| e.path == path) {
                if !e.sessions.iter().any(|k| k == key) {
                    e.sessions.push(key.to_string());
                }
            }
            Ok(())
        })
    }

    fn lock(&self) -> Result<File, Error> {
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
        }
        let lock_path = self.path.with_extension("lock");
        let file = File::options()
            .create(true)
            .truncate(false)
            .write(true)
            .open(&lock_path)
            .map_err(|e| Error::io(&lock_path, e))?;
        file.lock().map_err(|e| Error::io(&lock_path, e))?;
        Ok(file)
    }

    fn read(&self) -> Result<Records, Error> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| Error::Config {
                path: self.path.clone(),
                message: e.to_string(),
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Records::default()),
            Err(e) => Err(Error::io(&self.path, e)),
        }
    }

    fn write(&self, records: &Records) -> Result<(), Error> {
        let tmp = self.path.with_extension("json.tmp");
        let bytes = serde_json::to_vec_pretty(records).map_err(|e| Error::Config {
            path: self.path.clone(),
            message: e.to_string(),
        })?;
        let mut f = File::create(&tmp).map_err(|e| Error::io(&tmp, e))?;
        f.write_all(&bytes).map_err(|e| Error::io(&tmp, e))?;
        f.sync_all().map_err(|e| Error::io(&tmp, e))?;
        std::fs::rename(&tmp, &self.path).map_err(|e| Error::io(&self.path, e))
    }
}

/// The first port of the lowest range from `base` that overlaps no record's range.
pub(crate) fn free_port(all: &[Entry], base: u16) -> Result<u16, Error> {
    let n = u32::from(PORTS_PER_WORKTREE);
    let mut port = u32::from(base);
    while port + n - 1 <= u32::from(u16::MAX) {
        let taken = all.iter().any(|e| {
            let other = u32::from(e.port);
            other < port + n && port < other + n
        });
        if !taken {
            return u16::try_from(port).map_err(|_| Error::NoPorts { base });
        }
        port += n;
    }
    Err(Error::NoPorts { base })
}
