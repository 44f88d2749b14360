//! Writing a checkpoint: the research recipe (docs: ../shared/research/parallel-and-review.md
//! §4), with the size cap on untracked files.

use std::collections::HashSet;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use crate::watch::Watch;
use crate::{git, ref_name, Checkpoint, Checkpoints, Error, Skipped};

/// What a folder's snapshots carry from one to the next, behind one lock (two snapshots
/// of one folder never run at once: they would share the kept index).
#[derive(Debug)]
pub(crate) struct Work {
    kept: Option<Kept>,
    watch: Option<Watch>,
    /// The kernel refused a watch or the tree is too large for one: every snapshot looks
    /// at everything.
    no_watch: bool,
    looked_at: LookedAt,
}

impl Default for Work {
    fn default() -> Self {
        Self {
            kept: None,
            watch: None,
            no_watch: false,
            looked_at: LookedAt::Everything,
        }
    }
}

/// The index the last snapshot wrote its tree from: the folder's files as they were then.
#[derive(Debug)]
struct Kept {
    index: PathBuf,
    /// Ours to delete (a copy in the git dir); a shadow's own index is not.
    owned: bool,
    tree: String,
    signature: Signature,
    /// The paths this index tracks (files, symlinks, submodules), read once from it when a
    /// snapshot first needs them and kept in step since: a snapshot whose changed paths are
    /// all tracked non-folders stages them without asking `git status` what they are.
    tracked: Option<HashSet<String>>,
}

impl Kept {
    fn copy_of(real: &Path) -> Result<Self, Error> {
        let tmp = TempIndex::copy_of(real)?;
        let index = tmp.path.clone();
        std::mem::forget(tmp);
        Ok(Self {
            index,
            owned: true,
            tree: String::new(),
            signature: Signature(Vec::new()),
            tracked: None,
        })
    }
}

impl Drop for Kept {
    fn drop(&mut self) {
        if self.owned {
            let _ = std::fs::remove_file(&self.index);
            let _ = std::fs::remove_file(self.index.with_extension("lock"));
        }
    }
}

/// Whether git's reported path `reported` (a folder ends in `/`) is or holds `path`.
fn covers(reported: &str, path: &str) -> bool {
    match reported.strip_suffix('/') {
        Some(dir) => path == dir || path.starts_with(reported),
        None => reported == path,
    }
}

/// Stamps (inode, size, mtime, ctime) of the files that say what is tracked and ignored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Signature(Vec<Option<Stamp>>);

/// inode, size, mtime (s, ns), ctime (s, ns).
type Stamp = (u64, u64, i64, i64, i64, i64);

fn stamp(path: &Path) -> Option<Stamp> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata(path).ok()?;
    Some((
        m.ino(),
        m.size(),
        m.mtime(),
        m.mtime_nsec(),
        m.ctime(),
        m.ctime_nsec(),
    ))
}

/// The user's global excludes file where git looks by default (`core.excludesFile` set
/// elsewhere is not followed: a change there is seen at the next full look).
fn global_excludes() -> Option<PathBuf> {
    let base = std::env::var_os("XDG_CONFIG_HOME")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".config")))?;
    Some(base.join("git").join("ignore"))
}

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

/// A written tree, what was left out for its size, and the paths git reported changed.
type Written = (String, Vec<Skipped>, Vec<String>);

/// Past this many paths named by the watch, a snapshot asks git about everything.
const MAX_NAMED: usize = 1_000;

/// How the last snapshot found what changed (for tests and the bench: the watch is a
/// speed-up whose use cannot be seen in the trees it writes).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LookedAt {
    /// `git status` over the whole work tree.
    Everything,
    /// `git status` of this many paths the watch named.
    Paths(usize),
    /// `update-index` of this many paths the watch named, all tracked files, without
    /// `git status`.
    Tracked(usize),
    /// Nothing happened since the previous snapshot: its tree, without running git.
    Nothing,
}

impl Checkpoints {
    /// Records the folder's files as the session's next checkpoint, its parent the
    /// session's previous one (none for the first), `message` naming the turn.
    pub fn snapshot(&self, session_ref: &str, message: &str) -> Result<Checkpoint, Error> {
        self.snapshot_with(session_ref, message, false)
    }

    /// Like [`Self::snapshot`], but when the folder is as the session's latest checkpoint
    /// recorded it, returns that checkpoint and writes nothing (its message stays its
    /// own). A turn that follows another directly starts where the last one ended, and a
    /// commit saying so would cost two git processes for nothing.
    pub fn snapshot_if_changed(
        &self,
        session_ref: &str,
        message: &str,
    ) -> Result<Checkpoint, Error> {
        self.snapshot_with(session_ref, message, true)
    }

