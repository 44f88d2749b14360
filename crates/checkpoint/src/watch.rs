//! What changed in a work tree since the last checkpoint, told by the kernel (inotify).
//!
//! Without it every checkpoint runs `git status` over the whole work tree: one `lstat` per
//! file, about 90 ms for 30,000 files on a 2-core virtual machine where a syscall costs
//! microseconds, twice a turn. Git's own fsmonitor would spare that, but it is a command a
//! repository's config names (the trust boundary turns it off) and git has no built-in one
//! on Linux. So the checkpoints watch the work tree's folders themselves, and a snapshot
//! asks git only about the paths something happened to ([`Watch::drain`]).
//!
//! What is watched: every folder of the work tree except `.git` and the folders git itself
//! calls ignored (`ls-files --others --ignored --directory`: `node_modules`, `target`), so
//! an ignored tree of 100,000 folders costs nothing. Ignored files are outside checkpoints,
//! so a change there need not be captured; it is only said: an ignored folder is watched
//! by itself (what is made or removed directly in it: a package `npm install` adds), and
//! an ignored file beside tracked ones (`.env`) shows as a path git does not report.
//!
//! When the log cannot be trusted it says so ([`Watch::lost`]) and the snapshot looks at
//! everything, as it would without a watch: the kernel's queue overflowed, a watched folder
//! was moved (its watch now names the wrong path) or the top went away, or a `.gitignore`,
//! `.gitattributes` or `.gitmodules` changed (what is captured, and how, changes without an
//! event on the files it concerns). A folder made since the last snapshot is watched by
//! the next one (unless git calls it ignored: a new `node_modules`), before git looks at
//! it as a whole.

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ffi::OsStr;
use std::path::Path;

use inotify::{EventMask, Inotify, WatchDescriptor, WatchMask};

/// Past this many folders a watch is not made (each costs the kernel about 1 KiB, and the
/// user's limit is shared with every other watcher); snapshots look at everything.
const MAX_FOLDERS: usize = 50_000;
/// Past this many new folders between two snapshots the watch is rebuilt.
const MAX_UNWATCHED: usize = 64;

pub(crate) struct Watch {
    inotify: Inotify,
    folders: HashMap<WatchDescriptor, String>,
    /// Paths (relative to the top, `/`-separated) something happened to since the last
    /// [`Watch::take`].
    dirty: BTreeSet<String>,
    /// Ignored folders, each watched by itself only (not what is below it).
    ignored_folders: HashMap<WatchDescriptor, String>,
    /// Ignored folders something happened in (directly) since the last take.
    ignored_hits: BTreeSet<String>,
    /// Folders made since the last snapshot, not watched yet.
    unwatched: BTreeSet<String>,
    lost: bool,
}

impl std::fmt::Debug for Watch {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Watch")
            .field("folders", &self.folders.len())
            .field("dirty", &self.dirty.len())
            .field("unwatched", &self.unwatched)
            .field("lost", &self.lost)
            .finish()
    }
}

fn mask() -> WatchMask {
    WatchMask::MODIFY
        | WatchMask::CLOSE_WRITE
        | WatchMask::ATTRIB
        | WatchMask::CREATE
        | WatchMask::DELETE
        | WatchMask::MOVED_FROM
        | WatchMask::MOVED_TO
        | WatchMask::DELETE_SELF
        | WatchMask::MOVE_SELF
        | WatchMask::DONT_FOLLOW
        | WatchMask::ONLYDIR
        | WatchMask::EXCL_UNLINK
}

