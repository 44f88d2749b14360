//! Running the real `git` binary inside the trust boundary, as `weft-checkpoint` does
//! (its runner is private to it; this is the same guard, kept small).
//!
//! A repository's `.git/config` is not trusted (docs/security.md): `core.fsmonitor` and
//! hooks are commands git runs (`worktree add` runs `post-checkout`, `merge` runs
//! `pre-merge-commit`, `commit` runs `pre-commit`…), and so are content filters that the
//! repository's own config defines (a checkout runs `smudge`). Every call passes
//! `core.fsmonitor=false` and `core.hooksPath=/dev/null`, turns off the repository's own
//! filters, and starts from an environment without the daemon's `GIT_*` variables. The
//! user's global config (identity, git-lfs) is the user's own and stays.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::Error;

const GUARD: [&str; 9] = [
    "--no-pager",
    "-c",
    "core.fsmonitor=false",
    "-c",
    "core.hooksPath=/dev/null",
    "-c",
    "gc.auto=0",
    "-c",
    "maintenance.auto=false",
];

/// Git in one folder (a repository's work tree or a linked worktree).
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub(crate) dir: PathBuf,
    filters: Vec<String>,
    /// Extra environment for every call (an identity when the user has none).
    env: Vec<(String, String)>,
}

impl Git {
    /// Git in `dir`, with the repository's own content filters turned off.
    pub(crate) fn open(dir: &Path) -> Result<Self, Error> {
        let mut git = Git {
            dir: dir.to_path_buf(),
            filters: Vec::new(),
            env: Vec::new(),
        };
        git.filters = git.local_filters()?;
        Ok(git)
    }

    /// A command with the guard options and the cleaned environment.
    pub(crate) fn command(&self) -> Command {
        let mut cmd = Command::new("git");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(key);
            }
        }
        cmd.args(GUARD);
        for name in &self.filters {
            // An empty command is no filter.
            for part in ["clean", "smudge", "process"] {
                cmd.arg("-c").arg(format!("filter.{name}.{part}="));
            }
            cmd.arg("-c").arg(format!("filter.{name}.required=false"));
        }
        cmd.current_dir(&self.dir);
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        for (k, v) in &self.env {
            cmd.env(k, v);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Commits carry the user's identity from their global config; a machine without
    /// one (a fresh CI box) gets Weft's, instead of a failed commit.
    pub(crate) fn with_identity(mut self) -> Self {
        let has = |key: &str| {
            self.line(["config", "--get", key])
                .is_ok_and(|v| !v.is_empty())
        };
        if !has("user.name") || !has("user.email") {
            for (k, v) in [
                ("GIT_AUTHOR_NAME", "weft"),
                ("GIT_AUTHOR_EMAIL", "weft@localhost"),
                ("GIT_COMMITTER_NAME", "weft"),
                ("GIT_COMMITTER_EMAIL", "weft@localhost"),
            ] {
                self.env.push((k.into(), v.into()));
            }
        }
        self
    }

    /// Runs git; its output whatever the exit status.
    pub(crate) fn output<I, S>(&self, args: I) -> Result<Output, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command();
        cmd.args(args);
        let command = describe(&cmd);
        cmd.output()
            .map_err(|source| Error::Spawn { command, source })
    }

    /// Runs git and returns its stdout, or a typed error with its stderr.
    pub(crate) fn run<I, S>(&self, args: I) -> Result<String, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command();
        cmd.args(args);
        let command = describe(&cmd);
        let out = cmd.output().map_err(|source| Error::Spawn {
            command: command.clone(),
            source,
        })?;
        if out.status.success() {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        } else {
            Err(failed(command, &out))
        }
    }

    /// stdout as one trimmed line.
    pub(crate) fn line<I, S>(&self, args: I) -> Result<String, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        Ok(self.run(args)?.trim_end().to_owned())
    }

    fn local_filters(&self) -> Result<Vec<String>, Error> {
        let out = self.output([
            "config",
            "--show-scope",
            "--get-regexp",
            r"^filter\..+\.(clean|smudge|process)$",
        ])?;
        let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let (scope, rest) = line.split_once('\t')?;
                if !matches!(scope, "local" | "worktree") {
                    return None;
                }
                let key = rest.split_once(' ').map_or(rest, |(k, _)| k);
                Some(key.strip_prefix("filter.")?.rsplit_once('.')?.0.to_string())
            })
            .collect();
        names.sort();
        names.dedup();
        Ok(names)
    }
}

/// The subcommand and its arguments, without the guard, for errors.
fn describe(cmd: &Command) -> String {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .filter(|a| a != "--no-pager")
        .collect();
    let mut shown = Vec::new();
    let mut skip = false;
    for a in args {
        if skip {
            skip = false;
            continue;
        }
        if a == "-c" {
            skip = true;
            continue;
        }
        shown.push(a);
    }
    format!("git {}", shown.join(" "))
}

pub(crate) fn failed(command: String, out: &Output) -> Error {
    Error::Git {
        command,
        status: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    }
}
