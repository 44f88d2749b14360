//! Surfaces the daemon supervises: chat surfaces that are client programs of their
//! own (`weft-matrix run`), started while they are configured and restarted with
//! backoff when they fail.
//!
//! A surface is a client like the CLI or the window: it talks to this daemon over its
//! socket and holds no kernel logic. The daemon only keeps it running, so a phone can
//! reach the agents whenever the daemon is up. Its program is found beside the running
//! `weft` and nowhere else (like `weft-sandbox-exec`): no PATH lookup, no variable, so
//! no other party picks the binary that holds the user's chat credentials.
//!
//! The daemon knows nothing of a surface's settings: the surface's folder under
//! `WEFT_HOME` existing means "try it", and the program decides. Exit 0 means "not
//! configured or logged out: leave me stopped"; any other exit is a failure, restarted
//! after 1, 2, 4 … 60 s (back to 1 s once a run lasted a minute).

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use tokio_util::sync::CancellationToken;
use weft_protocol::{ErrorCode, SurfaceStatus, WireError};

use crate::service::Service;

/// The surfaces there are: a name, its program beside `weft`, its folder in the home.
const KNOWN: &[(&str, &str)] = &[("matrix", "weft-matrix")];

/// A run shorter than this counts as a failure in a row: the backoff grows.
const STEADY: Duration = Duration::from_secs(60);
const MAX_BACKOFF: Duration = Duration::from_secs(60);
/// After SIGTERM, how long a surface may take to close its store before SIGKILL.
const GRACE: Duration = Duration::from_secs(3);

/// Every supervised surface's state.
#[derive(Default)]
pub struct Surfaces {
    slots: Mutex<Vec<Slot>>,
}

struct Slot {
    status: Arc<Mutex<SurfaceStatus>>,
    /// Cancels the running supervisor task (which then stops the process).
    stop: CancellationToken,
    done: Arc<tokio::sync::Notify>,
}

impl Surfaces {
    /// Starts every surface whose folder exists (what the program does then is its call).
    pub fn start_configured(service: &Arc<Service>) {
        for (name, _) in KNOWN {
            if service.home.dir().join(name).is_dir() {
                if let Err(e) = start(service, name, 0) {
                    tracing::warn!(surface = name, "not started: {}", e.message);
                }
            }
        }
    }

    /// Each surface's status, started or not.
    pub fn status(&self) -> Vec<SurfaceStatus> {
        let slots = self.slots.lock();
        KNOWN
            .iter()
            .map(|(name, _)| {
                slots
                    .iter()
                    .map(|s| s.status.lock().clone())
                    .find(|s| s.name == *name)
                    .unwrap_or_else(|| SurfaceStatus {
                        name: (*name).to_string(),
                        ..Default::default()
                    })
            })
            .collect()
    }

    /// Stops every surface and waits for their processes to end.
    pub async fn stop_all(&self) {
        let slots: Vec<Slot> = std::mem::take(&mut *self.slots.lock());
        for slot in &slots {
            slot.stop.cancel();
        }
        for slot in slots {
            stopped(&slot).await;
        }
    }
}

async fn stopped(slot: &Slot) {
    let done = slot.done.notified();
    if slot.status.lock().running {
        let _ = tokio::time::timeout(GRACE * 2, done).await;
    }
}

/// What `reloadSurface` does: stops the surface if it runs, then starts it again when
/// its folder is there (the program itself exits 0 if it has nothing to do).
pub async fn reload(service: &Arc<Service>, name: &str) -> Result<SurfaceStatus, WireError> {
    if !KNOWN.iter().any(|(n, _)| *n == name) {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!("no surface is called {name:?}; there is `matrix`"),
        ));
    }
    let old = {
        let mut slots = service.surfaces.slots.lock();
        slots
            .iter()
            .position(|s| s.status.lock().name == name)
            .map(|i| slots.remove(i))
    };
    let mut restarts = 0;
    if let Some(old) = old {
        old.stop.cancel();
        stopped(&old).await;
        restarts = old.status.lock().restarts;
    }
    if service.home.dir().join(name).is_dir() {
        start(service, name, restarts)?;
    }
    Ok(service
        .surfaces
        .status()
        .into_iter()
        .find(|s| s.name == name)
        .unwrap_or_default())
}

/// The account commands a client may run through [`command`] (`run` is the daemon's).
const COMMANDS: &[&str] = &["login", "allow", "deny", "status", "logout"];
/// What a command may print before the rest is cut, per stream.
const OUTPUT_CAP: usize = 256 << 10;
/// A login reaches the homeserver and sets up cross-signing: give it time, not forever.
const COMMAND_TIMEOUT: Duration = Duration::from_secs(120);

