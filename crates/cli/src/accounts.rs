//! `weft accounts`: several identities per agent. Records and secrets live with the
//! daemon (SQLite, the OS secret store); this is one more client of it.
//!
//! A secret is never taken as a command-line argument: `--secret-stdin` reads it from
//! standard input, `--secret-env NAME` and `--secret-command CMD` say where the daemon
//! finds it at each spawn.

use std::collections::BTreeMap;
use std::io::Read;
use std::process::ExitCode;

use clap::{Args, Subcommand};
use weft_protocol::verb;
use weft_protocol::{
    AccountInfo, AccountSwitch, AddAccountRequest, AutoSwitch, ClientRequest, SecretInput,
    SecretSource, SecretText,
};

use crate::client;
use crate::list::print_json;

#[derive(Subcommand)]
pub(crate) enum AccountsCommand {
    /// Every account (never a secret).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Add an account; prints its id.
    Add(AddArgs),
    /// Log in with the agent's own login, in this terminal, inside the account's home.
    Login {
        /// The account.
        id: String,
    },
    /// Check that an account can be used now (logged in, key taken by its endpoint).
    Test {
        /// The account.
        id: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Rename an account.
    Rename {
        /// The account.
        id: String,
        /// Its new label.
        label: String,
    },
    /// Remove an account and its secret (its home folder only with --delete-home).
    Remove {
        /// The account.
        id: String,
        /// Also delete the account's home folder (its login, its transcripts).
        #[arg(long)]
        delete_home: bool,
    },
    /// Move a session to another account from its next turn (`ambient`: the agent's
    /// own login); with --continue, run its last prompt again there (the one a used-up
    /// limit cut short). A switch the agent's own session cannot follow is explained
    /// first and needs a yes (asked here, or --yes): the session then goes on in a new
    /// agent session that starts from a handover of the transcript.
    Switch {
        /// The account to move to.
        id: String,
        /// The session (`agent:id`).
        #[arg(long, value_name = "KEY")]
        session: String,
        /// Run the session's last prompt again on the new account.
        #[arg(long = "continue")]
        resume: bool,
        /// Switch without asking, even where the agent's own session cannot follow.
        #[arg(long)]
        yes: bool,
        /// Print the outcome as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Whether a session moves to the next account of its agent with capacity by
    /// itself when its account's limit is used up (and runs the cut-short prompt again
    /// there). Off unless turned on; without on/off, shows the setting.
    AutoSwitch {
        /// The session (`agent:id`).
        #[arg(long, value_name = "KEY")]
        session: String,
        /// `on` or `off`.
        #[arg(value_parser = ["on", "off"])]
        state: Option<String>,
    },
    /// Tokens and cost per account per day.
    Usage {
        /// Only this account.
        id: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

#[derive(Args)]
pub(crate) struct AddArgs {
    /// The agent: claude, codex, gemini, native, or an ACP agent (hermes, kimi, …).
    #[arg(long)]
    agent: String,
    /// The kind: login, api-key, setup-token, gateway, endpoint, bedrock, vertex; env
    /// for an ACP agent; endpoint for native (with --base-url, --protocol, --model).
    #[arg(long)]
    kind: String,
    /// Its name.
    #[arg(long)]
    label: String,
    /// An endpoint (proxies, gateways, local servers).
    #[arg(long, value_name = "URL")]
    base_url: Option<String>,
    /// The endpoint's protocol: anthropic-messages, openai-responses, openai-chat, gemini.
    #[arg(long, value_name = "P")]
    protocol: Option<String>,
    /// A model the account offers (repeatable).
    #[arg(long = "model", value_name = "M")]
    models: Vec<String>,
    /// A public variable for its spawns, NAME=VALUE (repeatable; never a secret).
    #[arg(long = "env", value_name = "NAME=VALUE")]
    env: Vec<String>,
    /// Read the secret from standard input (kept in the OS secret store).
    #[arg(long, conflicts_with_all = ["secret_env", "secret_command"])]
    secret_stdin: bool,
    /// Take the secret from this variable of the daemon's environment at each spawn.
    #[arg(long, value_name = "NAME", conflicts_with = "secret_command")]
    secret_env: Option<String>,
    /// Take the secret from this command's output at each spawn.
    #[arg(long, value_name = "CMD")]
    secret_command: Option<String>,
    /// The variable an ACP agent's `env` account gives its secret in (e.g.
    /// KIMI_API_KEY).
    #[arg(long, value_name = "NAME")]
    secret_var: Option<String>,
}

pub(crate) async fn run(command: AccountsCommand) -> ExitCode {
    match command {
        AccountsCommand::List { json } => list(json).await,
        AccountsCommand::Add(args) => add(args).await,
        AccountsCommand::Login { id } => login(id).await,
        AccountsCommand::Test { id, json } => test(id, json).await,
        AccountsCommand::Rename { id, label } => {
            simple(ClientRequest::RenameAccount { account: id, label }).await
        }
        AccountsCommand::Remove { id, delete_home } => {
            simple(ClientRequest::RemoveAccount {
                account: id,
                delete_home,
            })
            .await
        }
        AccountsCommand::Usage { id, json } => usage(id, json).await,
        AccountsCommand::Switch {
            id,
            session,
            resume,
            yes,
            json,
        } => switch(id, session, resume, yes, json).await,
        AccountsCommand::AutoSwitch { session, state } => auto_switch(session, state).await,
    }
}

async fn simple(request: ClientRequest) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon.run(request).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}

async fn fetch_all() -> Result<Vec<AccountInfo>, ExitCode> {
    let daemon = client::connect().await?;
    daemon.send(verb::ListAccounts {}).await
}

fn secret_shown(s: &SecretSource) -> String {
    match s {
        SecretSource::None => "-".into(),
        SecretSource::Store => "secret store".into(),
        SecretSource::Env { name } => format!("${name}"),
        SecretSource::Command { .. } => "command".into(),
    }
}

fn limits_shown(a: &AccountInfo) -> String {
    a.limits
        .iter()
        .map(|l| match l.used_percent {
            Some(p) => format!("{} {p:.0}% {}", l.window, l.status),
            None => format!("{} {}", l.window, l.status),
        })
        .collect::<Vec<_>>()
        .join(", ")
}

async fn list(json: bool) -> ExitCode {
    let accounts = match fetch_all().await {
        Ok(a) => a,
        Err(code) => return code,
    };
    if json {
        return print_json(&accounts);
    }
    out!(
        "{:<18} {:<8} {:<12} {:<14} {}",
        "ambient",
        "*",
        "login",
        "-",
        "the agent's own login"
    );
    for a in &accounts {
        out!(
            "{:<18} {:<8} {:<12} {:<14} {}{}{}",
            a.id,
            a.agent,
            a.kind,
            secret_shown(&a.secret),
            a.label,
            a.base_url
                .as_deref()
                .map(|u| format!("  {u}"))
                .unwrap_or_default(),
            match limits_shown(a) {
                l if l.is_empty() => String::new(),
                l => format!("  [{l}]"),
            }
        );
    }
    ExitCode::SUCCESS
}

fn parse_env(pairs: &[String]) -> Result<BTreeMap<String, String>, String> {
    pairs
        .iter()
        .map(|p| {
            p.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .ok_or_else(|| format!("--env takes NAME=VALUE, not `{p}`"))
        })
        .collect()
}

async fn add(args: AddArgs) -> ExitCode {
    let env = match parse_env(&args.env) {
        Ok(e) => e,
        Err(e) => {
            eprintln!("weft: {e}");
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    let secret = if args.secret_stdin {
        let mut value = String::new();
        if let Err(e) = std::io::stdin().read_to_string(&mut value) {
            eprintln!("weft: reading the secret from standard input: {e}");
            return ExitCode::from(crate::EXIT_USAGE);
        }
        let trimmed = value.trim().to_string();
        zero(&mut value);
        Some(SecretInput::Value {
            value: SecretText(trimmed),
        })
    } else if let Some(name) = args.secret_env {
        Some(SecretInput::Env { name })
    } else {
        args.secret_command
            .map(|command| SecretInput::Command { command })
    };
    let request = AddAccountRequest {
        agent: args.agent,
        kind: args.kind,
        label: args.label,
        base_url: args.base_url,
        protocol: args.protocol,
        models: args.models,
        env,
        secret,
        secret_var: args.secret_var,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    match daemon.send(request).await {
        Ok(a) => {
            out!("{}", a.id);
            if a.kind == "login" {
                eprintln!(
                    "weft: log it in with `weft accounts login {}` (its home: {})",
                    a.id,
                    a.home_dir.as_deref().unwrap_or("-")
                );
            }
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// Overwrites a string's bytes before it is dropped.
fn zero(s: &mut String) {
    let n = s.len();
    s.clear();
    s.extend(std::iter::repeat_n('\0', n));
    s.clear();
}

async fn test(id: String, json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let result = match daemon.send(verb::TestAccount { account: id }).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    if json {
        let _ = print_json(&result);
    } else {
        out!("{}: {} — {}", result.id, result.status, result.detail);
    }
    if result.ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn usage(id: Option<String>, json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let days = match daemon.send(verb::AccountUsage { account: id }).await {
        Ok(d) => d,
        Err(code) => return code,
    };
    if json {
        return print_json(&days);
    }
    for d in &days {
        let cost = if d.unpriced_turns == d.turns {
            "unknown".to_string()
        } else if d.unpriced_turns > 0 {
            format!("${:.4} + unknown", d.cost_usd)
        } else {
            format!("${:.4}", d.cost_usd)
        };
        out!(
            "{} {:<18} turns {:>4}  in {:>9}  out {:>9}  cache {:>9}  {cost}",
            d.day,
            d.account,
            d.turns,
            d.input_tokens,
            d.output_tokens,
            d.cache_read_tokens
        );
    }
    ExitCode::SUCCESS
}

/// The agent's own login, run here with the account's home and the same cleared
/// environment its turns get.
async fn login(id: String) -> ExitCode {
    let accounts = match fetch_all().await {
        Ok(a) => a,
        Err(code) => return code,
    };
    let Some(account) = accounts.into_iter().find(|a| a.id == id) else {
        eprintln!("weft: unknown account `{id}` (`weft accounts list` shows them)");
        return ExitCode::from(crate::EXIT_USAGE);
    };
    let (Some(home), "login") = (account.home_dir.as_deref(), account.kind.as_str()) else {
        eprintln!(
            "weft: account `{id}` ({}) is a `{}` account; only login accounts log in",
            account.label, account.kind
        );
        return ExitCode::from(crate::EXIT_USAGE);
    };
    let specs = weft_drivers::specs();
    let Some(spec) = specs.iter().find(|s| s.id == account.agent) else {
        eprintln!("weft: no agent `{}` to log in with", account.agent);
        return ExitCode::FAILURE;
    };
    let login = match weft_agent_process::login::command(spec, &|n| std::env::var(n).ok()) {
        Ok(l) => l,
        Err(e) => {
            eprintln!("weft: {e}");
            return ExitCode::FAILURE;
        }
    };
    eprintln!(
        "weft: logging in {} account `{id}` ({}) in {home}",
        account.agent, account.label
    );
    let status = std::process::Command::new(login.program)
        .args(login.args)
        .env_clear()
        .envs(weft_kernel::isolated_env(std::env::vars()))
        .env(login.home_var, home)
        .status();
    match status {
        Ok(s) if s.success() => ExitCode::SUCCESS,
        Ok(s) => {
            eprintln!("weft: the login ended with {s}");
            ExitCode::FAILURE
        }
        Err(e) => {
            eprintln!("weft: cannot run the agent's login: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Asks on the terminal; anything but `y`/`yes` is a no.
fn confirmed(question: &str) -> bool {
    use std::io::{BufRead, Write};
    eprint!("{question} [y/N] ");
    let _ = std::io::stderr().flush();
    let mut line = String::new();
    if std::io::stdin().lock().read_line(&mut line).is_err() {
        return false;
    }
    matches!(line.trim().to_ascii_lowercase().as_str(), "y" | "yes")
}

/// Before a prompt that moves `session` to `account`: a switch the agent's own session
/// cannot follow is explained, then made once the user says yes (asked on a terminal,
/// or `--yes`). Nothing changes when they do not.
pub(crate) async fn confirm_switch(
    daemon: &client::Daemon,
    session: &str,
    account: &str,
    yes: bool,
    interactive: bool,
) -> Result<(), ExitCode> {
    let plan: AccountSwitch = daemon
        .send(verb::CheckAccountSwitch {
            session_key: session.to_string(),
            account: account.to_string(),
        })
        .await?;
    let Some(warning) = &plan.warning else {
        return Ok(());
    };
    eprintln!("weft: {warning}");
    if !yes {
        if !interactive {
            eprintln!("weft: nothing was changed; pass --yes to switch anyway");
            return Err(ExitCode::from(crate::EXIT_USAGE));
        }
        if !confirmed("Switch and continue from a handover?") {
            eprintln!("weft: nothing was changed");
            return Err(ExitCode::FAILURE);
        }
    }
    daemon
        .send(verb::SwitchAccount {
            session_key: session.to_string(),
            account: account.to_string(),
            resume: false,
            confirm: true,
        })
        .await?;
    Ok(())
}

async fn switch(id: String, session: String, resume: bool, yes: bool, json: bool) -> ExitCode {
    use std::io::IsTerminal;
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let ask = |confirm| verb::SwitchAccount {
        session_key: session.clone(),
        account: id.clone(),
        resume,
        confirm,
    };
    let mut outcome = match daemon.send(ask(yes)).await {
        Ok(o) => o,
        Err(code) => return code,
    };
    if !outcome.switched {
        if let Some(w) = &outcome.warning {
            eprintln!("weft: {w}");
        }
        if !std::io::stdin().is_terminal() {
            eprintln!("weft: nothing was changed; pass --yes to switch anyway");
            return ExitCode::from(crate::EXIT_USAGE);
        }
        if !confirmed("Switch and continue from a handover?") {
            eprintln!("weft: nothing was changed");
            return ExitCode::FAILURE;
        }
        outcome = match daemon.send(ask(true)).await {
            Ok(o) => o,
            Err(code) => return code,
        };
    }
    if json {
        return print_json(&outcome);
    }
    let to = outcome.to.as_deref().unwrap_or("ambient");
    match (&outcome.task_id, outcome.handover) {
        (Some(task), true) => out!(
            "{session} is on {to}; its last prompt runs again as {task} in a new agent session started from a handover (`weft wait {session}` follows it)"
        ),
        (Some(task), false) => out!(
            "{session} is on {to}; its last prompt runs again as {task} (`weft wait {session}` follows it)"
        ),
        (None, true) => out!(
            "{session} is on {to} from its next turn, in a new agent session started from a handover"
        ),
        (None, false) => out!("{session} is on {to} from its next turn"),
    }
    ExitCode::SUCCESS
}

/// Turns a session's auto-switch on or off (`None`: shows it).
pub(crate) async fn set_auto_switch(
    daemon: &client::Daemon,
    session: &str,
    enabled: bool,
) -> Result<AutoSwitch, ExitCode> {
    daemon
        .send(verb::SetAutoSwitch {
            session_key: session.to_string(),
            enabled,
        })
        .await
}

async fn auto_switch(session: String, state: Option<String>) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let result = match state.as_deref() {
        Some(s) => set_auto_switch(&daemon, &session, s == "on").await,
        None => {
            daemon
                .send(verb::GetAutoSwitch {
                    session_key: session.clone(),
                })
                .await
        }
    };
    match result {
        Ok(a) => {
            out!(
                "auto-switch for {}: {}",
                a.session_key,
                if a.enabled { "on" } else { "off" }
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}
