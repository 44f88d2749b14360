//! `weft daemon run|status|stop`: the kernel service by hand.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;

use clap::Subcommand;
use weft_protocol::verb;

use crate::client;
use crate::list::print_json;

#[derive(Subcommand)]
pub(crate) enum DaemonCommand {
    /// Run the kernel service in the foreground (clients start one on demand).
    Run {
        /// Also accept WebSocket clients on this address for the daemon's life.
        #[arg(long)]
        listen: Vec<String>,
        /// Started by a client: leave its session, log only to the log file.
        #[arg(long, hide = true)]
        on_demand: bool,
    },
    /// Show the running daemon: pid, version, clients, turns, terminals, questions.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop the daemon: every turn and terminal ends, no agent process is left.
    Stop,
}

/// The size at which `daemon.log` is rotated.
pub(crate) const LOG_BYTES: usize = 10 << 20;
/// Rotated logs kept beside the live one (`daemon.log.1` newest … `.4`): five files,
/// at most 50 MB, however long the daemon runs.
pub(crate) const LOG_KEPT: usize = 4;

/// The daemon's log file, rotated at [`LOG_BYTES`] with [`LOG_KEPT`] old ones kept
/// (each 0600); `None` when its folder cannot be made.
pub(crate) fn rotating_log(home: &weft_client::Home) -> Option<RotatingLog> {
    std::fs::create_dir_all(home.log_dir()).ok()?;
    let mut options = std::fs::OpenOptions::new();
    options.read(true).create(true).append(true).mode(0o600);
    Some(file_rotate::FileRotate::new(
        home.daemon_log(),
        file_rotate::suffix::AppendCount::new(LOG_KEPT),
        file_rotate::ContentLimit::BytesSurpassed(LOG_BYTES),
        file_rotate::compression::Compression::None,
        Some(options),
    ))
}

type RotatingLog = file_rotate::FileRotate<file_rotate::suffix::AppendCount>;

pub(crate) fn log_to(home: &weft_client::Home, foreground: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WEFT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        // Its report of a failed write goes to stderr with eprintln!, which panics
        // when stderr is a closed pipe: a lost log line must not end the task logging.
        .log_internal_errors(false);
    match rotating_log(home) {
        Some(file) if !foreground => {
            builder.with_writer(std::sync::Mutex::new(file)).init();
        }
        Some(file) => {
            let tee = Tee(std::sync::Arc::new(std::sync::Mutex::new(file)));
            builder.with_writer(move || tee.clone()).init();
        }
        None => builder.with_writer(std::io::stderr).init(),
    }
    // A panic's message reaches the log file too, not only a stderr nobody may read.
    let default = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        tracing::error!("panic: {info}");
        default(info);
    }));
}

/// Writes to the log file and to stderr.
#[derive(Clone)]
struct Tee(std::sync::Arc<std::sync::Mutex<RotatingLog>>);

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut f) = self.0.lock() {
            let _ = f.write_all(buf);
        }
        // A closed stderr (its reader gone) is no reason to lose the line or to fail:
        // tracing reports a writer's error with eprintln!, which panics on a broken
        // pipe, and the panic took the logging task with it (`daemon stop` then hung).
        let _ = std::io::stderr().write_all(buf);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        if let Ok(mut f) = self.0.lock() {
            let _ = f.flush();
        }
        let _ = std::io::stderr().flush();
        Ok(())
    }
}

