//! Writing a checkpoint: the research recipe (docs: ../shared/research/parallel-and-review.md
//! §4), with the size cap on untracked files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{git, ref_name, Checkpoint, Checkpoints, Error, Skipped};

/// A private index file beside the real one, removed when dropped.
pub(crate) struct TempIndex {
    pub(crate) path: PathBuf,
}

impl TempIndex {
    /// Beside `real` (the same filesystem, inside the git dir, never in the work tree),
    /// starting as a copy of it when it exists. The copy is the point: its stat data says
    /// which files are unchanged, so `add -A` hashes only what changed.
    pub(crate) fn copy_of(real: &Path) -> Result<Self, Error> {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = real.parent().unwrap_or(Path::new("."));
        let path = dir.join(format!("weft-index.{}.{n}", std::process::id()));
        let index = Self { path };
        match std::fs::copy(real, &index.path) {
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        Ok(index)
    }

    /// An empty index (git creates the file on first write).
    pub(crate) fn empty(real: &Path) -> Self {
        static SEQ: AtomicU64 = AtomicU64::new(0);
        let n = SEQ.fetch_add(1, Ordering::Relaxed);
        let dir = real.parent().unwrap_or(Path::new("."));
        Self {
            path: dir.join(format!("weft-index-empty.{}.{n}", std::process::id())),
        }
    }
}

impl Drop for TempIndex {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
        let _ = std::fs::remove_file(self.path.with_extension("lock"));
    }
}

impl Checkpoints {
    /// Records the folder's files as the session's next checkpoint, its parent the
    /// session's previous one (none for the first), `message` naming the turn.
    pub fn snapshot(&self, session_ref: &str, message: &str) -> Result<Checkpoint, Error> {
        let name = ref_name(session_ref);
        let prev = self.resolve(&name)?;
        let (tree, skipped) = self.write_tree()?;
        let commit = self.commit_on(&name, prev.as_deref(), &tree, message)?;
        Ok(Checkpoint {
            commit,
            tree,
            skipped,
        })
    }

    /// The folder's files as a tree object, and what was left out for its size.
    pub(crate) fn write_tree(&self) -> Result<(String, Vec<Skipped>), Error> {
        let tmp = TempIndex::copy_of(&self.index)?;
        let skipped = self.large_untracked(&tmp.path)?;
        let mut pathspecs = Vec::new();
        for s in &skipped {
            pathspecs.extend_from_slice(b":(exclude,literal)");
            pathspecs.extend_from_slice(s.path.as_bytes());
            pathspecs.push(0);
        }
        if pathspecs.is_empty() {
            self.git.run(Some(&tmp.path), ["add", "-A"])?;
        } else {
            self.git.run_input(
                Some(&tmp.path),
                ["add", "-A", "--pathspec-from-file=-", "--pathspec-file-nul"],
                Some(pathspecs),
            )?;
        }
        let tree = self.git.line(Some(&tmp.path), ["write-tree"])?;
        if self.git.shadow_dir.is_some() {
            // The shadow's index is ours: keeping the refreshed one makes the next
            // snapshot hash only what changed, as a repository's own index does.
            std::fs::rename(&tmp.path, &self.index)?;
        }
        Ok((tree, skipped))
    }

    /// Untracked, unignored regular files over the cap.
    fn large_untracked(&self, index: &Path) -> Result<Vec<Skipped>, Error> {
        let out = self.git.run(
            Some(index),
            ["ls-files", "-z", "--others", "--exclude-standard"],
        )?;
        let mut skipped = Vec::new();
        for field in git::nul_fields(&out) {
            let path = String::from_utf8_lossy(field).into_owned();
            let Ok(meta) = std::fs::symlink_metadata(self.git.top.join(&path)) else {
                continue;
            };
            if meta.is_file() && meta.len() > self.options.max_untracked_size {
                skipped.push(Skipped {
                    path,
                    size: meta.len(),
                });
            }
        }
        Ok(skipped)
    }

    /// A commit of `tree` on the session's chain, and the ref moved to it only if it still
    /// points where it did when the snapshot started.
    pub(crate) fn commit_on(
        &self,
        name: &str,
        prev: Option<&str>,
        tree: &str,
        message: &str,
    ) -> Result<String, Error> {
        let mut args = vec!["commit-tree", tree];
        if let Some(prev) = prev {
            args.extend(["-p", prev]);
        }
        args.extend(["-F", "-"]);
        let out = self
            .git
            .run_input(None, args, Some(message.as_bytes().to_vec()))?;
        let commit = String::from_utf8_lossy(&out).trim().to_owned();
        // An empty old value means "must not exist yet".
        let result = self
            .git
            .run(None, ["update-ref", name, &commit, prev.unwrap_or("")]);
        match result {
            Ok(_) => Ok(commit),
            Err(e) => {
                if self.resolve(name)?.as_deref() != prev {
                    Err(Error::RefMoved {
                        name: name.to_owned(),
                    })
                } else {
                    Err(e)
                }
            }
        }
    }
}
