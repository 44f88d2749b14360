//! `weft tokens add|list|revoke`: the named tokens WebSocket clients (a browser, a
//! phone) prove themselves with. Only each token's hash is stored
//! (`weft_daemon::tokens`); the token is shown once, by `add`.

use std::process::ExitCode;

use clap::Subcommand;
use serde_json::json;
use weft_client::Home;
use weft_protocol::Scope;

use crate::list::print_json;

#[derive(Subcommand)]
pub(crate) enum TokensCommand {
    /// Make a token and print it (once: only its hash is kept).
    Add {
        /// Its name (letters, digits, `.`, `_`, `-`), to list and revoke it by.
        name: String,
        /// It may only read (sessions, history, patches, the inbox): no verb that
        /// changes anything.
        #[arg(long)]
        read_only: bool,
    },
    /// The tokens: name, scopes, when made (never the tokens themselves).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Forget a token: it is refused from its next connection on.
    Revoke {
        /// Its name.
        name: String,
    },
}

/// The scopes of a token, read-only or not.
pub(crate) fn scopes(read_only: bool) -> &'static [Scope] {
    if read_only {
        &[Scope::Read]
    } else {
        &[Scope::Read, Scope::Control]
    }
}

pub(crate) fn run(command: TokensCommand) -> ExitCode {
    let home = Home::from_env();
    let _ = std::fs::create_dir_all(home.dir());
    let path = home.tokens();
    let failed = |e: weft_daemon::tokens::TokenError| {
        eprintln!("weft: {e}");
        ExitCode::FAILURE
    };
    match command {
        TokensCommand::Add { name, read_only } => {
            match weft_daemon::tokens::add(&path, &name, scopes(read_only)) {
                Ok(token) => {
                    out!("{}", token.value);
                    eprintln!(
                        "weft: token `{name}` made ({}); it is shown only this once",
                        if read_only {
                            "read only"
                        } else {
                            "read and control"
                        }
                    );
                    ExitCode::SUCCESS
                }
                Err(e) => failed(e),
            }
        }
        TokensCommand::List { json } => {
            let entries = weft_daemon::tokens::list(&path);
            if json {
                let rows: Vec<_> = entries
                    .iter()
                    .map(|e| {
                        json!({
                            "name": e.name,
                            "scopes": e.scopes.iter().map(|s| s.as_str()).collect::<Vec<_>>(),
                            "readOnly": !e.scopes.contains(&Scope::Control),
                            "createdAt": e.created_ms,
                        })
                    })
                    .collect();
                return print_json(&rows);
            }
            if entries.is_empty() {
                eprintln!("weft: no tokens (`weft tokens add NAME` makes one)");
            }
            for e in &entries {
                let scopes: Vec<&str> = e.scopes.iter().map(|s| s.as_str()).collect();
                out!("{}\t{}", e.name, scopes.join(","));
            }
            ExitCode::SUCCESS
        }
        TokensCommand::Revoke { name } => match weft_daemon::tokens::revoke(&path, &name) {
            Ok(()) => {
                eprintln!("weft: token `{name}` revoked");
                ExitCode::SUCCESS
            }
            Err(e) => failed(e),
        },
    }
}
