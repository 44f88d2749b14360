//! Every `weft` command but `weft daemon run` is a client of the user's daemon: it
//! connects (starting one when none runs), sends its own environment with the hello
//! (so the agents of its turns see what its shell set), and speaks the wire types.

use std::process::ExitCode;
use std::sync::Arc;

use tokio::sync::mpsc;
use weft_client::{Client, Event, Home};
use weft_protocol::{ClientRequest, ErrorCode, Verb, WireError};

/// A connection and what the daemon pushes on it.
pub(crate) struct Daemon {
    pub client: Arc<Client>,
    pub events: mpsc::Receiver<Event>,
}

/// Connects to the daemon of `WEFT_HOME`, starting it if need be.
pub(crate) async fn connect() -> Result<Daemon, ExitCode> {
    let home = Home::from_env();
    let program = std::env::current_exe().ok();
    let hello = weft_client::hello_with_env("cli");
    match weft_client::start::connect_or_start(&home, hello, program.as_deref()).await {
        Ok(connected) => {
            if let Some(old) = &connected.restarted {
                eprintln!(
                    "weft: the daemon (version {old}) was restarted for this weft ({})",
                    weft_client::VERSION
                );
            } else if connected.client.welcome().restarting {
                eprintln!(
                    "weft: the daemon runs version {} and restarts for {} once its turns end",
                    connected.client.welcome().version,
                    weft_client::VERSION
                );
            }
            Ok(Daemon {
                client: Arc::new(connected.client),
                events: connected.events,
            })
        }
        Err(e) => {
            eprintln!("weft: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// Connects only if a daemon runs (for `status` and `stop`).
pub(crate) async fn connect_existing() -> Result<Option<Daemon>, ExitCode> {
    let home = Home::from_env();
    match Client::connect(&home, weft_client::hello_with_env("cli")).await {
        Ok((client, events)) => Ok(Some(Daemon {
            client: Arc::new(client),
            events,
        })),
        Err(weft_client::ClientError::NotRunning { .. }) => Ok(None),
        Err(e) => {
            eprintln!("weft: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

impl Daemon {
    /// A verb whose failure is printed and becomes the exit code; its reply is the type
    /// the verb declares.
    pub async fn send<V: Verb>(&self, verb: V) -> Result<V::Reply, ExitCode> {
        self.client.send(verb).await.map_err(|e| fail(&e))
    }

    /// A request whose reply says only that it was done (a command that prints nothing
    /// of it); a failure is printed and becomes the exit code.
    pub async fn run(&self, request: ClientRequest) -> Result<(), ExitCode> {
        self.client
            .request(request)
            .await
            .map(drop)
            .map_err(|e| fail(&e))
    }
}

/// Prints `e`; errors that are the caller's fault exit 2, the rest 1.
pub(crate) fn fail(e: &WireError) -> ExitCode {
    eprintln!("weft: {e}");
    exit_for(e)
}

/// The exit code for `e`.
pub(crate) fn exit_for(e: &WireError) -> ExitCode {
    match e.code {
        ErrorCode::Storage | ErrorCode::Internal | ErrorCode::AgentUnavailable => ExitCode::FAILURE,
        _ => ExitCode::from(crate::EXIT_USAGE),
    }
}
