//! Running a command so it cannot reach past its workspace even when the judgement
//! that let it run was wrong: the workspace and a temp folder writable, the rest of
//! the file system read-only, `.git` and `.weft` read-only inside the workspace, no
//! host Unix socket reachable (the daemon's, D-Bus), no network unless allowed.
//!
//! The mechanism is probed once ([`probe`]): bubblewrap when it runs here (mount,
//! PID, IPC and network namespaces; [`bwrap`] says what it hides and why); else
//! Landlock plus a seccomp filter, applied by the `weft-sandbox-exec` helper to itself
//! before it execs the command (so no crate of ours needs `unsafe`;
//! `landlock_exec` says what each refuses); else unavailable, and the caller must ask
//! before anything that is not provably read-only runs (fail closed).
//!
//! What holds under each, as `weft sandbox --probe` measures it ([`check`]):
//!
//! | | bubblewrap | Landlock + seccomp |
//! |---|---|---|
//! | writes outside the workspace and scratch folder | refused | refused |
//! | host Unix sockets | hidden (`$WEFT_HOME`, `/run`, `$XDG_RUNTIME_DIR`, `/tmp`) | `socket(AF_UNIX)` refused |
//! | `$WEFT_HOME`, `$XDG_RUNTIME_DIR` | hidden | not readable |
//! | `.git`, `.weft` | read-only, absent or not ([`mountpoint`]) | writable: Landlock only adds access |
//! | network | own namespace | TCP and every non-Unix socket refused |
//! | signals to the daemon | own PID namespace | refused from Linux 6.12 (Landlock scoping) |
//!
//! Because Landlock cannot keep `.git` and `.weft` read-only, a caller under it must
//! ask before any command that is not provably read-only (the native agent's shell
//! policy passes `protects_git: false`).
//!
//! `.git` and `.weft` under bubblewrap: a folder or a file (a worktree's gitfile) is
//! bound read-only onto itself; an absent one gets an empty folder made for the mount
//! and removed after the last command using it, if still empty; a symbolic link is
//! refused with [`Error::Symlink`] (a mount would land on its target and leave the
//! link replaceable). Weft's own process may leave an empty `.git`/`.weft` behind only
//! when it dies mid-command or another Weft process still mounts it; git and Weft both
//! read an empty one as absent.

pub mod bwrap;
pub mod check;
pub mod mountpoint;
pub mod readable;

#[cfg(target_os = "linux")]
mod landlock_exec;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::Serialize;

pub use check::{check, Checks, Reach};
#[cfg(target_os = "linux")]
pub use landlock_exec::{exec_main, exec_with};
pub use mountpoint::Hold;

/// Why a command cannot run under the sandbox.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The workspace's `.git` or `.weft` is a symbolic link.
    #[error(
        "{} is a symbolic link (to {}): the sandbox cannot keep it read-only, so no command \
         runs in this workspace; replace the link with the folder it points to, or turn the \
         sandbox off",
        path.display(),
        target.display()
    )]
    Symlink {
        /// The link.
        path: PathBuf,
        /// Where it points.
        target: PathBuf,
    },
    /// The workspace's `.git` or `.weft` could not be prepared.
    #[error("cannot prepare {} for the sandbox: {source}", path.display())]
    Io {
        /// The path.
        path: PathBuf,
        /// What the OS said.
        source: std::io::Error,
    },
}

/// A command ready to run under the sandbox, and what it holds while it runs.
#[derive(Debug)]
pub struct Confined {
    /// The command (spawn it as it is, or add stdio and environment).
    pub command: Command,
    /// Keep it until the command has exited (see [`mountpoint`]).
    pub hold: Hold,
}

/// Which mechanism confines commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    Bwrap,
    Landlock,
    Unavailable,
}

impl Mechanism {
    /// Its name as `weft sandbox --probe --json` prints it.
    pub fn as_str(self) -> &'static str {
        match self {
            Mechanism::Bwrap => "bwrap",
            Mechanism::Landlock => "landlock",
            Mechanism::Unavailable => "unavailable",
        }
    }
}

/// What the probe found.
#[derive(Debug, Clone, Serialize)]
pub struct Probe {
    pub mechanism: Mechanism,
    /// What was tried and what works, for the user.
    pub details: String,
    /// The program that applies it (bwrap, or the helper), not printed.
    #[serde(skip)]
    pub program: Option<PathBuf>,
}

