//! A repository's `.weft/worktree.toml`: what a fresh worktree lacks and how to start it.
//!
//! ```toml
//! include = [".env*", "config/local.yml"]   # ignored files to copy in
//! link = ["node_modules"]                   # ignored folders to share
//! setup = "npm ci"                          # once, in the new worktree
//! run = "npm run dev -- --port $WEFT_PORT"  # the dev server
//! teardown = "docker compose down"          # before the worktree is removed
//! sandbox = true                            # run setup/teardown in the OS sandbox
//! ```
//!
//! It grants (`setup`, `run`, `teardown` are commands; `include` copies secrets), so it
//! acts only in a workspace the user trusted: the caller says so, and an untrusted
//! repository gets [`WorktreeConfig::default`] (a bare worktree, no command).
//!
//! **`include`** copies only *ignored* files (`git ls-files --others --ignored
//! --directory`): a tracked file is already in the worktree, and copying it would hide
//! the branch's own version. A pattern without `/` matches a file name at any depth
//! (as in `.gitignore`), one with `/` the whole path from the top. A folder ignored as a
//! whole (`node_modules/`) is listed as the folder, not walked (walking it is what makes
//! such a listing slow): a pattern matching the folder copies all of it, and a file inside
//! one is reached by naming the folder, not by a pattern for the file's name.
//!
//! **`link`** shares a folder of the main checkout by a symlink. Not a copy: a copy of
//! `node_modules` is not an install (its `.bin` shims point at the original), and a
//! reflink copy needs a filesystem that has them (btrfs, XFS), which ext4 — the common
//! case here — has not; a symlink works everywhere and costs nothing. It is shared, not
//! read-only: what the worktree writes there lands in the main checkout. So `link` is
//! for folders nobody writes per branch (a download cache, a model folder), and a
//! dependency tree belongs in `setup` (`npm ci`), as the research notes recommend.

use std::path::{Path, PathBuf};

use globset::{GlobSet, GlobSetBuilder};
use serde::Deserialize;

use crate::git::Git;
use crate::Error;

/// Where the file is, relative to the repository's top.
pub const FILE: &str = ".weft/worktree.toml";

/// At most this large (a config, not a data file).
const CAP: u64 = 64 * 1024;

/// The parsed file.
#[derive(Debug, Clone, Default, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct WorktreeConfig {
    /// Globs of ignored files to copy into a new worktree.
    pub include: Vec<String>,
    /// Folders of the main checkout to share (symlinked).
    pub link: Vec<String>,
    /// A shell command run once in a new worktree.
    pub setup: Option<String>,
    /// The dev server's command.
    pub run: Option<String>,
    /// A shell command run in the worktree before it is removed.
    pub teardown: Option<String>,
    /// Run `setup` and `teardown` under the OS sandbox.
    pub sandbox: bool,
}

impl WorktreeConfig {
    /// The repository's file when `trusted`, else nothing (an untrusted workspace's
    /// `.weft/` grants nothing). A missing file is the default; a bad one an error.
    pub fn load(repo_top: &Path, trusted: bool) -> Result<Self, Error> {
        if !trusted {
            return Ok(Self::default());
        }
        let path = repo_top.join(FILE);
        let text = weft_workspace::files::read_config(&path, CAP).map_err(|e| Error::Config {
            path: path.clone(),
            message: e.to_string(),
        })?;
        match text {
            None => Ok(Self::default()),
            Some(text) => toml::from_str(&text).map_err(|e| Error::Config {
                path,
                message: e.to_string(),
            }),
        }
    }
}

/// Copies the ignored files of `from` that `include` names into `to` (same relative
/// paths). Returns the paths copied.
pub(crate) fn copy_included(
    from: &Git,
    to: &Path,
    include: &[String],
) -> Result<Vec<PathBuf>, Error> {
    if include.is_empty() {
        return Ok(Vec::new());
    }
    let (by_name, by_path) = globs(include)?;
    let listed = from.run([
        "ls-files",
        "-z",
        "--others",
        "--ignored",
        "--exclude-standard",
        "--directory",
    ])?;
    let mut copied = Vec::new();
    for rel in listed.split('\0').filter(|s| !s.is_empty()) {
        let rel_path = rel.trim_end_matches('/');
        let name = Path::new(rel_path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !(by_name.is_match(&name) || by_path.is_match(rel_path)) {
            continue;
        }
        let src = from.dir.join(rel_path);
        let dst = to.join(rel_path);
        copy_tree(&src, &dst)?;
        copied.push(PathBuf::from(rel_path));
    }
    Ok(copied)
}

fn globs(patterns: &[String]) -> Result<(GlobSet, GlobSet), Error> {
    let mut by_name = GlobSetBuilder::new();
    let mut by_path = GlobSetBuilder::new();
    for p in patterns {
        let p = p.trim_start_matches('/');
        let glob = globset::GlobBuilder::new(p)
            .literal_separator(true)
            .build()
            .map_err(|e: globset::Error| Error::Config {
                path: PathBuf::from(FILE),
                message: format!("include `{p}`: {e}"),
            })?;
        if p.contains('/') {
            by_path.add(glob);
        } else {
            by_name.add(glob);
        }
    }
    let built = |b: GlobSetBuilder| {
        b.build().map_err(|e| Error::Config {
            path: PathBuf::from(FILE),
            message: e.to_string(),
        })
    };
    Ok((built(by_name)?, built(by_path)?))
}

/// Copies a file or a folder (symlinks as symlinks), keeping permissions.
fn copy_tree(src: &Path, dst: &Path) -> Result<(), Error> {
    let meta = std::fs::symlink_metadata(src).map_err(|e| Error::io(src, e))?;
    if let Some(parent) = dst.parent() {
        std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
    }
    if meta.file_type().is_symlink() {
        let target = std::fs::read_link(src).map_err(|e| Error::io(src, e))?;
        std::os::unix::fs::symlink(target, dst).map_err(|e| Error::io(dst, e))?;
    } else if meta.is_dir() {
        std::fs::create_dir_all(dst).map_err(|e| Error::io(dst, e))?;
        for entry in std::fs::read_dir(src).map_err(|e| Error::io(src, e))? {
            let entry = entry.map_err(|e| Error::io(src, e))?;
            copy_tree(&entry.path(), &dst.join(entry.file_name()))?;
        }
    } else {
        std::fs::copy(src, dst).map_err(|e| Error::io(src, e))?;
    }
    Ok(())
}

/// Symlinks each `link` folder of `from` into `to`, when it exists in `from` and `to`
/// has nothing there yet (a tracked folder of the branch wins). Returns those linked.
pub(crate) fn link_shared(from: &Path, to: &Path, link: &[String]) -> Result<Vec<PathBuf>, Error> {
    let mut linked = Vec::new();
    for rel in link {
        let rel = Path::new(rel.trim_matches('/'));
        if rel.as_os_str().is_empty()
            || rel
                .components()
                .any(|c| !matches!(c, std::path::Component::Normal(_)))
        {
            return Err(Error::Config {
                path: PathBuf::from(FILE),
                message: format!("link `{}`: a folder inside the repository", rel.display()),
            });
        }
        let src = from.join(rel);
        let dst = to.join(rel);
        if !src.is_dir() || std::fs::symlink_metadata(&dst).is_ok() {
            continue;
        }
        if let Some(parent) = dst.parent() {
            std::fs::create_dir_all(parent).map_err(|e| Error::io(parent, e))?;
        }
        std::os::unix::fs::symlink(&src, &dst).map_err(|e| Error::io(&dst, e))?;
        linked.push(rel.to_path_buf());
    }
    Ok(linked)
}