impl Watch {
    /// Watches `top`'s folders but `.git` and `ignored` (relative, without a trailing `/`).
    /// `None` when the kernel refuses (no inotify, the user's watch limit) or the tree has
    /// too many folders: the caller then looks at everything every time.
    pub(crate) fn start(top: &Path, ignored: &HashSet<String>) -> Option<Self> {
        let inotify = Inotify::init().ok()?;
        let mut folders = HashMap::new();
        let mut stack = vec![String::new()];
        while let Some(rel) = stack.pop() {
            let dir = if rel.is_empty() {
                top.to_owned()
            } else {
                top.join(&rel)
            };
            // Watched before it is read, so a file made between the two is still seen.
            let wd = match inotify.watches().add(&dir, mask()) {
                Ok(wd) => wd,
                // Gone or unreadable meanwhile: git sees the same.
                Err(e) if !rel.is_empty() && e.raw_os_error() != Some(28) => continue,
                Err(_) => return None,
            };
            folders.insert(wd, rel.clone());
            if folders.len() > MAX_FOLDERS {
                return None;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|t| t.is_dir()) {
                    continue;
                }
                let name = entry.file_name();
                if name == ".git" {
                    continue;
                }
                let Some(name) = name.to_str() else {
                    // A name git would quote: let git look at everything instead.
                    return None;
                };
                let child = join(&rel, name);
                if !ignored.contains(&child) {
                    stack.push(child);
                }
            }
        }
        let mut ignored_folders = HashMap::new();
        for rel in ignored {
            if ignored_folders.len() >= MAX_FOLDERS {
                break;
            }
            if let Ok(wd) = inotify.watches().add(top.join(rel), mask()) {
                ignored_folders.insert(wd, rel.clone());
            }
        }
        Some(Self {
            inotify,
            folders,
            ignored_folders,
            ignored_hits: BTreeSet::new(),
            dirty: BTreeSet::new(),
            unwatched: BTreeSet::new(),
            lost: false,
        })
    }

    /// Reads what the kernel queued since the last call.
    pub(crate) fn drain(&mut self) {
        let mut buffer = [0u8; 16 * 1024];
        loop {
            let events = match self.inotify.read_events(&mut buffer) {
                Ok(events) => events,
                Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => return,
                Err(_) => {
                    self.lost = true;
                    return;
                }
            };
            let mut any = false;
            for event in events {
                any = true;
                self.note(&event.wd, event.mask, event.name);
            }
            if !any {
                return;
            }
        }
    }

    fn note(&mut self, wd: &WatchDescriptor, mask: EventMask, name: Option<&OsStr>) {
        if mask.contains(EventMask::Q_OVERFLOW) {
            self.lost = true;
            return;
        }
        let Some(folder) = self.folders.get(wd).cloned() else {
            if let Some(rel) = self.ignored_folders.get(wd) {
                if !mask.contains(EventMask::IGNORED) {
                    self.ignored_hits.insert(format!("{rel}/"));
                } else {
                    self.ignored_folders.remove(wd);
                }
            }
            return;
        };
        if mask.contains(EventMask::IGNORED) {
            self.folders.remove(wd);
            if folder.is_empty() {
                self.lost = true;
            }
            return;
        }
        if mask.intersects(EventMask::MOVE_SELF | EventMask::DELETE_SELF) {
            // The folder's parent names it too; a moved one's watch now names the wrong
            // path, and the top itself going is the end of this log.
            if folder.is_empty() || mask.contains(EventMask::MOVE_SELF) {
                self.lost = true;
            }
            return;
        }
        let Some(name) = name else {
            // An event on the folder itself (its mode): nothing of git's.
            return;
        };
        if name == ".git" {
            return;
        }
        let Some(name) = name.to_str() else {
            self.lost = true;
            return;
        };
        if matches!(name, ".gitignore" | ".gitattributes" | ".gitmodules") {
            self.lost = true;
        }
        let path = join(&folder, name);
        if mask.contains(EventMask::ISDIR) {
            if mask.contains(EventMask::MOVED_FROM) {
                // Its watches (and its subfolders') now name the wrong paths.
                self.lost = true;
            } else if mask.intersects(EventMask::CREATE | EventMask::MOVED_TO) {
                self.unwatched.insert(path.clone());
                if self.unwatched.len() > MAX_UNWATCHED {
                    self.lost = true;
                }
            }
        }
        self.dirty.insert(path);
    }

    /// Folders made since they were last adopted: the caller asks git which of them are
    /// ignored, then [`Watch::adopt`]s them.
    pub(crate) fn unwatched(&self) -> Vec<String> {
        self.unwatched.iter().cloned().collect()
    }

    /// Watches the new folders (but `ignored` ones and folders below them), before git
    /// looks at them, so what happens in them from now on is in the log; what happened
    /// before is in it already (the folder's own name).
    pub(crate) fn adopt(&mut self, top: &Path, ignored: &HashSet<String>) {
        for rel in ignored {
            if let Ok(wd) = self.inotify.watches().add(top.join(rel), mask()) {
                self.ignored_folders.insert(wd, rel.clone());
            }
        }
        let mut stack: Vec<String> = std::mem::take(&mut self.unwatched)
            .into_iter()
            .filter(|d| !ignored.contains(d))
            .collect();
        while let Some(rel) = stack.pop() {
            let dir = top.join(&rel);
            match self.inotify.watches().add(&dir, mask()) {
                Ok(wd) => {
                    self.folders.insert(wd, rel.clone());
                }
                // Gone meanwhile: its name is in the log already.
                Err(e) if e.raw_os_error() == Some(2) || e.raw_os_error() == Some(20) => continue,
                Err(_) => {
                    self.lost = true;
                    return;
                }
            }
            if self.folders.len() > MAX_FOLDERS {
                self.lost = true;
                return;
            }
            let Ok(entries) = std::fs::read_dir(&dir) else {
                continue;
            };
            for entry in entries.flatten() {
                if !entry.file_type().is_ok_and(|t| t.is_dir()) || entry.file_name() == ".git" {
                    continue;
                }
                let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
                    self.lost = true;
                    return;
                };
                let child = join(&rel, &name);
                if !ignored.contains(&child) {
                    stack.push(child);
                }
            }
        }
    }

    /// Whether the log since the last [`Watch::take`] is complete.
    pub(crate) fn lost(&self) -> bool {
        self.lost
    }

    /// The paths to ask git about (what happened since the last call), and a fresh log
    /// from here on.
    pub(crate) fn take(&mut self) -> Vec<String> {
        let paths: Vec<String> = std::mem::take(&mut self.dirty).into_iter().collect();
        // A path under another named one adds nothing (git looks inside folders).
        let mut kept: Vec<String> = Vec::with_capacity(paths.len());
        for path in paths {
            let covered = kept.last().is_some_and(|prev: &String| {
                path.len() > prev.len()
                    && path.starts_with(prev.as_str())
                    && path.as_bytes().get(prev.len()) == Some(&b'/')
            });
            if !covered {
                kept.push(path);
            }
        }
        kept
    }

    /// The ignored folders something happened in since the last call (`node_modules/`).
    pub(crate) fn take_ignored(&mut self) -> Vec<String> {
        std::mem::take(&mut self.ignored_hits).into_iter().collect()
    }

    /// Forgets what happened so far (a snapshot that looks at everything covers it).
    pub(crate) fn clear(&mut self) {
        self.dirty.clear();
    }
}

fn join(folder: &str, name: &str) -> String {
    if folder.is_empty() {
        name.to_owned()
    } else {
        format!("{folder}/{name}")
    }
}
