//! `listWorkspaceFiles`: the composer's `@path` completion.
//!
//! The workspace is walked with the `ignore` crate (ripgrep's walker), so what git
//! ignores is not offered (`.gitignore`, `.ignore`, git's excludes — in a folder that is
//! not a repository too), `.git` is skipped, and links are listed but never followed,
//! so nothing outside the workspace is reached through one. The walk stops after
//! [`WALK_CAP`] entries: a home folder or a monorepo answers fast, with the paths
//! nearest the top. What was typed is matched fuzzily against each relative path with
//! `nucleo-matcher` (Helix's matcher, in its path mode: a match at a `/` or at the
//! start of a file name scores higher), best first; ties go to the shorter path.
//!
//! A query that names a place outside the workspace (`..`, an absolute path) is refused
//! rather than answered with nothing, so a caller sees why.

use std::path::{Component, Path, PathBuf};

use nucleo_matcher::pattern::{Atom, AtomKind, CaseMatching, Normalization};
use nucleo_matcher::{Config, Matcher, Utf32Str};
use weft_protocol::{
    ErrorCode, WireError, WorkspaceEntry, WorkspaceEntryKind, WorkspaceFilesQuery,
};

/// The walk stops after this many entries.
pub const WALK_CAP: usize = 20_000;
const DEFAULT_LIMIT: usize = 50;
const MAX_LIMIT: usize = 500;

/// The matching entries, best first.
pub fn list(q: &WorkspaceFilesQuery) -> Result<Vec<WorkspaceEntry>, WireError> {
    let root = workspace_root(&q.workspace)?;
    check_query(&q.query)?;
    let limit = q
        .limit
        .map_or(DEFAULT_LIMIT, |l| (l as usize).clamp(1, MAX_LIMIT));
    Ok(rank(walk(&root, WALK_CAP), &q.query, limit))
}

fn workspace_root(workspace: &str) -> Result<PathBuf, WireError> {
    let bad = |why: String| WireError::new(ErrorCode::BadWorkdir, why);
    let path = Path::new(workspace);
    if !path.is_absolute() {
        return Err(bad(format!(
            "workspace {workspace} is not an absolute path"
        )));
    }
    let root = path
        .canonicalize()
        .map_err(|e| bad(format!("workspace {workspace}: {e}")))?;
    if !root.is_dir() {
        return Err(bad(format!("workspace {workspace} is not a folder")));
    }
    Ok(root)
}

fn check_query(query: &str) -> Result<(), WireError> {
    let outside = Path::new(query).components().any(|c| {
        matches!(
            c,
            Component::ParentDir | Component::RootDir | Component::Prefix(_)
        )
    });
    if outside {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!("@{query} is outside the workspace: a mention names a path inside it"),
        ));
    }
    Ok(())
}

/// Every entry under `root` but `root` itself, relative, at most `cap` of them.
fn walk(root: &Path, cap: usize) -> Vec<WorkspaceEntry> {
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    let mut out = Vec::new();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        // A name that is not UTF-8 cannot be typed into a prompt as it is.
        let Some(rel) = rel.to_str() else { continue };
        let dir = entry.file_type().is_some_and(|t| t.is_dir());
        out.push(WorkspaceEntry {
            path: rel.replace('\\', "/"),
            kind: if dir {
                WorkspaceEntryKind::Dir
            } else {
                WorkspaceEntryKind::File
            },
        });
        if out.len() >= cap {
            break;
        }
    }
    out
}

fn rank(entries: Vec<WorkspaceEntry>, query: &str, limit: usize) -> Vec<WorkspaceEntry> {
    let depth = |e: &WorkspaceEntry| e.path.matches('/').count();
    if query.is_empty() {
        let mut all = entries;
        all.sort_by(|a, b| depth(a).cmp(&depth(b)).then_with(|| a.path.cmp(&b.path)));
        all.truncate(limit);
        return all;
    }
    let atom = Atom::new(
        query,
        CaseMatching::Smart,
        Normalization::Smart,
        AtomKind::Fuzzy,
        false,
    );
    let mut matcher = Matcher::new(Config::DEFAULT.match_paths());
    let mut buf = Vec::new();
    let mut scored: Vec<(u16, WorkspaceEntry)> = entries
        .into_iter()
        .filter_map(|e| {
            let score = atom.score(Utf32Str::new(&e.path, &mut buf), &mut matcher)?;
            Some((score, e))
        })
        .collect();
    scored.sort_by(|(sa, a), (sb, b)| {
        sb.cmp(sa)
            .then_with(|| a.path.len().cmp(&b.path.len()))
            .then_with(|| a.path.cmp(&b.path))
    });
    scored.into_iter().take(limit).map(|(_, e)| e).collect()
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn paths(found: &[WorkspaceEntry]) -> Vec<&str> {
        found.iter().map(|e| e.path.as_str()).collect()
    }

    #[test]
    fn the_walk_stops_at_its_cap() {
        let ws = tempfile::tempdir().unwrap();
        for i in 0..30 {
            std::fs::write(ws.path().join(format!("f{i}.txt")), "").unwrap();
        }
        assert_eq!(walk(ws.path(), 10).len(), 10);
    }

    #[test]
    fn a_name_match_beats_a_scattered_one_and_ties_go_to_the_shorter_path() {
        let entries = [
            "src/components/Composer.svelte",
            "crates/cli/src/commands.rs",
            "docs/composer.md",
        ]
        .map(|p| WorkspaceEntry {
            path: p.into(),
            kind: WorkspaceEntryKind::File,
        })
        .to_vec();
        let found = rank(entries, "compos", 10);
        assert_eq!(
            paths(&found),
            ["docs/composer.md", "src/components/Composer.svelte"],
            "commands.rs has no `compos` in order"
        );
    }
}
