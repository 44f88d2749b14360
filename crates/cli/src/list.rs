//! `weft sessions`, `weft history`, `weft search`, `weft agents`.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use serde::Serialize;
use weft_kernel::{now_ms, Loom, LoomIO};

fn print_json<T: Serialize>(value: &T) -> ExitCode {
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

pub(crate) async fn sessions(loom: &Arc<Loom>, workdir: Option<PathBuf>, json: bool) -> ExitCode {
    let workdir = workdir.map(|p| p.to_string_lossy().into_owned());
    let list = match loom.list_sessions(workdir.as_deref()).await {
        Ok(list) => list,
        Err(e) => {
            eprintln!("weft: {e}");
            return crate::exit_for(&e);
        }
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

pub(crate) async fn search(loom: &Arc<Loom>, query: &str, limit: usize, json: bool) -> ExitCode {
    let hits = match loom.search(query, limit).await {
        Ok(hits) => hits,
        Err(e) => {
            eprintln!("weft: {e}");
            return crate::exit_for(&e);
        }
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

pub(crate) async fn history(loom: &Arc<Loom>, key: &str, json: bool) -> ExitCode {
    let turns = match loom.get_history(key).await {
        Ok(turns) => turns,
        Err(e) => {
            eprintln!("weft: {e}");
            return crate::exit_for(&e);
        }
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

pub(crate) async fn agents(loom: &Arc<Loom>, json: bool) -> ExitCode {
    let agents = loom.list_agent_info().await;
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
