//! `weft serve`: makes the user's daemon (started if none runs) accept WebSocket
//! clients — and serve the browser UI — on an address, for as long as this command
//! runs. One JSON message per text frame, binary frames for terminals, the same wire
//! as the daemon's socket (see `weft_protocol::ClientRequest`). A token is always
//! required: in an `Authorization: Bearer` header or in the `hello`, never in a URL.

use std::process::ExitCode;

use clap::Args;
use weft_protocol::verb;
use weft_protocol::Scope;

use crate::client;

#[derive(Args)]
pub(crate) struct ServeArgs {
    /// Address to listen on (port 0 picks a free one; the address is printed).
    #[arg(long, default_value = "127.0.0.1:7777")]
    listen: String,
    /// Print the token WebSocket clients must give, and exit.
    #[arg(long)]
    print_token: bool,
    /// With --print-token: a token that may only read (sessions, history, patches).
    #[arg(long, requires = "print_token")]
    read_only: bool,
}

pub(crate) async fn serve(args: ServeArgs) -> ExitCode {
    if args.print_token {
        let home = weft_client::Home::from_env();
        let _ = std::fs::create_dir_all(home.dir());
        let scopes: &[Scope] = if args.read_only {
            &[Scope::Read]
        } else {
            &[Scope::Read, Scope::Control]
        };
        return match weft_daemon::tokens::ensure(&home.tokens(), scopes) {
            Ok(token) => {
                out!("{}", token.value);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!(
                    "weft: cannot make a token in {}: {e}",
                    home.tokens().display()
                );
                ExitCode::FAILURE
            }
        };
    }
    let mut daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let listening = match daemon
        .send(verb::Listen {
            addr: args.listen.clone(),
        })
        .await
    {
        Ok(l) => l,
        Err(code) => return code,
    };
    eprintln!("weft: serving on {}", listening.ws_url);
    eprintln!("weft: browser UI at {}", listening.ui_url);
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    loop {
        tokio::select! {
            _ = &mut ctrl_c => return ExitCode::SUCCESS,
            ev = daemon.events.recv() => match ev {
                Some(weft_client::Event::Disconnected(why)) | Some(weft_client::Event::Message(weft_protocol::ServerMessage::Closing { reason: why })) => {
                    eprintln!("weft: the daemon went away: {why}");
                    return ExitCode::FAILURE;
                }
                None => return ExitCode::FAILURE,
                Some(_) => {}
            }
        }
    }
}
