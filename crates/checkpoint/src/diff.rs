//! What changed between two checkpoints.
//!
//! The file list comes from `git diff-tree` over the two trees (fast: unchanged subtrees
//! are skipped by their ids, and git finds renames); the contents of the changed blobs come
//! from one `git cat-file --batch`, and the hunks from `similar`, so line counts and the
//! unified text are computed the same way Weft's kernel does for edit tools. Git's own
//! textconv and external diff drivers are not used: both are commands a repository's
//! config could name.

use std::time::Duration;

use similar::{ChangeTag, TextDiff};

use crate::{git, Checkpoints, Error};

/// The files a turn (or any two checkpoints) changed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnDiff {
    pub files: Vec<FileDiff>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FileChange {
    Added,
    Modified,
    Deleted,
    /// `old_path` says from where; the content may have changed too.
    Renamed,
}

/// One file's change. `unified` is empty for binary files and for mode-only changes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileDiff {
    pub path: String,
    pub old_path: Option<String>,
    pub change: FileChange,
    pub added: usize,
    pub removed: usize,
    pub binary: bool,
    pub unified: String,
}

/// Bytes git itself looks at to call a blob binary.
const BINARY_PROBE: usize = 8000;
/// A diff of two huge, very different texts must not hold a turn's end for long: past
/// this `similar` gives a coarser (still correct) diff.
const DIFF_DEADLINE: Duration = Duration::from_secs(2);
const SUBMODULE_MODE: &str = "160000";

struct RawEntry {
    old_mode: String,
    new_mode: String,
    old_oid: String,
    new_oid: String,
    status: char,
    old_path: Option<String>,
    path: String,
}

impl Checkpoints {
    /// The changes from checkpoint `from` to checkpoint `to` (commit or tree ids).
    pub fn diff(&self, from: &str, to: &str) -> Result<TurnDiff, Error> {
        let from = self.tree_of(from)?;
        let to = self.tree_of(to)?;
        let out = self.git.run(
            None,
            ["diff-tree", "-r", "-z", "-M", "--no-ext-diff", &from, &to],
        )?;
        let entries = parse_raw(&out);
        let mut wanted = Vec::new();
        for e in &entries {
            for (mode, oid) in [(&e.old_mode, &e.old_oid), (&e.new_mode, &e.new_oid)] {
                if mode != SUBMODULE_MODE && !is_null(oid) {
                    wanted.push(oid.clone());
                }
            }
        }
        let blobs = self.blobs(&wanted)?;
        let empty: Vec<u8> = Vec::new();
        let files = entries
            .into_iter()
            .map(|e| {
                let old = blobs.get(&e.old_oid).unwrap_or(&empty);
                let new = blobs.get(&e.new_oid).unwrap_or(&empty);
                let submodule = e.old_mode == SUBMODULE_MODE || e.new_mode == SUBMODULE_MODE;
                let change = match e.status {
                    'A' => FileChange::Added,
                    'D' => FileChange::Deleted,
                    'R' => FileChange::Renamed,
                    _ => FileChange::Modified,
                };
                let old_name = e.old_path.as_deref().unwrap_or(&e.path);
                let mut file = FileDiff {
                    path: e.path.clone(),
                    old_path: e.old_path.clone(),
                    change,
                    added: 0,
                    removed: 0,
                    binary: submodule,
                    unified: String::new(),
                };
                if !submodule {
                    fill_text(&mut file, old_name, old, new);
                }
                file
            })
            .collect();
        Ok(TurnDiff { files })
    }

    pub(crate) fn tree_of(&self, rev: &str) -> Result<String, Error> {
        // Full object ids only: a commit's tree never changes, a ref's does.
        let full = matches!(rev.len(), 40 | 64) && rev.bytes().all(|b| b.is_ascii_hexdigit());
        if full {
            if let Some(tree) = self.cached_tree(rev) {
                return Ok(tree);
            }
        }
        let mut cmd = self.git.command(None);
        cmd.args(["rev-parse", "--verify", "--quiet", "--end-of-options"])
            .arg(format!("{rev}^{{tree}}"));
        let out = git::output(cmd, None)?;
        let tree = String::from_utf8_lossy(&out.stdout).trim().to_owned();
        if out.status.success() && !tree.is_empty() {
            if full {
                self.remember_tree(rev, &tree);
            }
            Ok(tree)
        } else {
            Err(Error::UnknownCheckpoint(rev.to_owned()))
        }
    }