/// What a sandboxed command may touch.
#[derive(Debug, Clone)]
pub struct Policy {
    /// The workspace: writable, except its `.git` and `.weft`.
    pub workdir: PathBuf,
    /// The run's private scratch folder, the only writable temp space: bubblewrap
    /// mounts it at `/tmp`, the Landlock helper grants it; `TMPDIR` names it either
    /// way. The system `/tmp` (other sessions' files) stays read-only.
    pub temp: PathBuf,
    /// Weft's home (`$WEFT_HOME`): hidden from the command, with the daemon's socket in
    /// it (a workspace or scratch folder inside it stays visible).
    pub weft_home: PathBuf,
    /// Whether the network is reachable.
    pub allow_network: bool,
}

impl Policy {
    /// The workspace `workdir`, the private scratch folder `temp`, Weft's home
    /// `weft_home`, no network.
    pub fn new(workdir: &Path, temp: &Path, weft_home: &Path) -> Self {
        Self {
            workdir: workdir.to_path_buf(),
            temp: temp.to_path_buf(),
            weft_home: weft_home.to_path_buf(),
            allow_network: false,
        }
    }

    /// The folders no command may see into under either mechanism: Weft's home,
    /// `$XDG_RUNTIME_DIR` (this process's) and `/run/user`; canonical, those that exist.
    pub fn hidden(&self) -> Vec<PathBuf> {
        let runtime = std::env::var_os("XDG_RUNTIME_DIR")
            .filter(|d| !d.is_empty())
            .map(PathBuf::from);
        [
            Some(self.weft_home.clone()),
            runtime,
            Some("/run/user".into()),
        ]
        .into_iter()
        .flatten()
        .filter_map(|p| p.canonicalize().ok())
        .collect()
    }
}

/// Makes `dir` (and its parents) a private folder: created with mode 0700, or, when
/// it exists, checked to be a real folder (not a link) and made 0700.
pub fn private_temp(dir: &Path) -> std::io::Result<PathBuf> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    let meta = std::fs::symlink_metadata(dir)?;
    if !meta.is_dir() {
        return Err(std::io::Error::other(format!(
            "{} is not a folder",
            dir.display()
        )));
    }
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))?;
    Ok(dir.to_path_buf())
}

/// A fresh private scratch folder under the system temp folder, removed when dropped
/// (for a one-off run such as `weft sandbox`).
pub fn scratch() -> std::io::Result<tempfile::TempDir> {
    tempfile::Builder::new().prefix("weft-sandbox-").tempdir()
}

static PROBE: OnceLock<Probe> = OnceLock::new();

/// The mechanism, probed on first use. `WEFT_SANDBOX=landlock|bwrap|off` forces one
/// (a forced one that does not work is reported unavailable).
pub fn probe() -> &'static Probe {
    PROBE.get_or_init(|| probe_now(std::env::var("WEFT_SANDBOX").ok().as_deref()))
}

/// The probe's answer if it has run, without running it (for a status that must not
/// wait on it).
pub fn probed() -> Option<&'static Probe> {
    PROBE.get()
}

/// Probes without caching (`force` as `WEFT_SANDBOX`).
pub fn probe_now(force: Option<&str>) -> Probe {
    let mut tried = Vec::new();
    if matches!(force, Some("off" | "none" | "unavailable")) {
        return unavailable("turned off by WEFT_SANDBOX=off".into());
    }
    if force.is_none() || force == Some("bwrap") {
        match probe_bwrap() {
            Ok(p) => return p,
            Err(e) => tried.push(format!("bubblewrap: {e}")),
        }
    }
    if force.is_none() || force == Some("landlock") {
        match probe_landlock() {
            Ok(p) => return p,
            Err(e) => tried.push(format!("landlock: {e}")),
        }
    }
    unavailable(tried.join("; "))
}

fn unavailable(details: String) -> Probe {
    Probe {
        mechanism: Mechanism::Unavailable,
        details: format!(
            "no sandbox ({details}); every command that is not provably read-only asks first"
        ),
        program: None,
    }
}

/// An absolute program on PATH (never one from the current folder).
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join(name))
        .find(|p| p.is_file())
}

