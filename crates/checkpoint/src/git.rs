//! Running the real `git` binary inside the trust boundary.
//!
//! A workspace's `.git/config` is not trusted (docs/security.md): `core.fsmonitor` is a
//! command git runs on every index refresh, and hooks (including `reference-transaction`,
//! which `update-ref` runs) are commands too. Every call therefore passes
//! `-c core.fsmonitor=false -c core.hooksPath=/dev/null`, and starts from an environment
//! with no `GIT_*` variable of the daemon's own: a `GIT_DIR` or `GIT_INDEX_FILE` inherited
//! from wherever the daemon was started must never redirect a checkpoint onto the user's
//! index. What remains of the environment (PATH, HOME) keeps the user's own global config,
//! which is trusted.

use std::ffi::OsStr;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use crate::Error;

/// The identity every checkpoint commit carries, so a checkpoint never depends on (or
/// leaks) the user's `user.name`.
const IDENTITY: [(&str, &str); 4] = [
    ("GIT_AUTHOR_NAME", "weft"),
    ("GIT_AUTHOR_EMAIL", "weft@localhost"),
    ("GIT_COMMITTER_NAME", "weft"),
    ("GIT_COMMITTER_EMAIL", "weft@localhost"),
];

/// Before every subcommand: nothing the workspace configures may run code, and git never
/// starts a pager or an automatic gc in the daemon.
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

/// For commands that write a temporary index: its trailing checksum (a SHA-1 of the whole
/// file, megabytes in a large repository) is never needed, since the file is ours and
/// short-lived. Git 2.40+ honours it; older versions ignore the setting.
pub(crate) const SKIP_HASH: [&str; 2] = ["-c", "index.skipHash=true"];

/// Where git finds the repository: its own discovery from the work tree's top, or an
/// explicit shadow git dir whose work tree is the folder.
#[derive(Debug, Clone)]
pub(crate) struct Git {
    pub(crate) top: PathBuf,
    pub(crate) shadow_dir: Option<PathBuf>,
    /// Content filters the repository's own config defines (see [`Git::disarm_filters`]).
    pub(crate) filters: Vec<String>,
}

impl Git {
    /// A command with the guard options and the cleaned environment. `index` points git at
    /// a temporary index instead of the real one.
    pub(crate) fn command(&self, index: Option<&Path>) -> Command {
        let mut cmd = Command::new("git");
        for (key, _) in std::env::vars_os() {
            if key.to_string_lossy().starts_with("GIT_") {
                cmd.env_remove(key);
            }
        }
        cmd.args(GUARD);
        for name in &self.filters {
            // An empty command is no filter (git's convert.c runs only a non-empty one).
            for part in ["clean", "smudge", "process"] {
                cmd.arg("-c").arg(format!("filter.{name}.{part}="));
            }
            cmd.arg("-c").arg(format!("filter.{name}.required=false"));
        }
        cmd.current_dir(&self.top);
        // Without this a read-only call (diff, status-like refreshes) may still write the
        // user's index opportunistically to save stat data.
        cmd.env("GIT_OPTIONAL_LOCKS", "0");
        cmd.env("GIT_TERMINAL_PROMPT", "0");
        cmd.env("GIT_NO_REPLACE_OBJECTS", "1");
        for (k, v) in IDENTITY {
            cmd.env(k, v);
        }
        if let Some(dir) = &self.shadow_dir {
            cmd.env("GIT_DIR", dir);
            cmd.env("GIT_WORK_TREE", &self.top);
        }
        if let Some(index) = index {
            cmd.env("GIT_INDEX_FILE", index);
        }
        cmd.stdin(Stdio::null());
        cmd
    }

    /// Finds the content filters (`filter.<name>.clean`, `smudge`, `process`) defined by the
    /// repository's own config (its `.git/config`, a worktree's, what they include) and
    /// turns them off for every later call: a filter is a command git runs on `add`,
    /// `status` and `checkout-index`, and the workspace's config is not trusted. Filters
    /// from the user's global config (git-lfs's) are the user's own and keep working.
    pub(crate) fn disarm_filters(&mut self) -> Result<(), Error> {
        let mut cmd = self.command(None);
        cmd.args([
            "config",
            "--show-scope",
            "--get-regexp",
            r"^filter\..+\.(clean|smudge|process)$",
        ]);
        let command = describe(&cmd);
        let out = output(cmd, None)?;
        // Exit 1: no such key anywhere.
        if !out.status.success() && out.status.code() != Some(1) {
            return Err(failed(command, &out));
        }
        let mut names: Vec<String> = String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter_map(|line| {
                let (scope, rest) = line.split_once('\t')?;
                if !matches!(scope, "local" | "worktree") {
                    return None;
                }
                let key = rest.split_once(' ').map_or(rest, |(k, _)| k);
                let name = key.strip_prefix("filter.")?.rsplit_once('.')?.0;
                Some(name.to_string())
            })
            .collect();
        names.sort();
        names.dedup();
        self.filters = names;
        Ok(())
    }

    /// Runs git and returns its stdout, or a typed error with its stderr.
    pub(crate) fn run<I, S>(&self, index: Option<&Path>, args: I) -> Result<Vec<u8>, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        self.run_input(index, args, None)
    }

    /// Runs git with `input` on its stdin (written from another thread, so a large input
    /// and a large output never deadlock on full pipes).
    pub(crate) fn run_input<I, S>(
        &self,
        index: Option<&Path>,
        args: I,
        input: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let mut cmd = self.command(index);
        cmd.args(args);
        let command = describe(&cmd);
        let out = output(cmd, input)?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(failed(command, &out))
        }
    }

    /// stdout as one trimmed line (an object id, a path).
    pub(crate) fn line<I, S>(&self, index: Option<&Path>, args: I) -> Result<String, Error>
    where
        I: IntoIterator<Item = S>,
        S: AsRef<OsStr>,
    {
        let out = self.run(index, args)?;
        Ok(String::from_utf8_lossy(&out).trim_end().to_owned())
    }
}

/// The git subcommand and its arguments, without the guard options, for errors.
pub(crate) fn describe(cmd: &Command) -> String {
    let args: Vec<String> = cmd
        .get_args()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    format!(
        "git {}",
        args.get(GUARD.len()..).unwrap_or_default().join(" ")
    )
}

pub(crate) fn output(mut cmd: Command, input: Option<Vec<u8>>) -> Result<Output, Error> {
    let description = describe(&cmd);
    cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
    if input.is_some() {
        cmd.stdin(Stdio::piped());
    }
    let mut child = cmd.spawn().map_err(|e| Error::Spawn {
        command: description,
        source: e,
    })?;
    let writer = match (input, child.stdin.take()) {
        (Some(bytes), Some(mut stdin)) => Some(std::thread::spawn(move || {
            // A failed write shows up as git's own error (it read a short input).
            let _ = stdin.write_all(&bytes);
        })),
        _ => None,
    };
    let out = child.wait_with_output().map_err(Error::Io)?;
    if let Some(writer) = writer {
        let _ = writer.join();
    }
    Ok(out)
}

pub(crate) fn failed(command: String, out: &Output) -> Error {
    Error::Git {
        command,
        status: out.status.code(),
        stderr: String::from_utf8_lossy(&out.stderr).trim().to_owned(),
    }
}

/// Splits NUL-terminated git output (`-z`) into its fields.
pub(crate) fn nul_fields(out: &[u8]) -> impl Iterator<Item = &[u8]> {
    out.split(|b| *b == 0).filter(|f| !f.is_empty())
}