    /// The contents of `oids`, read through one `cat-file --batch`.
    fn blobs(&self, oids: &[String]) -> Result<std::collections::HashMap<String, Vec<u8>>, Error> {
        let mut map = std::collections::HashMap::new();
        if oids.is_empty() {
            return Ok(map);
        }
        let input = oids.iter().flat_map(|o| [o.as_bytes(), b"\n"]).flatten();
        let out = self.git.run_input(
            None,
            ["cat-file", "--batch"],
            Some(input.copied().collect()),
        )?;
        let mut rest = out.as_slice();
        while let Some(nl) = rest.iter().position(|b| *b == b'\n') {
            let header = String::from_utf8_lossy(&rest[..nl]).into_owned();
            rest = &rest[nl + 1..];
            let mut parts = header.split(' ');
            let (Some(oid), Some(_kind), Some(size)) = (parts.next(), parts.next(), parts.next())
            else {
                // "<oid> missing": nothing follows the header.
                continue;
            };
            let size: usize = size.parse().unwrap_or(0);
            let Some(body) = rest.get(..size) else {
                break;
            };
            map.insert(oid.to_owned(), body.to_vec());
            rest = rest.get(size + 1..).unwrap_or_default();
        }
        Ok(map)
    }
}

fn is_null(oid: &str) -> bool {
    oid.bytes().all(|b| b == b'0')
}

/// Parses `diff-tree -r -z` raw output: `:<modes> <oids> <status>\0<path>\0`, with a
/// second path for renames and copies.
fn parse_raw(out: &[u8]) -> Vec<RawEntry> {
    let mut fields = git::nul_fields(out).map(|f| String::from_utf8_lossy(f).into_owned());
    let mut entries = Vec::new();
    while let Some(meta) = fields.next() {
        let parts: Vec<&str> = meta.trim_start_matches(':').split(' ').collect();
        let [old_mode, new_mode, old_oid, new_oid, status] = parts[..] else {
            continue;
        };
        let status = status.chars().next().unwrap_or('M');
        let Some(first) = fields.next() else { break };
        let (old_path, path) = if matches!(status, 'R' | 'C') {
            match fields.next() {
                Some(second) => (Some(first), second),
                None => break,
            }
        } else {
            (None, first)
        };
        entries.push(RawEntry {
            old_mode: old_mode.to_owned(),
            new_mode: new_mode.to_owned(),
            old_oid: old_oid.to_owned(),
            new_oid: new_oid.to_owned(),
            status,
            old_path,
            path,
        });
    }
    entries
}

fn is_binary(bytes: &[u8]) -> bool {
    bytes[..bytes.len().min(BINARY_PROBE)].contains(&0) || std::str::from_utf8(bytes).is_err()
}

fn fill_text(file: &mut FileDiff, old_name: &str, old: &[u8], new: &[u8]) {
    if is_binary(old) || is_binary(new) {
        file.binary = true;
        return;
    }
    let (Ok(old), Ok(new)) = (std::str::from_utf8(old), std::str::from_utf8(new)) else {
        return;
    };
    let diff = TextDiff::configure()
        .timeout(DIFF_DEADLINE)
        .diff_lines(old, new);
    for change in diff.iter_all_changes() {
        match change.tag() {
            ChangeTag::Insert => file.added += 1,
            ChangeTag::Delete => file.removed += 1,
            ChangeTag::Equal => {}
        }
    }
    if file.added + file.removed > 0 {
        let from = match file.change {
            FileChange::Added => "/dev/null".to_owned(),
            _ => format!("a/{old_name}"),
        };
        let to = match file.change {
            FileChange::Deleted => "/dev/null".to_owned(),
            _ => format!("b/{}", file.path),
        };
        file.unified = diff
            .unified_diff()
            .context_radius(3)
            .header(&from, &to)
            .to_string();
    }
}

impl Checkpoints {
    /// What differs in the folder now from checkpoint `since` (edits no checkpoint holds
    /// yet), limited to `paths` (files or folders, relative to [`Self::top`]) when given.
    /// Nothing is committed: the folder's tree is written as objects only.
    pub fn changes_since(&self, since: &str, paths: Option<&[&str]>) -> Result<TurnDiff, Error> {
        let (current, _) = self.write_tree()?;
        let mut diff = self.diff(since, &current)?;
        if let Some(paths) = paths {
            diff.files.retain(|f| {
                under(paths, &f.path) || f.old_path.as_deref().is_some_and(|o| under(paths, o))
            });
        }
        Ok(diff)
    }
}

/// Whether `path` is one of `paths` or inside one of them (as a literal pathspec is).
fn under(paths: &[&str], path: &str) -> bool {
    paths.iter().any(|p| {
        let p = p.trim_end_matches('/');
        path == p
            || path
                .strip_prefix(p)
                .is_some_and(|rest| rest.starts_with('/'))
    })
}
