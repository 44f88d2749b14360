//! Processes as /proc shows them: the run's agents are found by the marker their
//! environment carries (the turn's environment reaches every agent process and its
//! children), never by name.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// A process carrying a marker.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Proc {
    /// Its id.
    pub pid: u32,
    /// Its parent's.
    pub ppid: u32,
    /// Its short name.
    pub comm: String,
}

fn stat_fields(pid: u32) -> Option<(char, u32)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    let (_, rest) = stat.rsplit_once(')')?;
    let mut it = rest.split_whitespace();
    let state = it.next()?.chars().next()?;
    let ppid = it.next()?.parse().ok()?;
    Some((state, ppid))
}

/// True while `pid` runs (a zombie does not).
pub fn alive(pid: u32) -> bool {
    matches!(stat_fields(pid), Some((s, _)) if s != 'Z' && s != 'X')
}

/// Live processes (not this one) whose environment holds `marker`.
pub fn with_marker(marker: &str) -> Vec<Proc> {
    let needle = marker.as_bytes();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter_map(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            if !environ.windows(needle.len()).any(|w| w == needle) {
                return None;
            }
            let (state, ppid) = stat_fields(pid)?;
            if state == 'Z' || state == 'X' {
                return None;
            }
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            Some(Proc {
                pid,
                ppid,
                comm: comm.trim().to_string(),
            })
        })
        .collect()
}

/// True when `pid` descends from `ancestor`.
pub fn descends_from(pid: u32, ancestor: u32) -> bool {
    let mut p = pid;
    for _ in 0..64 {
        match stat_fields(p) {
            Some((_, ppid)) if ppid == ancestor => return true,
            Some((_, ppid)) if ppid > 1 => p = ppid,
            _ => return false,
        }
    }
    false
}

/// SIGKILLs `pid`.
pub fn kill9(pid: u32) {
    let _ = nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    );
}

/// Polls `f` every 10 ms until it is true or `within` passes; the last answer.
pub fn poll(within: Duration, mut f: impl FnMut() -> bool) -> bool {
    let deadline = Instant::now() + within;
    loop {
        if f() {
            return true;
        }
        if Instant::now() >= deadline {
            return false;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// Runs `cmd` to its end, killed if it outlives `within`: whether it succeeded, or
/// `None` when it could not start or was killed.
pub fn status_within(cmd: &mut Command, within: Duration) -> Option<bool> {
    let mut child = cmd.spawn().ok()?;
    let mut status = None;
    poll(within, || {
        status = child.try_wait().ok().flatten();
        status.is_some()
    });
    if status.is_none() {
        let _ = child.kill();
        let _ = child.wait();
    }
    status.map(|s| s.success())
}

/// The `weft` executable to test: `WEFT_BIN`, else the one built beside this program
/// (`target/<profile>/weft`, this being `target/<profile>/weft-faults` or a test in
/// `target/<profile>/deps/`).
pub fn weft_bin() -> Result<PathBuf, String> {
    if let Some(p) = std::env::var_os("WEFT_BIN") {
        return Ok(PathBuf::from(p));
    }
    let exe = std::env::current_exe().map_err(|e| e.to_string())?;
    exe.ancestors()
        .skip(1)
        .take(3)
        .map(|d| d.join("weft"))
        .find(|p| p.is_file())
        .ok_or_else(|| {
            format!(
                "no weft binary beside {} (cargo build -p weft-cli, or set WEFT_BIN)",
                exe.display()
            )
        })
}

/// A `weft daemon run` for one home, started and SIGKILLed by the harness.
pub struct Daemon {
    weft: PathBuf,
    home: PathBuf,
    log: PathBuf,
    child: Option<Child>,
}

impl Daemon {
    /// Starts a daemon for `home`, logging to `log`, and waits for its socket.
    pub fn start(weft: &Path, home: &Path, log: &Path) -> Result<Daemon, String> {
        let mut d = Daemon {
            weft: weft.to_path_buf(),
            home: home.to_path_buf(),
            log: log.to_path_buf(),
            child: None,
        };
        d.spawn()?;
        Ok(d)
    }

    fn spawn(&mut self) -> Result<(), String> {
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&self.log)
            .map_err(|e| format!("daemon log {}: {e}", self.log.display()))?;
        let err = log.try_clone().map_err(|e| e.to_string())?;
        let child = Command::new(&self.weft)
            .args(["daemon", "run"])
            .env("WEFT_HOME", &self.home)
            .env("WEFT_DAEMON_IDLE_SECS", "900")
            // Idle agent processes go soon, so the run's process count stays small.
            .env("WEFT_AGENT_IDLE_SECS", "5")
            .stdin(Stdio::null())
            .stdout(log)
            .stderr(err)
            .spawn()
            .map_err(|e| format!("start {}: {e}", self.weft.display()))?;
        self.child = Some(child);
        let socket = weft_client::Home::at(&self.home).socket();
        let up = poll(Duration::from_secs(20), || {
            std::os::unix::net::UnixStream::connect(&socket).is_ok()
        });
        if !up {
            return Err(format!(
                "the daemon did not listen within 20 s (log {})",
                self.log.display()
            ));
        }
        Ok(())
    }

    /// Its pid.
    pub fn pid(&self) -> u32 {
        self.child.as_ref().map_or(0, Child::id)
    }

    /// SIGKILL, reaped.
    pub fn kill9(&mut self) {
        if let Some(mut c) = self.child.take() {
            let _ = c.kill();
            let _ = c.wait();
        }
    }

    /// SIGKILL, then a new daemon on the same home.
    pub fn restart(&mut self) -> Result<(), String> {
        self.kill9();
        self.spawn()
    }

    /// Starts it again after [`Daemon::stop`].
    pub fn start_again(&mut self) -> Result<(), String> {
        if self.child.is_some() {
            return Ok(());
        }
        self.spawn()
    }

    /// `weft daemon stop`, then whatever is left is killed.
    pub fn stop(&mut self) {
        let _ = Command::new(&self.weft)
            .args(["daemon", "stop"])
            .env("WEFT_HOME", &self.home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
        if let Some(mut c) = self.child.take() {
            let pid = c.id();
            if !poll(Duration::from_secs(10), || {
                matches!(c.try_wait(), Ok(Some(_)))
            }) {
                kill9(pid);
            }
            let _ = c.wait();
        }
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        self.stop();
    }
}
