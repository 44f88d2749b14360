//! `weft agents`, and JSON output for every command.

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