fn probe_bwrap() -> Result<Probe, String> {
    let bwrap = on_path("bwrap").ok_or("bwrap is not installed")?;
    let tmp = scratch().map_err(|e| format!("no scratch folder: {e}"))?;
    let home = tmp.path().join("home");
    let policy = Policy::new(tmp.path(), tmp.path(), &home);
    let out = bwrap::command(&bwrap, &policy, &[], &["true".to_string()])
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", bwrap.display()))?;
    if !out.status.success() {
        return Err(format!(
            "{} does not work here: {}",
            bwrap.display(),
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    let version = Command::new(&bwrap)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    let root = std::fs::metadata("/proc/self")
        .map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0)
        .unwrap_or(false);
    Ok(Probe {
        mechanism: Mechanism::Bwrap,
        details: format!(
            "{} ({version}){}: mount, PID, IPC and network namespaces; the workspace and a private /tmp writable, .git and .weft read-only, WEFT_HOME, /run and XDG_RUNTIME_DIR hidden",
            bwrap.display(),
            if root {
                ", run as root (namespaces without a user namespace; the command keeps uid 0 but no capabilities)"
            } else {
                ", unprivileged user namespaces"
            }
        ),
        program: Some(bwrap),
    })
}

/// The helper's `--connect` exit code when no socket answered (distinct from bash's
/// and bubblewrap's own failures).
pub(crate) const NONE_REACHED: i32 = 3;

/// The helper's file name; it is installed beside `weft` (the `weft-cli` package
/// builds it, and the deb and `cargo install` put it next to `weft`).
pub const HELPER_NAME: &str = "weft-sandbox-exec";

/// The helper: `WEFT_SANDBOX_HELPER` (an absolute path), else `weft-sandbox-exec`
/// beside this program.
pub fn helper() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("WEFT_SANDBOX_HELPER").map(PathBuf::from) {
        return h.is_absolute().then_some(h);
    }
    helper_beside(&std::env::current_exe().ok()?)
}

/// `weft-sandbox-exec` in the folder of the program `exe` (made absolute), or, for a
/// test binary in cargo's `deps/`, one folder up. Never the current folder nor a
/// relative PATH entry: a helper that confines nothing could sit there.
pub fn helper_beside(exe: &Path) -> Option<PathBuf> {
    if !exe.is_absolute() {
        return None;
    }
    let dir = exe.parent()?;
    let mut candidates = vec![dir.join(HELPER_NAME)];
    if dir.file_name().is_some_and(|n| n == "deps") {
        candidates.push(dir.parent()?.join(HELPER_NAME));
    }
    candidates.into_iter().find(|p| p.is_file())
}

fn probe_landlock() -> Result<Probe, String> {
    let helper = helper().ok_or_else(|| {
        format!(
            "the {HELPER_NAME} helper is not installed beside {}",
            std::env::current_exe()
                .map(|e| e.display().to_string())
                .unwrap_or_else(|_| "weft".into())
        )
    })?;
    let tmp = scratch().map_err(|e| format!("no scratch folder: {e}"))?;
    let home = tmp.path().join("home");
    let policy = Policy::new(tmp.path(), tmp.path(), &home);
    let out = helper_command(&helper, &policy, &["true".to_string()], true)
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| format!("cannot run {}: {e}", helper.display()))?;
    let status = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if !out.status.success() {
        return Err(status);
    }
    Ok(Probe {
        mechanism: Mechanism::Landlock,
        details: format!(
            "Landlock through {} ({status}); the workspace and a private TMPDIR writable, WEFT_HOME and XDG_RUNTIME_DIR unreadable; seccomp refuses every socket (Unix ones always) and io_uring; .git and .weft are not protected by Landlock (it cannot take back a write it granted), so every command not provably read-only asks first",
            helper.display()
        ),
        program: Some(helper),
    })
}

fn helper_command(helper: &Path, policy: &Policy, argv: &[String], report: bool) -> Command {
    let mut c = Command::new(helper);
    c.arg("--workdir").arg(&policy.workdir);
    c.arg("--temp").arg(&policy.temp);
    for h in policy.hidden() {
        c.arg("--hide").arg(h);
    }
    if policy.allow_network {
        c.arg("--allow-network");
    }
    if report {
        c.arg("--report");
    }
    c.arg("--").args(argv).current_dir(&policy.workdir);
    c
}

/// `argv` under the sandbox the probe found; `None` when there is none (the caller
/// runs it bare only after the user said so); an error when the workspace cannot be
/// confined (its `.git` or `.weft` is a symbolic link).
pub fn command(policy: &Policy, argv: &[String]) -> Result<Option<Confined>, Error> {
    command_with(probe(), policy, argv)
}

