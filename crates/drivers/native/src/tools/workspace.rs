//! A session's workspace: its root (every path a coding tool takes must resolve
//! inside it), the files read so far (for the read-before-edit policy), and the undo
//! log (each file's content before the turn first wrote it).

use std::collections::{BTreeMap, HashSet};
use std::path::{Path, PathBuf};

use parking_lot::Mutex;

/// A session's workspace.
pub struct Workspace {
    root: PathBuf,
    read: Mutex<HashSet<PathBuf>>,
    used: Mutex<HashSet<String>>,
    /// This turn's originals: path → content before (None: the file did not exist).
    originals: Mutex<BTreeMap<PathBuf, Option<Vec<u8>>>>,
}

impl Workspace {
    /// A workspace at `root` (canonicalized when it exists).
    pub fn new(root: &Path) -> Self {
        Self {
            root: root.canonicalize().unwrap_or_else(|_| root.to_path_buf()),
            read: Mutex::new(HashSet::new()),
            used: Mutex::new(HashSet::new()),
            originals: Mutex::new(BTreeMap::new()),
        }
    }

    /// The root.
    pub fn root(&self) -> &Path {
        &self.root
    }

    /// `path` (relative to the root, or absolute) resolved, symlinks followed as far as
    /// the path exists; an error when it leaves the workspace.
    pub fn resolve(&self, path: &str) -> Result<PathBuf, String> {
        if path.is_empty() {
            return Err("the path is empty".into());
        }
        let lexical = super::beneath::lexical(&self.root.join(path));
        // Follow symlinks through the part that exists.
        let mut existing = lexical.clone();
        let mut rest = Vec::new();
        let resolved = loop {
            match existing.canonicalize() {
                Ok(real) => {
                    let mut p = real;
                    for r in rest.iter().rev() {
                        p.push(r);
                    }
                    break p;
                }
                Err(_) => match (existing.file_name(), existing.parent()) {
                    (Some(name), Some(parent)) => {
                        rest.push(name.to_os_string());
                        existing = parent.to_path_buf();
                    }
                    _ => break lexical.clone(),
                },
            }
        };
        if resolved.starts_with(&self.root) {
            Ok(resolved)
        } else {
            Err(format!(
                "{path} is outside the workspace ({}); only files inside it may be used",
                self.root.display()
            ))
        }
    }

    /// The content of `path` (as the model named it), opened beneath the root: a
    /// symbolic link out of the workspace is refused ([`super::beneath`]).
    pub fn read_file(&self, path: &str) -> Result<Vec<u8>, String> {
        let rel = super::beneath::relative(&self.root, Path::new(path))
            .ok_or_else(|| format!("{path} is not a file inside the workspace"))?;
        super::beneath::read(&self.root, &rel).map_err(|e| format!("cannot read {path}: {e}"))
    }

    /// Writes `bytes` as the whole of `path` (as the model named it), beneath the root,
    /// its folders made: a symbolic link out of the workspace is refused.
    pub fn write_file(&self, path: &str, bytes: &[u8]) -> Result<(), String> {
        let rel = super::beneath::relative(&self.root, Path::new(path))
            .ok_or_else(|| format!("{path} is not a file inside the workspace"))?;
        super::beneath::write(&self.root, &rel, bytes)
            .map_err(|e| format!("cannot write {path}: {e}"))
    }

    /// `path` relative to the root, for showing.
    pub fn shown(&self, path: &Path) -> String {
        path.strip_prefix(&self.root)
            .unwrap_or(path)
            .display()
            .to_string()
    }

    /// Notes that `path` was read.
    pub fn mark_read(&self, path: &Path) {
        self.read.lock().insert(path.to_path_buf());
    }

    /// Whether `path` was read (or written) in this session.
    pub fn was_read(&self, path: &Path) -> bool {
        self.read.lock().contains(path)
    }

    /// Notes that a call of `tool` succeeded (for policies such as search-before-add).
    pub fn mark_used(&self, tool: &str) {
        self.used.lock().insert(tool.to_string());
    }

    /// Whether a call of `tool` succeeded in this session.
    pub fn was_used(&self, tool: &str) -> bool {
        self.used.lock().contains(tool)
    }

    /// Forgets that `tool` was used (a policy that wants it again before each use).
    pub fn forget_used(&self, tool: &str) {
        self.used.lock().remove(tool);
    }

    /// Keeps `path`'s content before this turn's first write to it (read beneath the
    /// root, as the write will be).
    pub fn before_write(&self, path: &Path) {
        let mut originals = self.originals.lock();
        if !originals.contains_key(path) {
            let before = super::beneath::relative(&self.root, path)
                .and_then(|rel| super::beneath::read(&self.root, &rel).ok());
            originals.insert(path.to_path_buf(), before);
        }
        self.read.lock().insert(path.to_path_buf());
    }

    /// The turn's originals, taken (the turn ended).
    pub fn take_originals(&self) -> BTreeMap<PathBuf, Option<Vec<u8>>> {
        std::mem::take(&mut *self.originals.lock())
    }
}