/// Runs surface `request.name`'s account command with `request.stdin` on its stdin
/// (a password: never in argv or a log), as `weft matrix ARGS` would.
pub async fn command(
    home: &Path,
    request: weft_protocol::SurfaceCommandRequest,
) -> Result<weft_protocol::SurfaceOutput, WireError> {
    use tokio::io::AsyncWriteExt;
    let verb = request.args.first().map(String::as_str).unwrap_or_default();
    if !COMMANDS.contains(&verb) {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!(
                "a surface's commands are {}; not {verb:?}",
                COMMANDS.join(", ")
            ),
        ));
    }
    let program = program(&request.name)?;
    let mut child = tokio::process::Command::new(&program)
        .args(&request.args)
        .env("WEFT_HOME", home)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| {
            WireError::new(
                ErrorCode::Internal,
                format!("cannot run {}: {e}", program.display()),
            )
        })?;
    let stdin = request.stdin.map(|s| s.0).unwrap_or_default();
    let mut pipe = child.stdin.take();
    let (mut out, mut err) = (child.stdout.take(), child.stderr.take());
    let run = async {
        if let Some(p) = pipe.as_mut() {
            let _ = p.write_all(stdin.as_bytes()).await;
            let _ = p.write_all(b"\n").await;
        }
        drop(pipe);
        let (stdout, stderr) = tokio::join!(read_capped(out.take()), read_capped(err.take()));
        (child.wait().await, stdout, stderr)
    };
    let (status, stdout, stderr) =
        tokio::time::timeout(COMMAND_TIMEOUT, run)
            .await
            .map_err(|_| {
                WireError::new(
                    ErrorCode::Internal,
                    format!(
                        "`{verb}` did not end within {} s",
                        COMMAND_TIMEOUT.as_secs()
                    ),
                )
            })?;
    let status = status.map_err(|e| WireError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(weft_protocol::SurfaceOutput {
        code: status.code().unwrap_or(-1),
        stdout,
        stderr,
    })
}

/// What `pipe` gives until it ends, at most [`OUTPUT_CAP`] bytes of it.
async fn read_capped(pipe: Option<impl tokio::io::AsyncRead + Unpin>) -> String {
    use tokio::io::AsyncReadExt;
    let mut buf = Vec::new();
    if let Some(p) = pipe {
        let _ = p.take(OUTPUT_CAP as u64).read_to_end(&mut buf).await;
    }
    String::from_utf8_lossy(&buf).into_owned()
}

/// Why surface program `file` cannot run beside `exe`, and how to put it there from a
/// checkout (its own workspace builds elsewhere unless told this target folder).
pub fn not_installed(file: &str, exe: &Path) -> String {
    let target = exe.parent().and_then(Path::parent);
    format!(
        "{file} is not installed beside {} (it comes with Weft's package; from a checkout: \
         cargo build --manifest-path surfaces/matrix/Cargo.toml --target-dir {})",
        exe.display(),
        target.map_or_else(
            || "<weft's target folder>".into(),
            |t| t.display().to_string()
        )
    )
}

/// The program of surface `name`: beside this executable, or an error saying where it
/// was looked for.
fn program(name: &str) -> Result<PathBuf, WireError> {
    let file = KNOWN
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, f)| *f)
        .unwrap_or(name);
    let exe = std::env::current_exe()
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("where weft runs from: {e}")))?;
    let path = exe.with_file_name(file);
    if path.is_file() {
        Ok(path)
    } else {
        Err(WireError::new(
            ErrorCode::AgentUnavailable,
            not_installed(file, &exe),
        ))
    }
}

/// Starts supervising surface `name`, its failures so far counted `restarts`.
fn start(service: &Arc<Service>, name: &str, restarts: u32) -> Result<(), WireError> {
    let program = program(name)?;
    let status = Arc::new(Mutex::new(SurfaceStatus {
        name: name.to_string(),
        restarts,
        ..Default::default()
    }));
    let slot = Slot {
        status: status.clone(),
        stop: CancellationToken::new(),
        done: Arc::new(tokio::sync::Notify::new()),
    };
    let task = Supervisor {
        program,
        home: service.home.dir().to_path_buf(),
        log: service.home.log_dir().join(format!("{name}.log")),
        status,
        stop: slot.stop.clone(),
        done: slot.done.clone(),
    };
    service.surfaces.slots.lock().push(slot);
    tokio::spawn(task.run());
    Ok(())
}

struct Supervisor {
    program: PathBuf,
    home: PathBuf,
    log: PathBuf,
    status: Arc<Mutex<SurfaceStatus>>,
    stop: CancellationToken,
    done: Arc<tokio::sync::Notify>,
}

