//! `weft`: Weft's headless surface. One turn from a script, the session list, a
//! session's history, the agents on this machine.
//!
//! Exit codes: 0 the turn ended ok; 1 it ended with an error (the snapshot's `error`
//! says why) or was stopped; 2 bad usage (unknown agent or session, a workdir that is
//! not a folder, a bad flag).

/// `println!` that ignores a closed stdout (`weft sessions | head`) instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod ask;
mod list;
mod run;
mod serve;
mod tui;

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Parser, Subcommand};
use weft_kernel::{KernelError, Loom};

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Drive coding agents through one session model"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Run one turn and print the reply.
    Run(run::RunArgs),
    /// List sessions, newest first.
    Sessions {
        /// Only sessions in this folder.
        #[arg(long)]
        workdir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Show a session's past turns.
    History {
        /// The session key (`agent:id`).
        key: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Find past turns whose prompt or reply contain every word (the last one as a
    /// prefix), best match first.
    Search {
        /// The words.
        #[arg(required = true)]
        words: Vec<String>,
        /// At most this many turns.
        #[arg(long, default_value_t = 20)]
        limit: usize,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Open an agent's own terminal UI here (raw passthrough); the session is shared
    /// with the structured rail.
    Tui(tui::TuiArgs),
    /// Serve the verbs over a WebSocket (for scripts and remote surfaces).
    Serve(serve::ServeArgs),
    /// List the agents, whether each is installed, its version and capabilities.
    Agents {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Bad usage: exit 2.
pub(crate) const EXIT_USAGE: u8 = 2;

pub(crate) fn open_loom() -> Result<Arc<Loom>, KernelError> {
    Loom::builder(weft_kernel::state::global_state_dir())
        .drivers(weft_drivers::all())
        .open()
}

/// Verbs' errors that are the caller's fault exit 2; the rest 1.
pub(crate) fn exit_for(e: &KernelError) -> ExitCode {
    match e {
        KernelError::Store(_) => ExitCode::FAILURE,
        _ => ExitCode::from(EXIT_USAGE),
    }
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WEFT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("weft: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        let loom = match open_loom() {
            Ok(loom) => loom,
            Err(e) => {
                eprintln!("weft: {e}");
                return ExitCode::FAILURE;
            }
        };
        let code = match cli.command {
            Command::Run(args) => run::run(&loom, args).await,
            Command::Sessions { workdir, json } => list::sessions(&loom, workdir, json).await,
            Command::History { key, json } => list::history(&loom, &key, json).await,
            Command::Search { words, limit, json } => {
                list::search(&loom, &words.join(" "), limit, json).await
            }
            Command::Agents { json } => list::agents(&loom, json).await,
            Command::Serve(args) => serve::serve(&loom, args).await,
            Command::Tui(args) => tui::tui(&loom, args).await,
        };
        loom.shutdown().await;
        code
    })
}
