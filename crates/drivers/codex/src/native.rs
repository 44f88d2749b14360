//! codex's own sessions on disk: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread
//! id>.jsonl` (`CODEX_HOME` defaults to `~/.codex`).
//!
//! Each line is `{timestamp, type, payload}`; the first is `session_meta` (the thread
//! id and its folder), conversation items are `response_item`s. The title is the first
//! user message that is the user's own (codex also files its environment context and
//! AGENTS.md instructions as user messages).

use std::fs;
use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::UNIX_EPOCH;

use serde_json::Value;
use weft_protocol::NativeSessionInfo;

const TITLE_CHARS: usize = 80;

/// `$CODEX_HOME`, else `~/.codex`.
pub fn codex_home() -> Option<PathBuf> {
    if let Some(h) = std::env::var_os("CODEX_HOME").filter(|h| !h.is_empty()) {
        return Some(PathBuf::from(h));
    }
    std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".codex"))
}

fn rollouts(dir: &Path, out: &mut Vec<PathBuf>, depth: usize) {
    let Ok(entries) = fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth < 4 {
            rollouts(&path, out, depth + 1);
        } else if kind.is_file() {
            let name = entry.file_name();
            let name = name.to_string_lossy();
            if name.starts_with("rollout-") && name.ends_with(".jsonl") {
                out.push(path);
            }
        }
    }
}

fn is_users_own(text: &str) -> bool {
    let t = text.trim_start();
    !(t.is_empty()
        || t.starts_with("<environment_context>")
        || t.starts_with("<user_instructions>")
        || t.starts_with("# AGENTS.md instructions")
        || t.starts_with("<turn_aborted>"))
}

fn message_text(payload: &Value) -> String {
    payload["content"]
        .as_array()
        .map(|parts| {
            parts
                .iter()
                .filter_map(|p| p["text"].as_str())
                .collect::<Vec<_>>()
                .join("\n")
        })
        .unwrap_or_default()
}

fn title_of(text: &str) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() > TITLE_CHARS {
        let cut: String = line.chars().take(TITLE_CHARS).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// Reads one rollout file's summary.
pub fn read_rollout(path: &Path) -> Option<NativeSessionInfo> {
    let file = fs::File::open(path).ok()?;
    let updated_at = file
        .metadata()
        .and_then(|m| m.modified())
        .ok()
        .and_then(|t| t.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_millis() as i64);
    let mut id = None;
    let mut workdir = None;
    let mut title = String::new();
    let mut count = 0u32;
    for line in BufReader::new(file).lines() {
        let Ok(line) = line else { break };
        if id.is_some() && !line.contains("\"response_item\"") {
            continue;
        }
        let Ok(v) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let payload = &v["payload"];
        match v["type"].as_str() {
            Some("session_meta") if id.is_none() => {
                id = payload["id"].as_str().map(String::from);
                workdir = payload["cwd"].as_str().map(String::from);
            }
            Some("response_item") if payload["type"] == "message" => match payload["role"].as_str()
            {
                Some("user") => {
                    let text = message_text(payload);
                    if is_users_own(&text) {
                        count += 1;
                        if title.is_empty() {
                            title = title_of(&text);
                        }
                    }
                }
                Some("assistant") => count += 1,
                _ => {}
            },
            _ => {}
        }
    }
    Some(NativeSessionInfo {
        id: id?,
        workdir,
        title,
        updated_at,
        message_count: count,
    })
}

/// Every session under `codex_home`, newest first; only those run in `workdir` when
/// given.
pub fn list_native(codex_home: &Path, workdir: Option<&Path>) -> Vec<NativeSessionInfo> {
    let mut files = Vec::new();
    rollouts(&codex_home.join("sessions"), &mut files, 0);
    let want = workdir.map(|w| fs::canonicalize(w).unwrap_or_else(|_| w.to_path_buf()));
    let mut out: Vec<NativeSessionInfo> = files
        .iter()
        .filter_map(|f| read_rollout(f))
        .filter(|s| match (&want, &s.workdir) {
            (None, _) => true,
            (Some(w), Some(d)) => Path::new(d) == w.as_path(),
            (Some(_), None) => false,
        })
        .collect();
    out.sort_by_key(|s| std::cmp::Reverse(s.updated_at));
    out
}
