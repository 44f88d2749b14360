//! `weft mcp`: the MCP servers configured once in Weft for every agent
//! (`~/.weft/mcp.json`, `<ws>/.weft/mcp.json`), a session's own choices, and the
//! secrets servers name with `${secret:NAME}` (kept in the OS secret store; a secret
//! is never taken as a command-line argument).

use std::io::Read as _;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use weft_protocol::verb;
use weft_protocol::{ClientRequest, McpList, SecretText};

use crate::client;
use crate::list::print_json;

#[derive(Subcommand)]
pub(crate) enum McpCommand {
    /// Bring in the MCP servers set up in the agents themselves (Claude Code's
    /// ~/.claude.json, Codex's ~/.codex/config.toml, Gemini's ~/.gemini/settings.json)
    /// into ~/.weft/mcp.json, for every agent. Servers Weft has are kept; values that
    /// look like secrets become `${secret:NAME}` to set with `weft mcp secret set`.
    Import {
        /// Only say what would be imported.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Every server configured in Weft: its scope and file, whether it is on, the
    /// secrets it names (never a value).
    List {
        /// The workspace whose `.weft/mcp.json` counts too (default: the current folder).
        #[arg(long)]
        workdir: Option<PathBuf>,
        /// Whether each is on for this session.
        #[arg(long, value_name = "KEY")]
        session: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Turn servers on for one session, from its next turn.
    Enable {
        /// The session.
        #[arg(long, value_name = "KEY")]
        session: String,
        /// The servers.
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// Turn servers off for one session, from its next turn.
    Disable {
        /// The session.
        #[arg(long, value_name = "KEY")]
        session: String,
        /// The servers.
        #[arg(required = true)]
        names: Vec<String>,
    },
    /// The secrets servers name as `${secret:NAME}` in their env or headers.
    Secret {
        #[command(subcommand)]
        command: SecretCommand,
    },
}

#[derive(Subcommand)]
pub(crate) enum SecretCommand {
    /// Keep a secret in the OS secret store, read from standard input.
    Set {
        /// Its name.
        name: String,
        /// Read the value from standard input (the only way: never an argument).
        #[arg(long, required = true)]
        stdin: bool,
    },
    /// Forget a secret.
    Remove {
        /// Its name.
        name: String,
    },
}

/// `NAME=on|off` (`weft run --mcp`).
pub(crate) fn parse_choice(s: &str) -> Result<(String, bool), String> {
    let (name, state) = s
        .split_once('=')
        .ok_or_else(|| format!("`{s}`: expected NAME=on or NAME=off"))?;
    let on = match state {
        "on" | "true" | "1" => true,
        "off" | "false" | "0" => false,
        other => return Err(format!("`{other}`: expected on or off")),
    };
    Ok((name.to_string(), on))
}

pub(crate) async fn run(command: McpCommand) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = match command {
        McpCommand::Import { dry_run, json } => {
            let args = crate::import::ImportArgs {
                servers: true,
                skills: false,
                dry_run,
                json,
            };
            return crate::import::run(&daemon, args).await;
        }
        McpCommand::List {
            workdir,
            session,
            json,
        } => {
            let workdir = match crate::absolute_workdir(workdir) {
                Ok(d) => d,
                Err(code) => return code,
            };
            let list = match daemon
                .send(verb::ListMcp {
                    workdir: Some(workdir),
                    session_key: session,
                })
                .await
            {
                Ok(l) => l,
                Err(code) => return code,
            };
            return if json {
                print_json(&list)
            } else {
                print_list(&list);
                ExitCode::SUCCESS
            };
        }
        McpCommand::Enable { session, names } => ClientRequest::SetMcpEnabled {
            session_key: session,
            servers: names.into_iter().map(|n| (n, true)).collect(),
        },
        McpCommand::Disable { session, names } => ClientRequest::SetMcpEnabled {
            session_key: session,
            servers: names.into_iter().map(|n| (n, false)).collect(),
        },
        McpCommand::Secret {
            command: SecretCommand::Set { name, .. },
        } => {
            let mut value = String::new();
            if let Err(e) = std::io::stdin().read_to_string(&mut value) {
                eprintln!("weft: reading the secret from standard input: {e}");
                return ExitCode::from(crate::EXIT_USAGE);
            }
            let trimmed = value.trim().to_string();
            value.clear();
            ClientRequest::SetMcpSecret {
                name,
                value: SecretText(trimmed),
            }
        }
        McpCommand::Secret {
            command: SecretCommand::Remove { name },
        } => ClientRequest::RemoveMcpSecret { name },
    };
    match daemon.run(request).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

/// What a server runs, as a line: its command and arguments, or its URL.
pub(crate) fn runs(command: Option<&str>, args: &[String], url: Option<&str>) -> String {
    match (command, url) {
        (Some(c), _) => std::iter::once(c)
            .chain(args.iter().map(String::as_str))
            .collect::<Vec<_>>()
            .join(" "),
        (None, Some(u)) => u.to_string(),
        _ => String::new(),
    }
}

fn print_list(list: &McpList) {
    if list.servers.is_empty() {
        out!("no MCP servers configured (add them to ~/.weft/mcp.json or .weft/mcp.json)");
    }
    for s in &list.servers {
        let what = runs(s.command.as_deref(), &s.args, s.url.as_deref());
        let state = if s.enabled { "on " } else { "off" };
        out!("{state} {:<16} {:<9} {what}", s.name, s.scope);
        out!("    {}", s.source);
        if !s.secrets.is_empty() {
            out!("    secrets: {}", s.secrets.join(", "));
        }
    }
    for p in &list.problems {
        eprintln!("weft: {p}");
    }
}
