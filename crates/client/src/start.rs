//! Starting the kernel service when no daemon runs, and connecting to it.
//!
//! The daemon is started detached: its own process group, stdin/stdout/stderr on
//! /dev/null (it must not hold the pipes of the client that started it, or a CI run
//! or a `$(weft …)` capture waiting on those pipes would never end), and it leaves the
//! client's session itself (`setsid`, in `weft daemon`). Two clients starting one at
//! the same moment is fine: the daemon's lock lets one win and the other exit, and
//! both clients connect to the winner.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use tokio::sync::mpsc;
use weft_protocol::Hello;

use crate::{Client, ClientError, Event, Home, VERSION};

/// How long a started daemon gets to open its socket.
const START_TIMEOUT: Duration = Duration::from_secs(20);

/// The `weft` binary that runs the daemon: `WEFT_BIN`, else `weft` beside the running
/// executable (the app and the CLI ship side by side), else an absolute `PATH` entry.
/// Never the current folder.
pub fn weft_binary() -> Option<PathBuf> {
    if let Some(bin) = std::env::var_os("WEFT_BIN").filter(|b| !b.is_empty()) {
        let bin = PathBuf::from(bin);
        return bin.is_absolute().then_some(bin).filter(|b| b.is_file());
    }
    if let Ok(exe) = std::env::current_exe() {
        if exe.file_name().is_some_and(|n| n == "weft") {
            return Some(exe);
        }
        if let Some(beside) = exe.parent().map(|d| d.join("weft")).filter(|p| p.is_file()) {
            return Some(beside);
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .filter(|d| d.is_absolute())
        .map(|d| d.join("weft"))
        .find(|c| c.is_file())
}

/// How a started daemon exited, once it has: set by its reaper thread.
type Exit = std::sync::Arc<parking_lot::Mutex<Option<std::process::ExitStatus>>>;

/// Starts `weft daemon` for `home`, detached. The child is reaped by a thread of its
/// own so a long-lived client (the app) leaves no zombie; the returned slot tells a
/// client waiting for the socket that the daemon already exited.
pub fn spawn_daemon(program: &Path, home: &Home) -> Result<Exit, ClientError> {
    use std::os::unix::process::CommandExt;
    let mut child = Command::new(program)
        .args(["daemon", "run", "--on-demand"])
        .env("WEFT_HOME", home.dir())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .process_group(0)
        .spawn()
        .map_err(|e| {
            ClientError::Start(format!(
                "cannot start the Weft daemon ({}): {e}",
                program.display()
            ))
        })?;
    let exit = Exit::default();
    let slot = exit.clone();
    std::thread::spawn(move || {
        if let Ok(status) = child.wait() {
            *slot.lock() = Some(status);
        }
    });
    Ok(exit)
}

/// Why `home` cannot hold a daemon's files, when it cannot (read-only, not ours, full):
/// what a daemon that exited at once most likely met, said by the client because that
/// daemon had nowhere to log it.
fn unwritable(home: &Home) -> Option<String> {
    let probe = home
        .dir()
        .join(format!(".weft-probe-{}", std::process::id()));
    let made = std::fs::create_dir_all(home.dir()).and_then(|()| std::fs::write(&probe, b""));
    let _ = std::fs::remove_file(&probe);
    made.err()
        .map(|e| format!("{} is not writable: {e}", home.dir().display()))
}

/// The end of the daemon's log, for an error that says why it did not come up.
fn log_tail(home: &Home) -> String {
    let text = std::fs::read_to_string(home.daemon_log()).unwrap_or_default();
    let lines: Vec<&str> = text.lines().rev().take(5).collect();
    lines.into_iter().rev().collect::<Vec<_>>().join("\n")
}

/// Connects to `home`'s daemon, starting one (with `program`) if none runs. A daemon
/// of another version that has no running turns restarts for this one (`restarted`
/// says so); one that is busy is used as it is and restarts once its turns end.
pub async fn connect_or_start(
    home: &Home,
    hello: Hello,
    program: Option<&Path>,
) -> Result<Connected, ClientError> {
    let mut restarted = None;
    for attempt in 0..2 {
        let (client, events) = match connect_settled(home, hello.clone()).await {
            Ok(c) => c,
            Err(ClientError::NotRunning { .. }) => {
                let program = program.map(Path::to_path_buf).or_else(weft_binary).ok_or_else(|| {
                    ClientError::Start(
                        "no Weft daemon runs and no `weft` binary was found to start one (set WEFT_BIN)".into(),
                    )
                })?;
                let exit = spawn_daemon(&program, home)?;
                wait_for_socket(home, hello.clone(), &exit).await?
            }
            Err(e) => return Err(e),
        };
        if client.welcome().restarting && attempt == 0 {
            let old = client.welcome().version.clone();
            let mut events = events;
            drop(client);
            // It exits at once when idle; wait for it to go, then start ours.
            let gone = tokio::time::timeout(Duration::from_secs(15), async {
                while let Some(ev) = events.recv().await {
                    if matches!(ev, Event::Disconnected(_)) {
                        break;
                    }
                }
            })
            .await;
            if gone.is_ok() {
                wait_until_gone(home).await;
                restarted = Some(old);
                continue;
            }
            // Still busy: fall through and reconnect to it as it is.
            let (client, events) = Client::connect(home, hello.clone()).await?;
            return Ok(Connected {
                client,
                events,
                restarted: None,
            });
        }
        return Ok(Connected {
            client,
            events,
            restarted,
        });
    }
    Err(ClientError::Start(format!(
        "the Weft daemon did not restart for version {VERSION}"
    )))
}

/// How long a daemon on its way out may take to be gone.
const SETTLE: Duration = Duration::from_secs(10);

/// Connects, waiting out a daemon that is dying (it took the connection but closed it
/// unanswered: killed, its last threads not yet exited): once it is gone, nothing runs
/// and one is started, rather than the client failing on a daemon that no longer is.
async fn connect_settled(
    home: &Home,
    hello: Hello,
) -> Result<(Client, mpsc::Receiver<Event>), ClientError> {
    let deadline = tokio::time::Instant::now() + SETTLE;
    loop {
        match Client::connect(home, hello.clone()).await {
            Err(ClientError::Closing { .. }) if tokio::time::Instant::now() < deadline => {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
            other => return other,
        }
    }
}

/// A connection, and whether a daemon of another version was restarted for it.
pub struct Connected {
    /// The connection.
    pub client: Client,
    /// What the daemon pushes.
    pub events: mpsc::Receiver<Event>,
    /// The old daemon's version, when one was restarted.
    pub restarted: Option<String>,
}

/// The lock file disappears from use when the old daemon exits; its socket refuses.
async fn wait_until_gone(home: &Home) {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(15);
    while tokio::time::Instant::now() < deadline {
        if tokio::net::UnixStream::connect(home.socket())
            .await
            .is_err()
        {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_for_socket(
    home: &Home,
    hello: Hello,
    exit: &Exit,
) -> Result<(Client, mpsc::Receiver<Event>), ClientError> {
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        match Client::connect(home, hello.clone()).await {
            Ok(c) => return Ok(c),
            Err(ClientError::NotRunning { .. }) if tokio::time::Instant::now() < deadline => {
                // Exit 2 is "another daemon holds the home": that one's socket comes.
                let exited = (*exit.lock()).filter(|s| s.code() != Some(2));
                if let Some(status) = exited {
                    let mut why = format!("the Weft daemon exited as it started ({status})");
                    let tail = match unwritable(home) {
                        Some(e) => {
                            why = format!("{why}: {e}");
                            // It had nowhere to log; what the log holds is older.
                            String::new()
                        }
                        None => log_tail(home),
                    };
                    if !tail.is_empty() {
                        why = format!(
                            "{why}; its log ({}) ends:\n{tail}",
                            home.daemon_log().display()
                        );
                    }
                    return Err(ClientError::Start(why));
                }
                tokio::time::sleep(pause).await;
                pause = (pause * 2).min(Duration::from_millis(100));
            }
            Err(ClientError::NotRunning { .. }) => {
                let tail = log_tail(home);
                return Err(ClientError::Start(format!(
                    "the Weft daemon did not start within {} s{}",
                    START_TIMEOUT.as_secs(),
                    if tail.is_empty() {
                        String::new()
                    } else {
                        format!("; its log ({}) ends:\n{tail}", home.daemon_log().display())
                    }
                )));
            }
            Err(e) => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_daemon_that_exits_as_it_starts_is_an_error_at_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path().join("home"));
        let hello = Hello {
            version: VERSION.into(),
            surface: "test".into(),
            env: None,
            token: None,
            ..Default::default()
        };
        let started = std::time::Instant::now();
        // `false` exits 1 at once, as a daemon that cannot set up its home does.
        let err = connect_or_start(&home, hello, Some(Path::new("/bin/false")))
            .await
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(
            started.elapsed() < START_TIMEOUT / 2,
            "took {:?}",
            started.elapsed()
        );
        assert!(
            err.contains("exited as it started (exit status: 1)"),
            "{err}"
        );
    }

    #[test]
    fn a_home_that_cannot_be_written_is_named_with_why() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(unwritable(&Home::at(dir.path().join("home"))), None);
        let file = dir.path().join("a-file");
        std::fs::write(&file, "").unwrap_or_else(|e| panic!("{e}"));
        // Under a file: what a read-only WEFT_HOME gives a root user too.
        let why = unwritable(&Home::at(file.join("home"))).unwrap_or_default();
        assert!(why.contains("is not writable: Not a directory"), "{why}");
    }
}
