//! Every `weft` command but `weft daemon run` is a client of the user's daemon: it
//! connects (starting one when none runs), sends its own environment with the hello
//! (so the agents of its turns see what its shell set), and speaks the wire types.

use std::process::ExitCode;
use std::sync::{Arc, OnceLock};

use tokio::sync::mpsc;
use weft_client::{Client, Event, Home};
use weft_protocol::{ClientRequest, ErrorCode, Verb, WireError};

/// A connection and what the daemon pushes on it.
pub(crate) struct Daemon {
    pub client: Arc<Client>,
    pub events: mpsc::Receiver<Event>,
}

/// The host `--host` named (none: this machine), set once before any command runs.
static HOST: OnceLock<weft_hosts::Host> = OnceLock::new();

/// Sends every connection of this command to host `name`, made ready first (first
/// contact copies this weft there when it is not yet).
pub(crate) async fn use_host(name: &str) -> Result<(), ExitCode> {
    let home = Home::from_env();
    let ssh = weft_hosts::Ssh::from_env(&home);
    match weft_hosts::link::ready(&home, &ssh, name, false).await {
        Ok(host) => {
            let _ = HOST.set(host);
            Ok(())
        }
        Err(e) => {
            eprintln!("weft: {e}");
            Err(match e {
                weft_hosts::HostError::Unknown(_) => ExitCode::from(crate::EXIT_USAGE),
                _ => ExitCode::FAILURE,
            })
        }
    }
}

/// The host this command runs against, if not this machine.
pub(crate) fn host() -> Option<&'static weft_hosts::Host> {
    HOST.get()
}

/// A workdir on `host`: an absolute path as it is, a relative one (or none) under the
/// host's `$HOME` (this machine's current folder means nothing there).
pub(crate) fn remote_workdir(host: &weft_hosts::Host, dir: Option<std::path::PathBuf>) -> String {
    let home = std::path::PathBuf::from(host.home.as_deref().unwrap_or("/"));
    match dir {
        Some(d) if d.is_absolute() => d.display().to_string(),
        Some(d) => home.join(d).display().to_string(),
        None => home.display().to_string(),
    }
}

/// Connects to `host`'s daemon through `ssh … weft proxy` (which starts it there when
/// none runs), or straight over TLS for a `wss://` host. The hello carries no
/// environment: this machine's keys and variables stay here, and the host's turns run
/// with the host's own.
pub(crate) async fn connect_remote(host: &weft_hosts::Host) -> Result<Daemon, ExitCode> {
    match weft_hosts::connect(&Home::from_env(), &host.name, "cli").await {
        Ok((client, events)) => {
            let w = client.welcome();
            if w.restarting {
                let note = weft_hosts::status::version_note(&w.version, weft_client::VERSION, true);
                eprintln!("weft: host {}: {}", host.name, note.unwrap_or_default());
            }
            Ok(Daemon {
                client: Arc::new(client),
                events,
            })
        }
        Err(e) => {
            eprintln!("weft: {e}");
            Err(ExitCode::FAILURE)
        }
    }
}

/// Connects to the daemon of `WEFT_HOME`, starting it if need be (or to `--host`'s).
pub(crate) async fn connect() -> Result<Daemon, ExitCode> {
    if let Some(host) = host() {
        return connect_remote(host).await;
    }
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
    if let Some(host) = host() {
        return connect_remote(host).await.map(Some);
    }
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
