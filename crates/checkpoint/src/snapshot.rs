//! Writing a checkpoint: the research recipe (docs: ../shared/research/parallel-and-review.md
//! §4), with the size cap on untracked files.

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::{git, ref_name, Checkpoint, Checkpoints, Error, Skipped};

#[derive(Default)]
struct Changed {
    paths: Vec<String>,
    untracked_files: Vec<String>,
    untracked_dirs: Vec<String>,
}

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
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(index),
            Err(e) => return Err(e.into()),
        }
        // Git trusts an entry's stat data only when the file is older than the index file
        // itself ("racy git"); with second-granularity timestamps, a copy made a moment
        // later would make a file edited in the same second as the user's last index write
        // look unchanged. The copy keeps the original's mtime, so git sees what it would.
        let modified = std::fs::metadata(real)?.modified()?;
        std::fs::File::options()
            .write(true)
            .open(&index.path)?
            .set_modified(modified)?;
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
        // Reading the ref is a process of its own; it overlaps the tree's writing.
        let (prev, written) = std::thread::scope(|scope| {
            let prev = scope.spawn(|| self.resolve(&name));
            let written = self.write_tree();
            (prev.join(), written)
        });
        let prev = prev.unwrap_or_else(|_| self.resolve(&name))?;
        let (tree, skipped) = written?;
        let commit = self.commit_on(&name, prev.as_deref(), &tree, message)?;
        Ok(Checkpoint {
            commit,
            tree,
            skipped,
        })
    }

    /// The folder's files as a tree object, and what was left out for its size.
    ///
    /// `git status` finds what changed (it is the one command that uses git's untracked
    /// cache, so unchanged folders are not even read), then `add` stages exactly those
    /// paths; a plain `add -A` would walk every folder and cost about twice as much in a
    /// large repository.
    pub(crate) fn write_tree(&self) -> Result<(String, Vec<Skipped>), Error> {
        let tmp = TempIndex::copy_of(&self.index)?;
        let changed = self.changed(&tmp.path)?;
        let skipped = self.large_untracked(&tmp.path, &changed)?;
        // A tracked file replaced by a folder shows only as deleted (status hides the
        // folder's new files), so that case needs `add`, which looks inside.
        let only_files = changed.untracked_files.is_empty()
            && changed.untracked_dirs.is_empty()
            && changed.paths.iter().all(|p| {
                std::fs::symlink_metadata(self.git.top.join(p)).map_or(true, |m| !m.is_dir())
            });
        if !changed.paths.is_empty() && only_files {
            // Only tracked files changed (the common turn): `update-index` takes the list
            // as it is, without `add`'s pathspec matching over the whole index.
            let mut list = Vec::new();
            for path in &changed.paths {
                list.extend_from_slice(path.as_bytes());
                list.push(0);
            }
            let args = ["update-index", "--remove", "-z", "--stdin"];
            self.git.run_input(
                Some(&tmp.path),
                git::SKIP_HASH.into_iter().chain(args),
                Some(list),
            )?;
        } else if !changed.paths.is_empty() {
            let mut pathspecs = Vec::new();
            for path in &changed.paths {
                pathspecs.extend_from_slice(b":(literal)");
                pathspecs.extend_from_slice(path.as_bytes());
                pathspecs.push(0);
            }
            for s in &skipped {
                pathspecs.extend_from_slice(b":(exclude,literal)");
                pathspecs.extend_from_slice(s.path.as_bytes());
                pathspecs.push(0);
            }
            self.git.run_input(
                Some(&tmp.path),
                git::SKIP_HASH.into_iter().chain([
                    "add",
                    "-A",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ]),
                Some(pathspecs),
            )?;
        }
        let write_tree = git::SKIP_HASH.into_iter().chain(["write-tree"]);
        let tree = self.git.line(Some(&tmp.path), write_tree)?;
        if self.git.shadow_dir.is_some() {
            // The shadow's index is ours: keeping the refreshed one makes the next
            // snapshot hash only what changed, as a repository's own index does.
            std::fs::rename(&tmp.path, &self.index)?;
        }
        Ok((tree, skipped))
    }

    /// What differs between the work tree and `index`: changed or deleted entries, and
    /// untracked files and folders (a folder ends in `/`), ignored ones left out.
    fn changed(&self, index: &Path) -> Result<Changed, Error> {
        let out = self.git.run(
            Some(index),
            [
                "status",
                "--porcelain=v1",
                "-z",
                "--no-renames",
                "--untracked-files=normal",
                // A submodule's new commit is a change; its own dirty files are not ours.
                "--ignore-submodules=dirty",
            ],
        )?;
        let mut changed = Changed::default();
        for entry in git::nul_fields(&out) {
            let (Some(code), Some(path)) = (entry.get(..2), entry.get(3..)) else {
                continue;
            };
            let path = String::from_utf8_lossy(path).into_owned();
            match code {
                b"??" => {
                    if path.ends_with('/') {
                        changed.untracked_dirs.push(path.clone());
                    } else {
                        changed.untracked_files.push(path.clone());
                    }
                    changed.paths.push(path);
                }
                // Only the work tree's side matters: the index already has the rest.
                [_, b' '] => {}
                _ => changed.paths.push(path),
            }
        }
        Ok(changed)
    }

    /// Untracked, unignored regular files over the cap.
    fn large_untracked(&self, index: &Path, changed: &Changed) -> Result<Vec<Skipped>, Error> {
        let mut candidates = changed.untracked_files.clone();
        if !changed.untracked_dirs.is_empty() {
            let mut args: Vec<String> = ["ls-files", "-z", "--others", "--exclude-standard", "--"]
                .map(String::from)
                .to_vec();
            args.extend(
                changed
                    .untracked_dirs
                    .iter()
                    .map(|d| format!(":(literal){d}")),
            );
            let out = self.git.run(Some(index), &args)?;
            candidates
                .extend(git::nul_fields(&out).map(|f| String::from_utf8_lossy(f).into_owned()));
        }
        let mut skipped = Vec::new();
        for path in candidates {
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