/// `bash -c LINE` in the workspace under the sandbox: how the native agent's bash
/// tool runs a command line.
pub fn shell(policy: &Policy, line: &str) -> Result<Option<Confined>, Error> {
    command(policy, &["bash".into(), "-c".into(), line.into()])
}

/// What a sandbox started ahead runs: it waits for its command line on stdin (up to
/// EOF), then runs it with `bash -c`, stdin from /dev/null. Writing the line is all a
/// call then costs: the namespace and mount set-up already happened.
pub const WAITING_SHELL: &str = "IFS= read -r -d '' line; exec bash -c \"$line\" </dev/null";

/// `bash` under the sandbox, waiting for its command line on stdin ([`WAITING_SHELL`]);
/// `None` without a sandbox. Only worth it for bubblewrap, whose start-up is the cost.
pub fn waiting_shell(policy: &Policy) -> Result<Option<Confined>, Error> {
    let p = probe();
    if p.mechanism != Mechanism::Bwrap {
        return Ok(None);
    }
    command_with(
        p,
        policy,
        &["bash".into(), "-c".into(), WAITING_SHELL.into()],
    )
}

/// What a sandbox started ahead for `policy` was made for: the policy, and which of
/// the workspace's `.git` and `.weft` existed (by inode; a mountpoint Weft made counts
/// as absent) — one made before a `git init` would mount an empty `.git` over the new
/// one, so it must not be used after.
pub fn spare_key(policy: &Policy) -> String {
    use std::os::unix::fs::MetadataExt;
    let inner: Vec<Option<(u64, u64)>> = mountpoint::PROTECTED
        .iter()
        .map(|d| {
            let path = policy.workdir.join(d);
            std::fs::symlink_metadata(&path)
                .ok()
                .filter(|m| !mountpoint::is_made(&path, m))
                .map(|m| (m.dev(), m.ino()))
        })
        .collect();
    format!("{policy:?} {inner:?}")
}

/// [`command`] with a given probe.
pub fn command_with(
    p: &Probe,
    policy: &Policy,
    argv: &[String],
) -> Result<Option<Confined>, Error> {
    let Some(program) = p.program.as_ref() else {
        return Ok(None);
    };
    Ok(Some(match p.mechanism {
        Mechanism::Bwrap => {
            let (read_only, hold) = mountpoint::prepare(&policy.workdir)?;
            let read_only: Vec<_> = read_only.into_iter().map(|p| (p.clone(), p)).collect();
            Confined {
                command: bwrap::command(program, policy, &read_only, argv),
                hold,
            }
        }
        Mechanism::Landlock => Confined {
            command: helper_command(program, policy, argv, false),
            hold: Hold::default(),
        },
        Mechanism::Unavailable => return Ok(None),
    }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_helper_is_found_beside_the_program_and_nowhere_else() {
        let root = tempfile::tempdir().unwrap();
        let bin = root.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let weft = bin.join("weft");
        std::fs::write(&weft, "").unwrap();
        // Not there yet: not found, even with one in the current folder and one a
        // relative PATH entry would name.
        let cwd = root.path().join("cwd");
        std::fs::create_dir_all(cwd.join("bin")).unwrap();
        std::fs::write(cwd.join(HELPER_NAME), "").unwrap();
        std::fs::write(cwd.join("bin").join(HELPER_NAME), "").unwrap();
        std::fs::write(root.path().join(HELPER_NAME), "").unwrap();
        assert_eq!(helper_beside(&weft), None, "one folder up is not beside");
        assert_eq!(
            helper_beside(Path::new("bin/weft")),
            None,
            "a relative program"
        );
        std::fs::write(bin.join(HELPER_NAME), "").unwrap();
        assert_eq!(helper_beside(&weft), Some(bin.join(HELPER_NAME)));
        // A test binary in cargo's deps/ finds the one its package built one folder up.
        let deps = root.path().join("target/debug/deps");
        std::fs::create_dir_all(&deps).unwrap();
        std::fs::write(root.path().join("target/debug").join(HELPER_NAME), "").unwrap();
        assert_eq!(
            helper_beside(&deps.join("t-123")),
            Some(root.path().join("target/debug").join(HELPER_NAME))
        );
    }
}