impl Supervisor {
    async fn run(self) {
        let name = self.status.lock().name.clone();
        let mut backoff = Duration::from_secs(1);
        loop {
            let started = tokio::time::Instant::now();
            let exit = self.once().await;
            {
                let mut s = self.status.lock();
                s.running = false;
                s.pid = None;
            }
            self.done.notify_waiters();
            let failure = match exit {
                Exit::Stopped => return,
                Exit::Done => {
                    tracing::info!(surface = %name, "exited 0: not configured, or logged out");
                    return;
                }
                Exit::Failed(why) => why,
            };
            tracing::warn!(surface = %name, "failed: {failure}; again in {} s", backoff.as_secs());
            {
                let mut s = self.status.lock();
                s.last_error = Some(failure);
                s.restarts += 1;
            }
            if started.elapsed() >= STEADY {
                backoff = Duration::from_secs(1);
            }
            tokio::select! {
                _ = tokio::time::sleep(backoff) => {}
                _ = self.stop.cancelled() => return,
            }
            backoff = (backoff * 2).min(MAX_BACKOFF);
        }
    }

    /// One run of the program, until it exits or the supervisor is stopped.
    async fn once(&self) -> Exit {
        let log = match open_log(&self.log) {
            Ok(f) => f,
            Err(e) => return Exit::Failed(format!("cannot open {}: {e}", self.log.display())),
        };
        let mut cmd = std::process::Command::new(&self.program);
        cmd.arg("run")
            .env("WEFT_HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log);
        // Spawned from this runtime worker: it dies with the daemon even on SIGKILL.
        weft_proctree::parent_death::die_with_parent(&mut cmd);
        let mut child = match tokio::process::Command::from(cmd)
            .kill_on_drop(true)
            .spawn()
        {
            Ok(c) => c,
            Err(e) => return Exit::Failed(format!("cannot start {}: {e}", self.program.display())),
        };
        {
            let mut s = self.status.lock();
            s.running = true;
            s.pid = child.id();
            s.since = Some(weft_kernel::now_ms());
        }
        tracing::info!(pid = ?child.id(), program = %self.program.display(), "surface started");
        let status = tokio::select! {
            status = child.wait() => status,
            _ = self.stop.cancelled() => {
                terminate(&mut child).await;
                return Exit::Stopped;
            }
        };
        match status {
            Ok(s) if s.success() => Exit::Done,
            Ok(s) => Exit::Failed(match last_line(&self.log) {
                Some(line) => format!("{s}: {line}"),
                None => s.to_string(),
            }),
            Err(e) => Exit::Failed(format!("waiting for it: {e}")),
        }
    }
}

enum Exit {
    /// The daemon (or a reload) stopped it.
    Stopped,
    /// It exited 0: it has nothing to do.
    Done,
    Failed(String),
}

/// SIGTERM, then SIGKILL after the grace period: the surface closes its store first.
async fn terminate(child: &mut tokio::process::Child) {
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        let _ = nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(pid),
            nix::sys::signal::Signal::SIGTERM,
        );
    }
    if tokio::time::timeout(GRACE, child.wait()).await.is_err() {
        let _ = child.kill().await;
    }
}

/// The surface's log, appended to and private, cut when it passes 8 MiB.
fn open_log(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    if std::fs::metadata(path).is_ok_and(|m| m.len() > 8 << 20) {
        let _ = std::fs::rename(path, path.with_extension("log.1"));
    }
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
}

/// The last non-empty line of the log (the failed run's last word), at most 300 bytes.
fn last_line(path: &Path) -> Option<String> {
    use std::io::{Seek, SeekFrom};
    let mut file = std::fs::File::open(path).ok()?;
    let len = file.metadata().ok()?.len();
    file.seek(SeekFrom::Start(len.saturating_sub(4096))).ok()?;
    let line = BufReader::new(file)
        .lines()
        .map_while(Result::ok)
        .filter(|l| !l.trim().is_empty())
        .last()?;
    let mut end = line.len().min(300);
    while !line.is_char_boundary(end) {
        end -= 1;
    }
    Some(line[..end].to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn last_line_skips_blank_lines_and_cuts_long_ones() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let log = dir.path().join("m.log");
        std::fs::write(&log, format!("first\nsecond {}\n\n", "é".repeat(400)))
            .unwrap_or_else(|e| panic!("{e}"));
        let line = last_line(&log).unwrap_or_default();
        assert!(line.starts_with("second "));
        assert!(line.len() <= 300);
        assert_eq!(last_line(&dir.path().join("none")), None);
    }
}
