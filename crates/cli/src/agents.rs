//! `weft agents install NAME`: the version of an npm-distributed agent CLI Weft is
//! tested with, installed into a folder Weft owns (`$WEFT_HOME/agents`) with the
//! system's own npm — never the user's global install. The drivers look there before
//! `PATH` (`weft_agent_process::find_agent`).

use std::process::{Command, ExitCode};

use weft_agent_process::install::{self, installable};

pub(crate) async fn install(name: &str, version: Option<String>) -> ExitCode {
    // `--host`: the host's own weft installs there, for its daemon.
    if let Some(host) = crate::client::host() {
        let mut args = vec!["agents", "install", name];
        if let Some(v) = version.as_deref() {
            args.extend(["--version", v]);
        }
        return crate::hosts::run_there(host, &args).await;
    }
    let agent = match installable(&weft_drivers::specs(), name) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("weft: {e}");
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    if let Some(Err(e)) = version.as_deref().map(install::check_version) {
        eprintln!("weft: {e}");
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let var = |n: &str| std::env::var(n).ok();
    let Some(dir) = weft_agent_process::installed_agents_dir(&var) else {
        eprintln!("weft: neither WEFT_HOME nor HOME is set: no folder to install into");
        return ExitCode::FAILURE;
    };
    let Ok(npm) = weft_agent_process::find_agent("npm", &["WEFT_NPM_BIN"], &var) else {
        eprintln!(
            "weft: npm is not installed (it comes with Node.js: e.g. `sudo apt-get install \
             nodejs npm`); Weft installs {name} with the system's npm"
        );
        return ExitCode::FAILURE;
    };
    if let Err(e) = install::prepare(&dir) {
        eprintln!("weft: cannot prepare {}: {e}", dir.display());
        return ExitCode::FAILURE;
    }
    let args = agent.npm_args(&dir, version.as_deref());
    eprintln!(
        "weft: installing {} into {} (npm's progress follows)",
        args.last().map_or("", String::as_str),
        dir.display()
    );
    match Command::new(&npm).args(&args).status() {
        Ok(s) if s.success() => {}
        Ok(s) => {
            eprintln!(
                "weft: npm install failed ({s}); nothing of the user's own installs was touched"
            );
            return ExitCode::FAILURE;
        }
        Err(e) => {
            eprintln!("weft: cannot run {}: {e}", npm.display());
            return ExitCode::FAILURE;
        }
    }
    match agent.finish(&dir) {
        Ok(bin) => {
            out!("{}", bin.display());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("weft: {e}");
            ExitCode::FAILURE
        }
    }
}

/// `weft agents` subcommands.
#[derive(clap::Subcommand)]
pub(crate) enum AgentsCommand {
    /// Install (or update to) the version Weft is tested with, into $WEFT_HOME/agents;
    /// prints the installed binary.
    Install {
        /// claude, codex, gemini or claude-agent-acp.
        name: String,
        /// Another version than the tested one.
        #[arg(long)]
        version: Option<String>,
    },
    /// Start an agent's process now, ahead of the prompt that will use it (the warm
    /// pool; the app does this when an agent is chosen or a session is opened): for a
    /// new session in a folder, or for a session whose process was closed.
    Warm {
        /// The agent of the new session (default: the daemon's default agent).
        agent: Option<String>,
        /// The new session's folder (default: the current folder).
        #[arg(long)]
        workdir: Option<std::path::PathBuf>,
        /// Get this session's process ready instead.
        #[arg(long, value_name = "KEY", conflicts_with_all = ["agent", "workdir"])]
        session: Option<String>,
        /// The model the prompt will ask for.
        #[arg(long)]
        model: Option<String>,
        /// The account the prompt will run on.
        #[arg(long)]
        account: Option<String>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// `weft agents warm`.
pub(crate) async fn warm(command: AgentsCommand) -> ExitCode {
    let AgentsCommand::Warm {
        agent,
        workdir,
        session,
        model,
        account,
        json,
    } = command
    else {
        return ExitCode::from(crate::EXIT_USAGE);
    };
    let workdir = match session {
        Some(_) => None,
        None => match crate::absolute_workdir(workdir) {
            Ok(d) => Some(d),
            Err(code) => return code,
        },
    };
    let daemon = match crate::client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = weft_protocol::PrewarmRequest {
        session_key: session,
        agent,
        workdir,
        model,
        account,
        ..Default::default()
    };
    let reply = match daemon.send(request).await {
        Ok(r) => r,
        Err(code) => return code,
    };
    if json {
        return crate::list::print_json(&reply);
    }
    match (reply.pid, reply.reason) {
        (Some(pid), _) => out!("started ahead: pid {pid}"),
        (None, Some(why)) => out!("nothing started: {why}"),
        (None, None) => out!("nothing started"),
    }
    ExitCode::SUCCESS
}