pub(crate) async fn run_daemon(listen: Vec<String>) -> ExitCode {
    let mut options = weft_daemon::Options::from_env();
    options.listen = listen;
    match weft_daemon::run(options).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(weft_daemon::DaemonError::Lock(e)) => {
            eprintln!("weft: {e}");
            tracing::warn!("{e}");
            ExitCode::from(crate::EXIT_USAGE)
        }
        Err(e) => {
            eprintln!("weft: {e}");
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) async fn status(json: bool) -> ExitCode {
    let daemon = match client::connect_existing().await {
        Ok(Some(d)) => d,
        Ok(None) => {
            if json {
                out!("null");
            } else {
                eprintln!(
                    "weft: no daemon runs for {}",
                    weft_client::Home::from_env().dir().display()
                );
            }
            return ExitCode::FAILURE;
        }
        Err(code) => return code,
    };
    let status = match daemon.send(verb::DaemonStatus {}).await {
        Ok(s) => s,
        Err(code) => return code,
    };
    if json {
        return print_json(&status);
    }
    out!("pid        {}", status.pid);
    out!("version    {}", status.version);
    out!("home       {}", status.home);
    out!("socket     {}", status.socket);
    out!(
        "listening  {}",
        if status.listening.is_empty() {
            "-".into()
        } else {
            status.listening.join(", ")
        }
    );
    let clients: Vec<String> = status
        .clients
        .iter()
        .map(|(k, v)| format!("{k} {v}"))
        .collect();
    out!("clients    {}", clients.join(", "));
    out!(
        "busy       {} session(s), {} terminal(s), {} question(s) waiting",
        status.busy_sessions,
        status.terminals,
        status.pending
    );
    out!("idle exit  after {} s with nothing to do", status.idle_secs);
    match &status.sandbox {
        Some(s) => out!("sandbox    {}: {}", s.mechanism, s.details),
        None => out!("sandbox    (being probed)"),
    }
    for surface in status
        .surfaces
        .iter()
        .filter(|s| s.running || s.restarts > 0)
    {
        let state = match (surface.running, surface.pid) {
            (true, Some(pid)) => format!("running, pid {pid}"),
            _ => "stopped".to_string(),
        };
        out!(
            "{:<10} {state}, {} restart(s)",
            surface.name,
            surface.restarts
        );
        if let Some(why) = &surface.last_error {
            out!("           last failure: {why}");
        }
    }
    ExitCode::SUCCESS
}

pub(crate) async fn stop() -> ExitCode {
    let mut daemon = match client::connect_existing().await {
        Ok(Some(d)) => d,
        Ok(None) => {
            eprintln!("weft: no daemon runs");
            return ExitCode::SUCCESS;
        }
        Err(code) => return code,
    };
    let asked = tokio::time::timeout(
        std::time::Duration::from_secs(30),
        daemon.send(verb::DaemonStop {}),
    )
    .await;
    match asked {
        Err(_) => {
            eprintln!("weft: the daemon did not answer `stop` within 30 s (its log may say why)");
            return ExitCode::FAILURE;
        }
        Ok(Err(code)) => return code,
        Ok(Ok(())) => {}
    }
    // It is gone when it closes our connection (after ending every turn).
    let gone = tokio::time::timeout(std::time::Duration::from_secs(30), async {
        while let Some(ev) = daemon.events.recv().await {
            if matches!(ev, weft_client::Event::Disconnected(_)) {
                break;
            }
        }
    })
    .await;
    if gone.is_err() {
        eprintln!("weft: the daemon did not stop within 30 s");
        return ExitCode::FAILURE;
    }
    // The lock is released only when its process has exited.
    let lock = weft_client::Home::from_env().lock();
    for _ in 0..200 {
        if weft_daemon::lock::take(&lock).is_ok() {
            return ExitCode::SUCCESS;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    eprintln!("weft: the daemon closed its socket but did not exit");
    ExitCode::FAILURE
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn the_log_rotates_at_its_size_and_keeps_five_private_files() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = weft_client::Home::at(dir.path());
        let mut log = rotating_log(&home).unwrap_or_else(|| panic!("no log"));
        let line = vec![b'x'; 64 << 10];
        // Eight times the size: without rotation one file of 80 MB.
        for _ in 0..(8 * LOG_BYTES / line.len()) {
            log.write_all(&line).unwrap_or_else(|e| panic!("{e}"));
        }
        log.flush().unwrap_or_else(|e| panic!("{e}"));
        let mut files: Vec<(String, u64, u32)> = std::fs::read_dir(home.log_dir())
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| {
                let meta = e.metadata().unwrap_or_else(|e| panic!("{e}"));
                let name = e.file_name().to_string_lossy().into_owned();
                (name, meta.len(), meta.permissions().mode() & 0o777)
            })
            .collect();
        files.sort();
        let names: Vec<&str> = files.iter().map(|f| f.0.as_str()).collect();
        assert_eq!(
            names,
            [
                "daemon.log",
                "daemon.log.1",
                "daemon.log.2",
                "daemon.log.3",
                "daemon.log.4"
            ]
        );
        for (name, len, mode) in &files {
            assert!(
                *len <= (LOG_BYTES + line.len()) as u64,
                "{name} is {len} bytes"
            );
            assert_eq!(*mode, 0o600, "{name}");
        }
    }
}
