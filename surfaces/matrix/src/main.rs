//! `weft-matrix`: Weft's Matrix surface, so any Matrix app on any phone prompts,
//! watches and answers the agents.
//!
//! It is a client of the user's daemon like the CLI and the window (it says hello as
//! surface `matrix`), and a Matrix bot: an allow-listed user's direct chat with it is a
//! control room, each session it starts gets a room of its own, a reply streams by
//! editing one message at a bounded rate, and what needs the user (a question, the end
//! of a turn) goes out as a new message so the phone buzzes.
//!
//! It is its own program in its own Cargo workspace because matrix-sdk's SQLite store
//! links a `libsqlite3-sys` that cannot share one build graph with Weft's rusqlite.
//! `weft matrix …` runs it with the same arguments; the daemon runs `weft-matrix run`
//! while it is configured (exit 0: nothing to do, leave it stopped).

// matrix-sdk's futures nest deeply (the SDK sets the same limit).
#![recursion_limit = "256"]

mod account;
mod bot;
mod config;
mod matrix;
mod secret;

use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "weft-matrix",
    about = "Weft's Matrix surface: drive the agents from any Matrix app",
    version
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Log the bot in: its password is read from stdin when stdin is not a terminal
    /// (asked for when it is), or its access token with --access-token-stdin. The
    /// token and the store's passphrase go to the OS secret store.
    Login(account::LoginArgs),
    /// Let a Matrix user control the agents (e.g. @me:example.org).
    Allow {
        /// The user's Matrix id.
        mxid: String,
    },
    /// Take a Matrix user off the allow-list.
    Deny {
        /// The user's Matrix id.
        mxid: String,
    },
    /// Who the bot is, whom it obeys and its rooms.
    Status {
        /// Print {homeserver, user, deviceId, verified, allowed, rooms} as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Log the bot's device out and forget its secrets and store.
    Logout,
    /// Run the bot (the daemon starts this while Matrix is configured). Exits 0 at once
    /// when the bot is not logged in.
    Run,
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(r) => r,
        Err(e) => {
            eprintln!("weft-matrix: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    let home = weft_client::Home::from_env();
    let paths = config::Paths::of(&home);
    let result = runtime.block_on(async {
        match cli.command {
            Command::Login(args) => account::login(&home, &paths, args).await,
            Command::Allow { mxid } => account::allow(&paths, &mxid, true),
            Command::Deny { mxid } => account::allow(&paths, &mxid, false),
            Command::Status { json } => account::status(&paths, json),
            Command::Logout => account::logout(&home, &paths).await,
            Command::Run => bot::run(home, paths).await,
        }
    });
    // The SDK's tasks (sync, send queue) are not waited for: the state is on disk.
    runtime.shutdown_timeout(std::time::Duration::from_secs(2));
    match result {
        Ok(code) => code,
        Err(e) => {
            eprintln!("weft-matrix: {e:#}");
            ExitCode::FAILURE
        }
    }
}
