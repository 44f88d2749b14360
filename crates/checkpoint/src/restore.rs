//! Putting a folder's files back to a checkpoint.
//!
//! Only the files that differ are touched: `diff-tree` between the folder's current tree
//! and the target says which to write (from a temporary index read from the target, with
//! `checkout-index`, so the user's index is never read into or written) and which to
//! delete. A file the folder has but no checkpoint ever captured (ignored, or untracked over
//! the size cap) is not in the current tree, so it is never deleted; one the target would
//! overwrite is left alone and reported, since the undo checkpoint could not bring it back.
//!
//! Restore at a turn boundary only: an agent still working would build on lines that
//! vanished under it (the research's stvena note). That is the caller's rule to keep.

use std::path::Path;

use crate::snapshot::TempIndex;
use crate::{git, ref_name, Checkpoint, Checkpoints, Error};

/// What a restore did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Restored {
    /// The folder as it was just before the restore: restoring to it undoes the restore.
    pub undo: Checkpoint,
    pub written: Vec<String>,
    pub deleted: Vec<String>,
    /// Files the target has that would have overwritten an uncaptured (too large) file.
    pub kept: Vec<String>,
}

impl Checkpoints {
    /// Puts the folder's files (all, or those under `paths`, relative to [`Self::top`]) back
    /// to checkpoint `to`. With `expect`, refuses with [`Error::Changed`] when those files
    /// differ from checkpoint `expect` (edits made since, which the restore would lose),
    /// before writing anything. The folder is checkpointed on `session_ref` first.
    pub fn restore(
        &self,
        session_ref: &str,
        to: &str,
        paths: Option<&[&str]>,
        expect: Option<&str>,
    ) -> Result<Restored, Error> {
        let target = self.tree_of(to)?;
        let name = ref_name(session_ref);
        let prev = self.resolve(&name)?;
        let (current, skipped) = self.write_tree()?;
        if let Some(expect) = expect {
            let expected = self.tree_of(expect)?;
            let changed: Vec<String> = self
                .changes(&expected, &current, paths)?
                .into_iter()
                .map(|(_, path)| path)
                .collect();
            if !changed.is_empty() {
                return Err(Error::Changed { paths: changed });
            }
        }
        let message = format!("weft: before restoring to {to}");
        let commit = self.commit_on(&name, prev.as_deref(), &current, &message)?;
        let undo = Checkpoint {
            commit,
            tree: current.clone(),
            skipped,
            ignored: Vec::new(),
        };

        let mut restored = Restored {
            undo,
            written: Vec::new(),
            deleted: Vec::new(),
            kept: Vec::new(),
        };
        for (status, path) in self.changes(&current, &target, paths)? {
            if status == 'D' {
                restored.deleted.push(path);
            } else if restored.undo.skipped.iter().any(|s| s.path == path) {
                restored.kept.push(path);
            } else {
                restored.written.push(path);
            }
        }
        // Deletions first: a file the target has may sit where a deleted folder was.
        for path in &restored.deleted {
            self.remove(path)?;
        }
        if !restored.written.is_empty() {
            let tmp = TempIndex::empty(&self.index);
            let read_tree = git::SKIP_HASH.into_iter().chain(["read-tree", &target]);
            self.git.run(Some(&tmp.path), read_tree)?;
            let mut list = Vec::new();
            for path in &restored.written {
                list.extend_from_slice(path.as_bytes());
                list.push(0);
            }
            self.git.run_input(
                Some(&tmp.path),
                ["checkout-index", "-f", "-z", "--stdin"],
                Some(list),
            )?;
        }
        Ok(restored)
    }

    /// `(status, path)` of every file that differs from tree `a` to tree `b`, renames
    /// split into a deletion and an addition, limited to `paths` when given.
    fn changes(
        &self,
        a: &str,
        b: &str,
        paths: Option<&[&str]>,
    ) -> Result<Vec<(char, String)>, Error> {
        let mut args: Vec<String> = ["diff-tree", "-r", "-z", "--no-renames", "--name-status"]
            .map(String::from)
            .to_vec();
        args.extend([a.to_owned(), b.to_owned(), "--".to_owned()]);
        if let Some(paths) = paths {
            args.extend(paths.iter().map(|p| format!(":(literal){p}")));
        }
        let out = self.git.run(None, &args)?;
        let mut fields = git::nul_fields(&out).map(|f| String::from_utf8_lossy(f).into_owned());
        let mut changes = Vec::new();
        while let (Some(status), Some(path)) = (fields.next(), fields.next()) {
            changes.push((status.chars().next().unwrap_or('M'), path));
        }
        Ok(changes)
    }

    /// Deletes a file of the work tree, then the folders it leaves empty (as git does).
    fn remove(&self, path: &str) -> Result<(), Error> {
        let full = self.git.top.join(path);
        match std::fs::remove_file(&full) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => return Err(e.into()),
        }
        let mut dir = full.parent();
        while let Some(d) = dir {
            if d == self.git.top || !d.starts_with(&self.git.top) || !is_empty_dir(d) {
                break;
            }
            let _ = std::fs::remove_dir(d);
            dir = d.parent();
        }
        Ok(())
    }
}

fn is_empty_dir(dir: &Path) -> bool {
    std::fs::read_dir(dir).is_ok_and(|mut entries| entries.next().is_none())
}