    fn snapshot_with(
        &self,
        session_ref: &str,
        message: &str,
        reuse: bool,
    ) -> Result<Checkpoint, Error> {
        let name = ref_name(session_ref);
        let cached = self.cached_head(&name);
        let was_cached = cached.is_some();
        let (head, (tree, skipped, ignored)) = match cached {
            Some(head) => (Some(head), self.write_tree_seen()?),
            None => {
                // Reading the ref is a process of its own; it overlaps the tree's writing.
                let (prev, written) = std::thread::scope(|scope| {
                    let prev = scope.spawn(|| self.resolve(&name));
                    let written = self.write_tree_seen();
                    (prev.join(), written)
                });
                let prev = prev.unwrap_or_else(|_| self.resolve(&name))?;
                let written = written?;
                let head = match prev {
                    Some(commit) => {
                        let tree = self.tree_of(&commit)?;
                        Some(Checkpoint {
                            commit,
                            tree,
                            skipped: Vec::new(),
                            ignored: Vec::new(),
                        })
                    }
                    None => None,
                };
                (head, written)
            }
        };
        if reuse {
            if let Some(head) = head.as_ref().filter(|h| h.tree == tree) {
                return Ok(Checkpoint {
                    commit: head.commit.clone(),
                    tree,
                    skipped,
                    ignored,
                });
            }
        }
        let prev = head.as_ref().map(|h| h.commit.as_str());
        let commit = match self.commit_on(&name, prev, &tree, message) {
            // The remembered head is stale (someone else moved the ref): once more from
            // where it is now.
            Err(Error::RefMoved { .. }) if was_cached => {
                let prev = self.resolve(&name)?;
                self.commit_on(&name, prev.as_deref(), &tree, message)?
            }
            result => result?,
        };
        Ok(Checkpoint {
            commit,
            tree,
            skipped,
            ignored,
        })
    }

    /// How the last snapshot of this folder found what changed.
    pub fn looked_at(&self) -> LookedAt {
        self.lock_work().looked_at
    }

    /// The folder's files as a tree object, and what was left out for its size.
    ///
    /// What changed since the last snapshot comes from the watch when it has a complete
    /// log (`git status` of just those paths, on the index the last snapshot left), else
    /// from `git status` over everything on a copy of the user's index (it is the one
    /// command that uses git's untracked cache, so unchanged folders are not even read);
    /// then `update-index` or `add` stages exactly those paths, and `write-tree`. A plain
    /// `add -A` would walk every folder and cost about twice as much in a large repository.
    pub(crate) fn write_tree(&self) -> Result<(String, Vec<Skipped>), Error> {
        self.write_tree_seen()
            .map(|(tree, skipped, _)| (tree, skipped))
    }

