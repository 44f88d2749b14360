//! `weft sessions`, `weft history`, `weft search`, `weft agents`.

use std::process::ExitCode;

use serde::Serialize;
use weft_kernel::now_ms;
use weft_protocol::{AgentInfo, ClientRequest, SearchHit, SessionInfo, UniversalSnapshot};

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

fn age(ms: i64) -> String {
    let secs = (now_ms() - ms).max(0) / 1000;
    match secs {
        0..=59 => format!("{secs}s ago"),
        60..=3599 => format!("{}m ago", secs / 60),
        3600..=86_399 => format!("{}h ago", secs / 3600),
        _ => format!("{}d ago", secs / 86_400),
    }
}

pub(crate) async fn sessions(workdir: Option<String>, json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let list: Vec<SessionInfo> = match daemon.call(ClientRequest::ListSessions { workdir }).await {
        Ok(list) => list,
        Err(code) => return code,
    };
    if json {
        return print_json(&list);
    }
    if list.is_empty() {
        eprintln!("no sessions yet: `weft run \"hello\"` starts one");
    }
    for s in &list {
        out!(
            "{:<9} {:<50} {:<8} {}  ({})",
            age(s.updated_at),
            s.session_key,
            s.agent,
            s.title,
            s.workdir
        );
    }
    ExitCode::SUCCESS
}

pub(crate) async fn search(query: &str, limit: usize, json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = ClientRequest::Search {
        query: query.to_string(),
        limit: Some(u32::try_from(limit).unwrap_or(u32::MAX)),
    };
    let hits: Vec<SearchHit> = match daemon.call(request).await {
        Ok(hits) => hits,
        Err(code) => return code,
    };
    if json {
        return print_json(&hits);
    }
    if hits.is_empty() {
        eprintln!("no past turn matches `{query}`");
    }
    for hit in &hits {
        out!("{}  {}", hit.session_key, hit.snippet.replace('\n', " "));
    }
    ExitCode::SUCCESS
}

pub(crate) async fn history(key: &str, json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = ClientRequest::GetHistory {
        session_key: key.to_string(),
        limit: None,
        before: None,
    };
    let turns: Vec<UniversalSnapshot> = match daemon.call(request).await {
        Ok(turns) => turns,
        Err(code) => return code,
    };
    if json {
        return print_json(&turns);
    }
    for (i, turn) in turns.iter().enumerate() {
        let mark = match (&turn.error, turn.incomplete) {
            (Some(e), _) => format!("  [failed: {e}]"),
            (None, true) => "  [incomplete]".to_string(),
            _ => String::new(),
        };
        out!(
            "── turn {} ({}){mark}",
            i + 1,
            turn.started_at.map(age).unwrap_or_default()
        );
        out!("> {}", turn.prompt);
        out!("{}\n", turn.text.trim_end());
    }
    ExitCode::SUCCESS
}

pub(crate) async fn agents(json: bool) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let agents: Vec<AgentInfo> = match daemon.call(ClientRequest::ListAgentInfo {}).await {
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
