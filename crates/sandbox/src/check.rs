//! What the sandbox holds here, measured rather than read off the mechanism's name:
//! `weft sandbox --probe` runs three commands under it, each trying what it must not
//! manage.
//!
//! - host sockets: the probe listens on a Unix socket in `$WEFT_HOME` (where the
//!   daemon's is) and in `$XDG_RUNTIME_DIR` (where D-Bus's is), and the helper, run
//!   inside the sandbox, tries to connect to them (without the helper, whether they can
//!   be seen at all);
//! - `.git`/`.weft`: in a scratch workspace, a write into `.git`, a `.weft/hooks.json`
//!   where there was no `.weft`, and `.git` moved aside and made again;
//! - network: a TCP connect to a listener the probe opens on 127.0.0.1.

use std::os::unix::fs::DirBuilderExt;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde::Serialize;

use crate::{command_with, helper, mountpoint, scratch, Confined, Mechanism, Policy, Probe};

/// Whether the network answered a sandboxed command.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Reach {
    /// It did not.
    Blocked,
    /// It did.
    Open,
}

/// What held, as `weft sandbox --probe --json` prints it.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Checks {
    /// No Unix socket of the host (the daemon's, D-Bus's) could be connected to.
    pub host_sockets_blocked: bool,
    /// A command could neither write in `.git` nor create `.weft` nor replace `.git`.
    pub git_read_only: bool,
    /// Whether a TCP connection to this host got through (commands run without
    /// network unless it is allowed).
    pub network: Reach,
    /// How each was found, for the user.
    #[serde(skip)]
    pub notes: Vec<String>,
}

/// Runs the checks under `p` with Weft's home `weft_home` (made, 0700, when missing:
/// the daemon's socket would be there).
pub fn check(p: &Probe, weft_home: &Path) -> Checks {
    if p.mechanism == Mechanism::Unavailable {
        return Checks {
            host_sockets_blocked: false,
            git_read_only: false,
            network: Reach::Open,
            notes: vec!["no sandbox: commands run as the user, unconfined".into()],
        };
    }
    let mut notes = Vec::new();
    let host_sockets_blocked = sockets(p, weft_home, &mut notes);
    let git_read_only = git(p, weft_home, &mut notes);
    let network = network(p, weft_home, &mut notes);
    Checks {
        host_sockets_blocked,
        git_read_only,
        network,
        notes,
    }
}

/// A scratch workspace and scratch folder under the system temp folder.
struct Scratch {
    work: tempfile::TempDir,
    temp: tempfile::TempDir,
}

fn scratch_pair() -> Option<Scratch> {
    Some(Scratch {
        work: scratch().ok()?,
        temp: scratch().ok()?,
    })
}

/// Runs `argv` under `p` in `s`, with `also` bound read-only into a bubblewrap
/// sandbox (`(source, destination)`); its exit code and output (stdout then stderr).
fn run(
    p: &Probe,
    s: &Scratch,
    weft_home: &Path,
    argv: &[String],
    also: &[(PathBuf, PathBuf)],
) -> Option<(Option<i32>, String)> {
    let policy = Policy::new(s.work.path(), s.temp.path(), weft_home);
    let mut confined = match (p.mechanism, &p.program) {
        (Mechanism::Bwrap, Some(bwrap)) => {
            let (read_only, hold) = mountpoint::prepare(&policy.workdir).ok()?;
            let mut read_only: Vec<_> = read_only.into_iter().map(|p| (p.clone(), p)).collect();
            read_only.extend(also.iter().cloned());
            Confined {
                command: crate::bwrap::command(bwrap, &policy, &read_only, argv),
                hold,
            }
        }
        _ => command_with(p, &policy, argv).ok()??,
    };
    let out = confined.command.stdin(Stdio::null()).output().ok()?;
    drop(confined.hold);
    Some((
        out.status.code(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        ),
    ))
}

/// A listening Unix socket, removed when dropped.
struct Listening {
    path: PathBuf,
    _listener: std::os::unix::net::UnixListener,
}

impl Drop for Listening {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.path);
    }
}

fn listen(dir: &Path) -> Option<Listening> {
    let path = dir.join(format!(".weft-probe-{}.sock", std::process::id()));
    let _ = std::fs::remove_file(&path);
    let listener = std::os::unix::net::UnixListener::bind(&path).ok()?;
    Some(Listening {
        path,
        _listener: listener,
    })
}