    /// [`Self::write_tree`], and the ignored paths the watch saw change (see
    /// [`Checkpoint::ignored`]).
    pub(crate) fn write_tree_seen(&self) -> Result<(String, Vec<Skipped>, Vec<String>), Error> {
        let mut work = self.lock_work();
        let signature = self.signature();
        if work.watch.is_none() && !work.no_watch && self.options.watch {
            // Made before git looks, so whatever happens from here on is in its log.
            let ignored = self.ignored_folders(&self.index)?;
            work.watch = Watch::start(&self.git.top, &ignored);
            work.no_watch = work.watch.is_none();
        }
        if let Some(watch) = work.watch.as_mut() {
            watch.drain();
            let new = watch.unwatched();
            if !new.is_empty() && !watch.lost() {
                let ignored = self.ignored_folders_in(&self.index, &new)?;
                watch.adopt(&self.git.top, &ignored);
            }
        }
        let (named, seen, mut ignored) = match work.watch.as_mut() {
            Some(watch) => {
                let seen = watch.take();
                let ignored = watch.take_ignored();
                if watch.lost() {
                    (None, seen, ignored)
                } else {
                    (Some(seen.clone()), seen, ignored)
                }
            }
            None => (None, Vec::new(), Vec::new()),
        };
        let kept = work
            .kept
            .take()
            .filter(|k| k.signature == signature && k.index.exists());
        let (index, scope) = match (kept, named) {
            (Some(kept), Some(named)) if named.is_empty() => {
                let tree = kept.tree.clone();
                work.kept = Some(kept);
                work.looked_at = LookedAt::Nothing;
                return Ok((tree, Vec::new(), ignored));
            }
            (Some(kept), Some(named)) if named.len() <= MAX_NAMED => (kept, Some(named)),
            (kept, named) => {
                if named.is_none() && work.watch.is_some() {
                    // Lost events: a new watch, made before git looks.
                    let ignored = self.ignored_folders(&self.index)?;
                    work.watch = Watch::start(&self.git.top, &ignored);
                    work.no_watch = work.watch.is_none();
                }
                if let Some(watch) = work.watch.as_mut() {
                    watch.clear();
                }
                // The kept index is the folder as the last snapshot saw it; without it, a
                // copy of the user's (its stat data spares hashing unchanged files).
                let index = match kept {
                    Some(kept) => kept,
                    None => Kept::copy_of(&self.index)?,
                };
                (index, None)
            }
        };
        work.looked_at = match &scope {
            Some(paths) => LookedAt::Paths(paths.len()),
            None => LookedAt::Everything,
        };
        let mut index = index;
        let result = match scope.as_deref() {
            Some(paths) => self
                .write_tree_named(&mut index, paths)
                .map(|(written, known)| {
                    if known {
                        work.looked_at = LookedAt::Tracked(paths.len());
                    }
                    written
                }),
            None => {
                index.tracked = None;
                self.write_tree_in(&index.index, None)
                    .map(|(tree, skipped, reported, _)| (tree, skipped, reported))
            }
        };
        // On failure the index may be half written: it is dropped (with its file), and the
        // next snapshot starts from a copy.
        let (tree, skipped, reported) = result?;
        // What the watch saw that git reports no change for: unchanged (touched, or
        // changed back) or ignored; git says which.
        let left: Vec<&String> = seen
            .iter()
            .filter(|p| !reported.iter().any(|r| covers(r, p)))
            .collect();
        if !left.is_empty() {
            ignored.extend(self.ignored_among(&index.index, &left)?);
            ignored.sort();
            ignored.dedup();
        }
        if self.git.shadow_dir.is_some() && index.index != self.index {
            // The shadow's index is ours: keeping the refreshed one makes the next
            // snapshot (in this process or the next) hash only what changed.
            std::fs::rename(&index.index, &self.index)?;
            index.index = self.index.clone();
            index.owned = false;
        }
        index.tree = tree.clone();
        index.signature = signature;
        work.kept = Some(index);
        Ok((tree, skipped, ignored))
    }

    /// Which of `paths` git ignores (tracked ones never are).
    fn ignored_among(&self, index: &Path, paths: &[&String]) -> Result<Vec<String>, Error> {
        let mut input = Vec::new();
        for p in paths {
            input.extend_from_slice(p.as_bytes());
            input.push(0);
        }
        let mut cmd = self.git.command(Some(index));
        cmd.args(["check-ignore", "-z", "--stdin"]);
        let command = git::describe(&cmd);
        let out = git::output(cmd, Some(input))?;
        // Exit 1: none is ignored.
        if !out.status.success() && out.status.code() != Some(1) {
            return Err(git::failed(command, &out));
        }
        Ok(git::nul_fields(&out.stdout)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect())
    }

