//! Running a command so it cannot reach past its workspace even when the judgement
//! that let it run was wrong: the workspace and a temp folder writable, the rest of
//! the file system read-only, `.git` and `.weft` read-only inside the workspace, no
//! network unless allowed.
//!
//! The mechanism is probed once ([`probe`]): bubblewrap when it runs here (mount,
//! PID and network namespaces); else Landlock (best effort; at least partially
//! enforced) plus a seccomp filter that refuses every socket but a Unix one, applied
//! by the `weft-sandbox-exec` helper to itself before it execs the command (so no
//! crate of ours needs `unsafe`); else unavailable, and the caller must ask before
//! anything that is not provably read-only runs (fail closed).

#[cfg(target_os = "linux")]
mod landlock_exec;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

use serde::Serialize;

#[cfg(target_os = "linux")]
pub use landlock_exec::exec_main;

/// Which mechanism confines commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mechanism {
    Bwrap,
    Landlock,
    Unavailable,
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
    /// Writable scratch space (default: the system temp folder).
    pub temp: PathBuf,
    /// Whether the network is reachable.
    pub allow_network: bool,
}

impl Policy {
    /// The workspace `workdir`, the system temp folder, no network.
    pub fn new(workdir: &Path) -> Self {
        Self {
            workdir: workdir.to_path_buf(),
            temp: std::env::temp_dir(),
            allow_network: false,
        }
    }
}

static PROBE: OnceLock<Probe> = OnceLock::new();

/// The mechanism, probed on first use. `WEFT_SANDBOX=landlock|bwrap|off` forces one
/// (a forced one that does not work is reported unavailable).
pub fn probe() -> &'static Probe {
    PROBE.get_or_init(|| probe_now(std::env::var("WEFT_SANDBOX").ok().as_deref()))
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
    let tmp = std::env::temp_dir();
    let policy = Policy {
        workdir: tmp.clone(),
        temp: tmp,
        allow_network: false,
    };
    let out = bwrap_command(&bwrap, &policy, &["true".to_string()])
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
            "{} ({version}){}: mount, PID and network namespaces; workspace and temp writable, .git and .weft read-only",
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

/// The helper: `WEFT_SANDBOX_HELPER`, else `weft-sandbox-exec` beside this program
/// (or one folder up, for test binaries in `deps/`).
pub fn helper() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("WEFT_SANDBOX_HELPER").map(PathBuf::from) {
        return h.is_absolute().then_some(h);
    }
    let exe = std::env::current_exe().ok()?;
    let dir = exe.parent()?;
    [
        dir.join("weft-sandbox-exec"),
        dir.parent()?.join("weft-sandbox-exec"),
    ]
    .into_iter()
    .find(|p| p.is_file())
}

fn probe_landlock() -> Result<Probe, String> {
    let helper = helper().ok_or("the weft-sandbox-exec helper is not installed beside weft")?;
    let tmp = std::env::temp_dir();
    let policy = Policy {
        workdir: tmp.clone(),
        temp: tmp,
        allow_network: false,
    };
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
            "Landlock through {} ({status}); seccomp refuses non-Unix sockets; .git and .weft are not protected by Landlock (it cannot take back a write it granted)",
            helper.display()
        ),
        program: Some(helper),
    })
}

fn bwrap_command(bwrap: &Path, policy: &Policy, argv: &[String]) -> Command {
    let mut c = Command::new(bwrap);
    c.args(["--new-session", "--die-with-parent", "--ro-bind", "/", "/"])
        .args(["--dev", "/dev", "--proc", "/proc", "--unshare-pid"]);
    if !policy.allow_network {
        c.arg("--unshare-net");
    }
    // Temp first: a workspace inside it is bound over it afterwards.
    c.arg("--bind").arg(&policy.temp).arg(&policy.temp);
    c.arg("--bind").arg(&policy.workdir).arg(&policy.workdir);
    for inner in [".git", ".weft"] {
        let p = policy.workdir.join(inner);
        if p.exists() {
            c.arg("--ro-bind").arg(&p).arg(&p);
        }
    }
    c.arg("--chdir").arg(&policy.workdir).arg("--").args(argv);
    c
}

fn helper_command(helper: &Path, policy: &Policy, argv: &[String], report: bool) -> Command {
    let mut c = Command::new(helper);
    c.arg("--workdir").arg(&policy.workdir);
    c.arg("--temp").arg(&policy.temp);
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
/// runs it bare only after the user said so).
pub fn command(policy: &Policy, argv: &[String]) -> Option<Command> {
    command_with(probe(), policy, argv)
}

/// `bash -c LINE` in the workspace under the sandbox: how the native agent's bash
/// tool runs a command line.
pub fn shell(policy: &Policy, line: &str) -> Option<Command> {
    command(policy, &["bash".into(), "-c".into(), line.into()])
}

/// [`command`] with a given probe.
pub fn command_with(p: &Probe, policy: &Policy, argv: &[String]) -> Option<Command> {
    let program = p.program.as_ref()?;
    Some(match p.mechanism {
        Mechanism::Bwrap => bwrap_command(program, policy, argv),
        Mechanism::Landlock => helper_command(program, policy, argv, false),
        Mechanism::Unavailable => return None,
    })
}
