//! Running a worktree's `setup` and `teardown` commands: `sh -c LINE` in the worktree,
//! with its ports in the environment, output (stdout and stderr interleaved) to a log
//! file a client can read or follow, and under the OS sandbox when the repository's
//! config asks (`sandbox = true`). The sandbox keeps the network: a setup installs
//! dependencies. When the config asks for the sandbox and this machine has none, the
//! command does not run (fail closed) and the log says why.

use std::fs::File;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::{Entry, Error};

/// How a hook ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HookRun {
    /// Its log.
    pub log: PathBuf,
    /// Its exit code (`None`: killed, or not run).
    pub code: Option<i32>,
    /// Why it did not run, when it did not.
    pub skipped: Option<String>,
}

impl HookRun {
    /// True when it ran and exited 0.
    pub fn ok(&self) -> bool {
        self.code == Some(0)
    }
}

/// Where a worktree's hook logs go: `$WEFT_HOME/worktree-logs/<repo>/<name>/<hook>.log`.
pub fn log_path(weft_home: &Path, entry: &Entry, hook: &str) -> PathBuf {
    let repo = entry
        .repo
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    weft_home
        .join("worktree-logs")
        .join(repo)
        .join(&entry.name)
        .join(format!("{hook}.log"))
}

/// The variables every command of the worktree gets.
pub fn env(entry: &Entry) -> Vec<(String, String)> {
    vec![
        ("WEFT_PORT".into(), entry.port.to_string()),
        ("WEFT_PORT_RANGE".into(), entry.port_range()),
        ("WEFT_WORKTREE".into(), entry.path.display().to_string()),
        ("WEFT_WORKTREE_NAME".into(), entry.name.clone()),
        ("WEFT_ROOT_PATH".into(), entry.repo.display().to_string()),
    ]
}

/// Runs `line` for `hook` (`setup`, `teardown`) in the worktree and waits for it.
pub fn run(
    weft_home: &Path,
    entry: &Entry,
    hook: &str,
    line: &str,
    sandbox: bool,
) -> Result<HookRun, Error> {
    let log = log_path(weft_home, entry, hook);
    if let Some(dir) = log.parent() {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let out = File::create(&log).map_err(|e| Error::io(&log, e))?;
    let err = out.try_clone().map_err(|e| Error::io(&log, e))?;
    let scratch;
    let _hold;
    let mut cmd = if sandbox {
        scratch = weft_sandbox::scratch().map_err(|e| Error::io(&entry.path, e))?;
        let mut policy = weft_sandbox::Policy::new(&entry.path, scratch.path(), weft_home);
        policy.allow_network = true;
        match weft_sandbox::shell(&policy, line) {
            Ok(Some(confined)) => {
                _hold = confined.hold;
                confined.command
            }
            Ok(None) => {
                return not_run(
                    log,
                    "the config asks for the sandbox and this machine has none",
                )
            }
            Err(e) => return not_run(log, &format!("the sandbox refused it: {e}")),
        }
    } else {
        let mut c = Command::new("sh");
        c.arg("-c").arg(line).current_dir(&entry.path);
        c
    };
    cmd.envs(env(entry))
        .stdin(Stdio::null())
        .stdout(out)
        .stderr(err);
    let status = cmd.status().map_err(|e| Error::io(Path::new("sh"), e))?;
    Ok(HookRun {
        log,
        code: status.code(),
        skipped: None,
    })
}

fn not_run(log: PathBuf, why: &str) -> Result<HookRun, Error> {
    std::fs::write(&log, format!("not run: {why}\n")).map_err(|e| Error::io(&log, e))?;
    Ok(HookRun {
        log,
        code: None,
        skipped: Some(why.to_string()),
    })
}