    /// Stages what changed in `index` (everything `git status` finds, or only among
    /// `scope`) and writes its tree.
    /// The fourth value says whether only files were staged (no folder, nothing
    /// untracked), so the tracked set stays right by adding and dropping those paths.
    fn write_tree_in(
        &self,
        index: &Path,
        scope: Option<&[String]>,
    ) -> Result<(String, Vec<Skipped>, Vec<String>, bool), Error> {
        let changed = self.changed(index, scope)?;
        let skipped = self.large_untracked(index, &changed)?;
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
                Some(index),
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
                Some(index),
                git::SKIP_HASH.into_iter().chain([
                    "add",
                    "-A",
                    "--pathspec-from-file=-",
                    "--pathspec-file-nul",
                ]),
                Some(pathspecs),
            )?;
        }
        let tree = self.write_index_tree(index)?;
        Ok((tree, skipped, changed.paths, only_files))
    }

    fn write_index_tree(&self, index: &Path) -> Result<String, Error> {
        let write_tree = git::SKIP_HASH.into_iter().chain(["write-tree"]);
        self.git.line(Some(index), write_tree)
    }

    /// Stages the paths the watch named. When every one is tracked by the kept index and
    /// is not a folder now (the common turn: files edited or deleted), git already knows
    /// what they are, so `update-index` stages them as they are without the `git status`
    /// that would ask (a process reading the whole index: one of five a snapshot ran).
    /// Anything else (a new file, a folder, an ignored path) goes through `git status`.
    fn write_tree_named(
        &self,
        kept: &mut Kept,
        paths: &[String],
    ) -> Result<(Written, bool), Error> {
        if kept.tracked.is_none() {
            kept.tracked = Some(self.tracked_in(&kept.index)?);
        }
        let known = kept.tracked.as_ref().is_some_and(|tracked| {
            paths.iter().all(|p| {
                tracked.contains(p)
                    && std::fs::symlink_metadata(self.git.top.join(p)).map_or(true, |m| !m.is_dir())
            })
        });
        if known {
            let mut list = Vec::new();
            for path in paths {
                list.extend_from_slice(path.as_bytes());
                list.push(0);
            }
            let args = ["update-index", "--remove", "-z", "--stdin"];
            self.git.run_input(
                Some(&kept.index),
                git::SKIP_HASH.into_iter().chain(args),
                Some(list),
            )?;
            let tree = self.write_index_tree(&kept.index)?;
            self.keep_tracked(kept, paths);
            return Ok(((tree, Vec::new(), paths.to_vec()), true));
        }
        let (tree, skipped, reported, only_files) = self.write_tree_in(&kept.index, Some(paths))?;
        if only_files {
            self.keep_tracked(kept, &reported);
        } else {
            // New files or folders: read again when next needed.
            kept.tracked = None;
        }
        Ok(((tree, skipped, reported), false))
    }

    /// After `update-index` of tracked `paths`: the deleted ones are no longer tracked.
    fn keep_tracked(&self, kept: &mut Kept, paths: &[String]) {
        if let Some(tracked) = kept.tracked.as_mut() {
            for p in paths {
                if std::fs::symlink_metadata(self.git.top.join(p)).is_err() {
                    tracked.remove(p);
                }
            }
        }
    }

    /// Every path `index` tracks.
    fn tracked_in(&self, index: &Path) -> Result<HashSet<String>, Error> {
        let out = self.git.run(Some(index), ["ls-files", "-z", "--cached"])?;
        Ok(git::nul_fields(&out)
            .map(|f| String::from_utf8_lossy(f).into_owned())
            .collect())
    }

    /// Folders git calls ignored as a whole (`node_modules/`), relative, no trailing `/`.
    fn ignored_folders(&self, index: &Path) -> Result<HashSet<String>, Error> {
        self.ignored_folders_in(index, &[])
    }

    /// The same, among `within` (all of the work tree when empty).
    fn ignored_folders_in(
        &self,
        index: &Path,
        within: &[String],
    ) -> Result<HashSet<String>, Error> {
        let mut args: Vec<String> = [
            "ls-files",
            "-z",
            "--others",
            "--ignored",
            "--exclude-standard",
            "--directory",
        ]
        .map(String::from)
        .to_vec();
        if !within.is_empty() {
            args.push("--".into());
            args.extend(within.iter().map(|p| format!(":(literal){p}")));
        }
        let out = self.git.run(Some(index), &args)?;
        Ok(git::nul_fields(&out)
            .filter_map(|f| {
                let path = String::from_utf8_lossy(f);
                path.strip_suffix('/').map(str::to_owned)
            })
            .collect())
    }

    /// What says whether the index kept from the last snapshot still stands for "what is
    /// tracked": the user's index (a `git add`, a commit, a checkout) and the exclude
    /// files outside the work tree. When any changed, the next snapshot starts again from
    /// a copy of the user's index and looks at everything.
    fn signature(&self) -> Signature {
        let mut files = vec![self.exclude.clone()];
        if self.git.shadow_dir.is_none() {
            files.push(self.index.clone());
        }
        if let Some(global) = global_excludes() {
            files.push(global);
        }
        Signature(files.iter().map(|f| stamp(f)).collect())
    }

    fn lock_work(&self) -> std::sync::MutexGuard<'_, Work> {
        self.work
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// What differs between the work tree and `index`: changed or deleted entries, and
    /// untracked files and folders (a folder ends in `/`), ignored ones left out.
    fn changed(&self, index: &Path, scope: Option<&[String]>) -> Result<Changed, Error> {
        let mut args: Vec<String> = [
            "status",
            "--porcelain=v1",
            "-z",
            "--no-renames",
            "--untracked-files=normal",
            // A submodule's new commit is a change; its own dirty files are not ours.
            "--ignore-submodules=dirty",
        ]
        .map(String::from)
        .to_vec();
        if let Some(paths) = scope {
            args.push("--".into());
            args.extend(paths.iter().map(|p| format!(":(literal){p}")));
        }
        let out = self.git.run(Some(index), &args)?;
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
            Ok(_) => {
                self.remember_head(
                    name,
                    Some(Checkpoint {
                        commit: commit.clone(),
                        tree: tree.to_owned(),
                        skipped: Vec::new(),
                        ignored: Vec::new(),
                    }),
                );
                Ok(commit)
            }
            Err(e) => {
                self.remember_head(name, None);
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
