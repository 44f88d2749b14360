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

/// Starts `weft daemon` for `home`, detached. The child is reaped by a thread of its
/// own so a long-lived client (the app) leaves no zombie.
pub fn spawn_daemon(program: &Path, home: &Home) -> Result<(), ClientError> {
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
    std::thread::spawn(move || child.wait());
    Ok(())
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
        let (client, events) = match Client::connect(home, hello.clone()).await {
            Ok(c) => c,
            Err(ClientError::NotRunning { .. }) => {
                let program = program.map(Path::to_path_buf).or_else(weft_binary).ok_or_else(|| {
                    ClientError::Start(
                        "no Weft daemon runs and no `weft` binary was found to start one (set WEFT_BIN)".into(),
                    )
                })?;
                spawn_daemon(&program, home)?;
                wait_for_socket(home, hello.clone()).await?
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
) -> Result<(Client, mpsc::Receiver<Event>), ClientError> {
    let deadline = tokio::time::Instant::now() + START_TIMEOUT;
    let mut pause = Duration::from_millis(5);
    loop {
        match Client::connect(home, hello.clone()).await {
            Ok(c) => return Ok(c),
            Err(ClientError::NotRunning { .. }) if tokio::time::Instant::now() < deadline => {
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
