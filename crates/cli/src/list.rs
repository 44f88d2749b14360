//! `weft agents`, `weft tools`, and JSON output for every command.

use std::process::ExitCode;

use serde::Serialize;
use weft_protocol::verb;

use crate::client;

pub(crate) fn print_json<T: Serialize>(value: &T) -> ExitCode {
    match serde_json::to_string_pretty(value) {
        Ok(text) => {
            out!("{text}");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("weft: {e}");
            ExitCode::FAILURE
        }
    }
}

pub(crate) async fn agents(json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let agents = match daemon.send(verb::ListAgentInfo {}).await {
        Ok(a) => a,
        Err(code) => return code,
    };
    if json {
        return print_json(&agents);
    }
    for a in &agents {
        let caps = a.capabilities;
        let flags: Vec<&str> = [
            (caps.steer, "steer"),
            (caps.interact, "interact"),
            (caps.resume, "resume"),
            (caps.tui, "tui"),
        ]
        .into_iter()
        .filter_map(|(on, name)| on.then_some(name))
        .collect();
        let state = if a.installed { "installed" } else { "missing" };
        out!(
            "{:<12} {:<10} {:<12} {}{}",
            a.id,
            state,
            a.version.as_deref().unwrap_or("-"),
            flags.join(","),
            a.problem
                .as_deref()
                .map(|p| format!("  ({p})"))
                .unwrap_or_default()
        );
    }
    ExitCode::SUCCESS
}

/// `weft tools`.
#[derive(clap::Args)]
pub(crate) struct ToolsArgs {
    /// The agent whose tools to list.
    #[arg(long)]
    agent: Option<String>,
    /// The folder it would work in (default: the current folder).
    #[arg(long)]
    workdir: Option<std::path::PathBuf>,
    /// Print JSON.
    #[arg(long)]
    json: bool,
}

/// `weft tools [--agent A] [--workdir D] [--json]`: one tool a line, its MCP server
/// (if any) and what it does.
pub(crate) async fn tools(args: ToolsArgs) -> ExitCode {
    let workdir = match args.agent {
        Some(_) => match crate::absolute_workdir(args.workdir) {
            Ok(w) => Some(w),
            Err(code) => return code,
        },
        None => None,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let tools = match daemon
        .send(verb::ListTools {
            agent: args.agent,
            workdir,
        })
        .await
    {
        Ok(t) => t,
        Err(code) => return code,
    };
    if args.json {
        return print_json(&tools);
    }
    for t in &tools {
        let server = t
            .server
            .as_deref()
            .map(|s| format!("[{s}] "))
            .unwrap_or_default();
        let about = t.description.lines().next().unwrap_or_default();
        out!("{:<28} {server}{about}", t.name);
    }
    ExitCode::SUCCESS
}
