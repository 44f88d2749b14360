//! `weft daemon run|status|stop`: the kernel service by hand.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::process::ExitCode;

use clap::Subcommand;
use weft_protocol::{ClientRequest, DaemonStatus};

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

pub(crate) fn log_to(home: &weft_client::Home, foreground: bool) {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WEFT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("info"));
    let _ = std::fs::create_dir_all(home.log_dir());
    let file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(home.daemon_log());
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false);
    match file {
        Ok(file) if !foreground => {
            builder.with_writer(std::sync::Mutex::new(file)).init();
        }
        Ok(file) => {
            let tee = Tee(std::sync::Arc::new(std::sync::Mutex::new(file)));
            builder.with_writer(move || tee.clone()).init();
        }
        Err(_) => builder.with_writer(std::io::stderr).init(),
    }
}

/// Writes to the log file and to stderr.
#[derive(Clone)]
struct Tee(std::sync::Arc<std::sync::Mutex<std::fs::File>>);

impl Write for Tee {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        if let Ok(mut f) = self.0.lock() {
            let _ = f.write_all(buf);
        }
        std::io::stderr().write_all(buf)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        std::io::stderr().flush()
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
    let status: DaemonStatus = match daemon.call(ClientRequest::DaemonStatus {}).await {
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
    if let Err(code) = daemon.call::<()>(ClientRequest::DaemonStop {}).await {
        return code;
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