fn sockets(p: &Probe, weft_home: &Path, notes: &mut Vec<String>) -> bool {
    let _ = std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(weft_home);
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from);
    let listening: Vec<Listening> = [Some(weft_home.to_path_buf()), runtime]
        .into_iter()
        .flatten()
        .filter_map(|d| listen(&d))
        .collect();
    if listening.is_empty() {
        notes.push("host sockets: no socket could be opened to try".into());
        return false;
    }
    let Some(s) = scratch_pair() else {
        return false;
    };
    let paths: Vec<String> = listening
        .iter()
        .map(|l| l.path.display().to_string())
        .collect();
    let result = match helper() {
        Some(h) => {
            // Under bubblewrap the helper may live where the sandbox hides it (a build
            // under /tmp): it is bound in, read-only, under its own name.
            let (program, also) = match p.mechanism {
                Mechanism::Bwrap => {
                    let inside = PathBuf::from("/tmp").join(crate::HELPER_NAME);
                    (inside.clone(), vec![(h, inside)])
                }
                _ => (h, Vec::new()),
            };
            let mut argv = vec![program.display().to_string(), "--connect".into()];
            argv.extend(paths.iter().cloned());
            run(p, &s, weft_home, &argv, &also).map(|(code, out)| {
                // Only the helper's own "none answered" counts: a sandbox that did
                // not start proves nothing.
                (
                    code == Some(crate::NONE_REACHED),
                    format!("tried to connect: {}", out.trim()),
                )
            })
        }
        None => {
            let line = paths
                .iter()
                .map(|p| format!("test -e '{p}' && echo '{p} is visible'"))
                .collect::<Vec<_>>()
                .join("; ");
            run(p, &s, weft_home, &["bash".into(), "-c".into(), line], &[]).map(|(_, out)| {
                (
                    out.trim().is_empty(),
                    "looked for them (no helper to connect with)".into(),
                )
            })
        }
    };
    let (blocked, how) = result.unwrap_or((false, "the sandbox did not run".into()));
    notes.push(format!("host sockets ({}): {how}", paths.join(", ")));
    blocked
}

fn git(p: &Probe, weft_home: &Path, notes: &mut Vec<String>) -> bool {
    let Some(s) = scratch_pair() else {
        return false;
    };
    let ws = s.work.path();
    let head = ws.join(".git/HEAD");
    let made = std::fs::create_dir(ws.join(".git"))
        .and_then(|()| std::fs::write(&head, "ref: refs/heads/main\n"));
    if made.is_err() {
        return false;
    }
    let line = "echo planted > .git/HEAD; mkdir -p .weft; echo '{}' > .weft/hooks.json; \
                mv .git .git-aside && mkdir .git && echo planted > .git/HEAD; true";
    let ran = run(
        p,
        &s,
        weft_home,
        &["bash".into(), "-c".into(), line.into()],
        &[],
    );
    let head_kept = std::fs::read_to_string(&head).is_ok_and(|h| h == "ref: refs/heads/main\n");
    let weft_absent = !ws.join(".weft/hooks.json").exists();
    let not_moved = !ws.join(".git-aside").exists();
    let held =
        ran.is_some_and(|(code, _)| code == Some(0)) && head_kept && weft_absent && not_moved;
    notes.push(format!(
        ".git/.weft: {}",
        if held {
            "a write into .git, a new .weft and a replaced .git were all refused".to_string()
        } else {
            format!(
                "writable (.git/HEAD kept: {head_kept}, .weft not made: {weft_absent}, .git not moved: {not_moved})"
            )
        }
    ));
    held
}

fn network(p: &Probe, weft_home: &Path, notes: &mut Vec<String>) -> Reach {
    let Ok(listener) = std::net::TcpListener::bind("127.0.0.1:0") else {
        return Reach::Open;
    };
    let Ok(port) = listener.local_addr().map(|a| a.port()) else {
        return Reach::Open;
    };
    let Some(s) = scratch_pair() else {
        return Reach::Open;
    };
    let line =
        format!("if exec 3<>/dev/tcp/127.0.0.1/{port}; then echo connected; else echo refused; fi");
    let ran = run(p, &s, weft_home, &["bash".into(), "-c".into(), line], &[]);
    // Blocked only when the command ran and its connect failed.
    let reach = match ran {
        Some((Some(0), out)) if out.contains("refused") && !out.contains("connected") => {
            Reach::Blocked
        }
        _ => Reach::Open,
    };
    notes.push(format!(
        "network: a TCP connect to 127.0.0.1:{port} {}",
        if reach == Reach::Open {
            "got through"
        } else {
            "was refused"
        }
    ));
    reach
}
