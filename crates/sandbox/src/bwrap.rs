//! The bubblewrap command line: the host read-only, the places where the host's Unix
//! sockets live hidden, the workspace writable with `.git` and `.weft` read-only.
//!
//! A socket's inode can be connected to through a read-only mount, so hiding is what
//! keeps a command from the daemon's socket (which obeys any process of the user) and
//! from D-Bus (the Secret Service, `systemd-run`). Hidden under an empty tmpfs:
//! - `$WEFT_HOME` (the daemon's socket, its database, the accounts' homes);
//! - `/run`, which holds `/run/user/<uid>` (`$XDG_RUNTIME_DIR`: the session bus, the
//!   keyring, the daemon's socket fallback) and the system's sockets (the system bus,
//!   systemd's private socket, docker's, …); its symbolic links are made again (NixOS
//!   keeps its programs behind `/run/current-system`), and with the network allowed so
//!   is the file `/etc/resolv.conf` leads to there;
//! - `/var/run` when it is a folder of its own, and `$XDG_RUNTIME_DIR` when it lies
//!   elsewhere;
//! - the host's `/tmp` (X11's, tmux's and ssh-agent's sockets) is replaced by the
//!   run's scratch folder.
//!
//! A socket elsewhere (`~/.gnupg`'s agent, an ssh `ControlPath` in the home folder)
//! stays reachable: mounts can only hide the folders a socket is known to live in.
//! With the network allowed the command shares the host's network namespace, and with
//! it the host's *abstract* Unix sockets.
//!
//! Order matters: a hidden folder that holds the workspace is hidden before the
//! workspace is bound (a worktree under `$WEFT_HOME` stays visible), one inside the
//! workspace after it.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::Policy;

/// The folders hidden from the command, canonical, outermost only.
fn hidden(policy: &Policy) -> Vec<PathBuf> {
    let mut all = policy.hidden();
    for system in ["/run", "/var/run"] {
        let is_dir = std::fs::symlink_metadata(system).is_ok_and(|m| m.is_dir());
        if is_dir {
            all.push(PathBuf::from(system));
        }
    }
    all.retain(|h| h.parent().is_some());
    all.sort();
    all.dedup();
    let outer: Vec<PathBuf> = all
        .iter()
        .filter(|h| !all.iter().any(|o| o != *h && h.starts_with(o)))
        .cloned()
        .collect();
    outer
}

/// `--tmpfs` over `dir`, with its symbolic links made again for `/run`-like folders.
fn hide(c: &mut Command, dir: &Path, relink: bool) {
    c.arg("--tmpfs").arg(dir);
    if !relink {
        return;
    }
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        if e.file_type().is_ok_and(|t| t.is_symlink()) {
            if let Ok(target) = std::fs::read_link(e.path()) {
                c.arg("--symlink").arg(target).arg(e.path());
            }
        }
    }
}

/// The command line for `argv` under `policy`; `read_only` are bound read-only last,
/// each `(source, destination)`: the workspace's `.git`/`.weft` onto themselves (see
/// [`crate::mountpoint`]).
pub(crate) fn command(
    bwrap: &Path,
    policy: &Policy,
    read_only: &[(PathBuf, PathBuf)],
    argv: &[String],
) -> Command {
    let mut c = Command::new(bwrap);
    c.args(["--new-session", "--die-with-parent", "--ro-bind", "/", "/"])
        .args([
            "--dev",
            "/dev",
            "--proc",
            "/proc",
            "--unshare-pid",
            "--unshare-ipc",
        ]);
    if !policy.allow_network {
        c.arg("--unshare-net");
    }
    let workdir = policy
        .workdir
        .canonicalize()
        .unwrap_or_else(|_| policy.workdir.clone());
    let tmp = Path::new("/tmp");
    let (inside, outside): (Vec<PathBuf>, Vec<PathBuf>) = hidden(policy)
        .into_iter()
        .partition(|h| h.starts_with(&workdir));
    for h in &outside {
        // The host's /tmp is replaced whole below.
        if !h.starts_with(tmp) {
            let relink = h == Path::new("/run") || h == Path::new("/var/run");
            hide(&mut c, h, relink);
        }
    }
    if policy.allow_network {
        if let Ok(resolv) = Path::new("/etc/resolv.conf").canonicalize() {
            if outside.iter().any(|h| resolv.starts_with(h)) {
                c.arg("--ro-bind").arg(&resolv).arg(&resolv);
            }
        }
    }
    // The private scratch folder is the sandbox's /tmp; a workspace under the host's
    // /tmp is bound afterwards, on top of it.
    c.arg("--bind").arg(&policy.temp).arg("/tmp");
    c.args(["--setenv", "TMPDIR", "/tmp"]);
    c.arg("--bind").arg(&policy.workdir).arg(&policy.workdir);
    for h in &inside {
        hide(&mut c, h, false);
    }
    for (source, dest) in read_only {
        c.arg("--ro-bind").arg(source).arg(dest);
    }
    // The program itself may live under the host's /tmp, which was just replaced: Weft
    // built or unpacked there (a checkout under /tmp, its target dir with it), so its
    // exec helper would be gone ("execvp …: No such file or directory"). That one file
    // is bound back, read-only, under the name it is run by.
    if let Some(program) = argv.first().map(Path::new) {
        if program.is_absolute() && program.starts_with(tmp) && !program.starts_with(&workdir) {
            if let Ok(real) = program.canonicalize() {
                c.arg("--ro-bind").arg(real).arg(program);
            }
        }
    }
    c.arg("--chdir").arg(&policy.workdir).arg("--").args(argv);
    c
}
