//! Real `git` in temporary folders the tests make.

mod diff;
mod restore;
mod snapshot;
mod trust;
mod watch;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tempfile::TempDir;
use weft_checkpoint::Checkpoints;

/// A folder made by a test, with the test's own git (guarded the same way, so setting up a
/// trap never springs it).
pub struct Repo {
    _dir: TempDir,
    pub root: PathBuf,
    pub path: PathBuf,
    pub shadow: PathBuf,
}

impl Repo {
    /// An empty folder, not a repository.
    pub fn folder() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().canonicalize().unwrap();
        let path = root.join("work");
        std::fs::create_dir(&path).unwrap();
        Self {
            shadow: root.join("shadow"),
            root,
            path,
            _dir: dir,
        }
    }

    /// A repository with no commits.
    pub fn init() -> Self {
        let repo = Self::folder();
        repo.git(&["init", "-q", "-b", "main"]);
        repo
    }

    /// A repository whose one commit has `files`.
    pub fn with(files: &[(&str, &str)]) -> Self {
        let repo = Self::init();
        for (path, text) in files {
            repo.write(path, text);
        }
        repo.git(&["add", "-A"]);
        repo.git(&["commit", "-q", "-m", "first"]);
        repo
    }

    pub fn open(&self) -> Checkpoints {
        Checkpoints::open(&self.path, &self.shadow).unwrap()
    }

    pub fn write(&self, path: &str, text: &str) {
        let full = self.path.join(path);
        std::fs::create_dir_all(full.parent().unwrap()).unwrap();
        std::fs::write(full, text).unwrap();
    }

    pub fn read(&self, path: &str) -> Option<String> {
        std::fs::read_to_string(self.path.join(path)).ok()
    }

    pub fn git(&self, args: &[&str]) -> String {
        git_in(&self.path, args)
    }

    /// What must not change: the index file's bytes, HEAD, every ref but Weft's, the stash,
    /// `git status`, and every file of the work tree.
    pub fn fingerprint(&self) -> BTreeMap<String, String> {
        let mut map = BTreeMap::new();
        let git_dir = PathBuf::from(self.git(&["rev-parse", "--absolute-git-dir"]).trim());
        let index = std::fs::read(git_dir.join("index")).unwrap_or_default();
        map.insert("index".into(), hash(&index));
        let head = std::fs::read(git_dir.join("HEAD")).unwrap_or_default();
        map.insert("HEAD".into(), String::from_utf8_lossy(&head).into_owned());
        let refs = self.git(&["for-each-ref", "--format=%(refname) %(objectname)"]);
        let refs: Vec<&str> = refs
            .lines()
            .filter(|l| !l.starts_with("refs/weft/"))
            .collect();
        map.insert("refs".into(), refs.join("\n"));
        let stash = self.git(&["stash", "list", "--format=%H"]);
        map.insert("stash".into(), stash);
        let status = self.git(&[
            "status",
            "--porcelain=v1",
            "--untracked-files=all",
            "--ignored",
        ]);
        map.insert("status".into(), status);
        for (path, bytes) in files(&self.path) {
            map.insert(format!("file {path}"), hash(&bytes));
        }
        map
    }
}

pub fn git_in(dir: &Path, args: &[&str]) -> String {
    let mut cmd = Command::new("git");
    for (key, _) in std::env::vars_os() {
        if key.to_string_lossy().starts_with("GIT_") {
            cmd.env_remove(key);
        }
    }
    let out = cmd
        .args([
            "-c",
            "core.fsmonitor=false",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@t",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(dir)
        .env("GIT_OPTIONAL_LOCKS", "0")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

/// Every file under `dir` except `.git`, by relative path.
pub fn files(dir: &Path) -> BTreeMap<String, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            let p = entry.path();
            if entry.file_name() == ".git" {
                continue;
            }
            if entry.file_type().unwrap().is_dir() {
                stack.push(p);
            } else {
                let rel = p.strip_prefix(dir).unwrap().to_string_lossy().into_owned();
                out.insert(rel, std::fs::read(&p).unwrap());
            }
        }
    }
    out
}

fn hash(bytes: &[u8]) -> String {
    use std::hash::{DefaultHasher, Hasher};
    let mut h = DefaultHasher::new();
    h.write(bytes);
    format!("{:016x} {}", h.finish(), bytes.len())
}

pub fn sh(dir: &Path, script: &str) {
    let status = Command::new("sh")
        .args(["-c", script])
        .current_dir(dir)
        .status()
        .unwrap();
    assert!(status.success(), "{script}");
}
