//! Following codex's own UI: while a session's terminal is open, its rollout file
//! (`$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, see
//! [`crate::native_sessions`]) is tailed and the items codex records there become events.
//!
//! The rollout's `event_msg`/`item_completed` records carry codex's own items
//! (`UserMessage`, `AgentMessage`, `CommandExecution`, …, the core protocol's names, not
//! the app-server's), so they get a small mapper of their own ([`RolloutRecords`])
//! rather than the app-server normalizer. Hazards:
//! - A new session's id is not known up front (codex takes none from outside): the
//!   newest day folder is scanned for a rollout that appeared after the terminal opened
//!   and whose `session_meta` names the session's folder; its id is reported as a
//!   `Session` event so the kernel records it and the structured rail resumes it.
//! - A resumed session appends to its existing rollout: reading starts at its end.
//! - Polling only (every [`POLL`]): codex writes a handful of records per turn.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::time::{Duration, SystemTime};

use serde_json::{json, Value};
use weft_agent_process::FileTail;
use weft_kernel::driver::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{DriverEvent, ToolCall, ToolKind, ToolStatus, Usage};

use crate::items::{capped, first_line};

/// How often the rollout is read.
pub const POLL: Duration = Duration::from_millis(250);
/// A rollout created this long before the terminal opened still counts as its own.
const CREATED_SLACK: Duration = Duration::from_secs(2);

/// `CODEX_HOME` as `input`'s agent sees it, else its `HOME`'s `.codex`.
/// `AgentTurnInput::default()` stands for the kernel's own environment.
pub fn codex_home(input: &AgentTurnInput) -> Option<PathBuf> {
    let get = |name: &str| input.var(name).filter(|v| !v.is_empty());
    get("CODEX_HOME")
        .map(PathBuf::from)
        .or_else(|| get("HOME").map(|h| Path::new(&h).join(".codex")))
}

/// Rollout records → [`DriverEvent`]s, with no I/O.
#[derive(Debug, Default)]
pub struct RolloutRecords {
    session_id: Option<String>,
    model: Option<String>,
    text_emitted: bool,
}

impl RolloutRecords {
    /// A reader for thread `session_id`, when known.
    pub fn new(session_id: Option<String>) -> Self {
        Self {
            session_id,
            ..Default::default()
        }
    }

    /// Folds one record in.
    pub fn record(&mut self, rec: &Value, out: &mut Vec<DriverEvent>) {
        let p = &rec["payload"];
        match rec["type"].as_str().unwrap_or_default() {
            "session_meta" => {
                if let Some(id) = p["id"].as_str() {
                    if self.session_id.as_deref() != Some(id) {
                        self.session_id = Some(id.to_string());
                        out.push(DriverEvent::Session {
                            session_id: id.to_string(),
                            model: self.model.clone(),
                        });
                    }
                }
            }
            "turn_context" => {
                let model = p["model"].as_str().map(str::to_owned);
                if model.is_some() && model != self.model {
                    self.model = model.clone();
                    if let Some(id) = &self.session_id {
                        out.push(DriverEvent::Session {
                            session_id: id.clone(),
                            model,
                        });
                    }
                }
            }
            "event_msg" => match p["type"].as_str().unwrap_or_default() {
                "item_started" => self.item(&p["item"], false, out),
                "item_completed" => self.item(&p["item"], true, out),
                "token_count" => {
                    let t = &p["info"]["total_token_usage"];
                    if t.is_object() {
                        let last = &p["info"]["last_token_usage"];
                        let window = p["info"]["model_context_window"].as_u64();
                        let used = last["input_tokens"]
                            .as_u64()
                            .map(|i| i + last["output_tokens"].as_u64().unwrap_or(0));
                        out.push(DriverEvent::Usage {
                            usage: Usage {
                                input_tokens: t["input_tokens"].as_u64(),
                                output_tokens: t["output_tokens"].as_u64(),
                                cached_input_tokens: t["cached_input_tokens"].as_u64(),
                                context_used_tokens: used,
                                context_percent: match (used, window) {
                                    (Some(u), Some(w)) if w > 0 => {
                                        Some(((u as f64) * 10_000.0 / w as f64).round() / 100.0)
                                    }
                                    _ => None,
                                },
                                ..Default::default()
                            },
                        });
                    }
                }
                _ => {}
            },
            _ => {}
        }
    }

    fn item(&mut self, item: &Value, done: bool, out: &mut Vec<DriverEvent>) {
        let id = item["id"].as_str().unwrap_or_default().to_string();
        match item["type"].as_str().unwrap_or_default() {
            "UserMessage" if done => {
                let text = parts_text(&item["content"]);
                let t = text.trim();
                if !t.is_empty() && !t.starts_with('<') {
                    out.push(DriverEvent::Notice {
                        text: format!("typed in the terminal: {}", first_line(t, 200)),
                    });
                }
            }
            "AgentMessage" if done => {
                let text = parts_text(&item["content"]);
                if text.is_empty() {
                    return;
                }
                if self.text_emitted {
                    out.push(DriverEvent::Text {
                        delta: "\n\n".into(),
                    });
                }
                self.text_emitted = true;
                out.push(DriverEvent::Text { delta: text });
            }
            "Reasoning" if done => {
                let text: Vec<&str> = item["summary_text"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(Value::as_str)
                    .collect();
                if !text.is_empty() {
                    out.push(DriverEvent::Reasoning {
                        delta: text.join("\n"),
                    });
                }
            }
            "CommandExecution" => {
                let command = item["parsed_cmd"][0]["cmd"]
                    .as_str()
                    .map(str::to_owned)
                    .or_else(|| {
                        item["command"]
                            .as_array()
                            .and_then(|a| a.last())
                            .and_then(Value::as_str)
                            .map(str::to_owned)
                    })
                    .unwrap_or_default();
                let failed = item["exit_code"].as_i64().is_some_and(|c| c != 0)
                    || matches!(item["status"].as_str(), Some("failed" | "declined"));
                out.push(DriverEvent::Tool {
                    call: ToolCall {
                        id,
                        name: "command_execution".into(),
                        summary: format!("$ {}", first_line(&command, 80)),
                        input: json!({"command": command, "cwd": item["cwd"]}),
                        result: done.then(|| {
                            capped(
                                item["aggregated_output"]
                                    .as_str()
                                    .unwrap_or_default()
                                    .trim_end(),
                            )
                        }),
                        status: match (done, failed) {
                            (false, _) => ToolStatus::Running,
                            (true, false) => ToolStatus::Done,
                            (true, true) => ToolStatus::Failed,
                        },
                        kind: ToolKind::Shell,
                        parent_id: None,
                        changes: Vec::new(),
                    },
                });
            }
            _ => {}
        }
    }
}

fn parts_text(content: &Value) -> String {
    content
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|p| p["text"].as_str())
        .collect::<Vec<_>>()
        .join("")
}

/// The rollout of thread `id` under `home`, if there is one.
fn rollout_of(home: &Path, id: &str) -> Option<PathBuf> {
    let suffix = format!("-{id}.jsonl");
    let mut found = None;
    walk(&home.join("sessions"), 0, &mut |p| {
        if p.file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(&suffix))
        {
            found = Some(p.to_path_buf());
        }
    });
    found
}

fn walk(dir: &Path, depth: usize, f: &mut dyn FnMut(&Path)) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        match e.file_type() {
            Ok(t) if t.is_dir() && depth < 3 => walk(&p, depth + 1, f),
            Ok(t) if t.is_file() => f(&p),
            _ => {}
        }
    }
}

/// The newest `YYYY/MM/DD` folder under `sessions`.
fn newest_day(sessions: &Path) -> Option<PathBuf> {
    let mut dir = sessions.to_path_buf();
    for _ in 0..3 {
        let newest = std::fs::read_dir(&dir)
            .ok()?
            .flatten()
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| e.file_name())
            .max()?;
        dir = dir.join(newest);
    }
    Some(dir)
}

/// A rollout in the newest day folder, created since `since`, for `workdir`, and not
/// one of `skip`.
fn new_rollout(
    home: &Path,
    workdir: &Path,
    fork_of: Option<&str>,
    since: SystemTime,
    skip: &mut Vec<PathBuf>,
) -> Option<PathBuf> {
    let day = newest_day(&home.join("sessions"))?;
    let entries = std::fs::read_dir(day).ok()?;
    for e in entries.flatten() {
        let p = e.path();
        if skip.contains(&p) || p.extension().is_none_or(|x| x != "jsonl") {
            continue;
        }
        let fresh = e
            .metadata()
            .and_then(|m| m.modified())
            .is_ok_and(|m| m + CREATED_SLACK >= since);
        if !fresh {
            continue;
        }
        let Ok(file) = std::fs::File::open(&p) else {
            continue;
        };
        let mut first = String::new();
        if BufReader::new(file).read_line(&mut first).is_err() || !first.ends_with('\n') {
            continue; // Not written yet: looked at again next tick.
        }
        let meta: Value = serde_json::from_str(&first).unwrap_or(Value::Null);
        let cwd = meta["payload"]["cwd"].as_str().map(Path::new);
        let created = e.metadata().and_then(|m| m.created()).ok();
        let old = created.is_some_and(|c| c + CREATED_SLACK < since);
        // Only the terminal's own thread: the TUI's rollouts say `source: "cli"` (the
        // structured rail's app-server threads another), and a fork's names its parent
        // (`forked_from_id`) — the parent's own rollout, in the same folder and perhaps
        // written a moment ago, would otherwise be taken for the fork's.
        let payload = &meta["payload"];
        let from_terminal = payload["source"].as_str().is_none_or(|s| s == "cli");
        let forked_from = payload["forked_from_id"].as_str();
        let same_origin = fork_of.is_none_or(|parent| forked_from == Some(parent));
        if meta["type"] == "session_meta"
            && cwd == Some(workdir)
            && !old
            && from_terminal
            && same_origin
        {
            return Some(p);
        }
        skip.push(p);
    }
    None
}

/// Tails the session's rollout until `ctx` is cancelled, emitting what the terminal
/// adds to it.
pub async fn follow(input: &AgentTurnInput, ctx: &DriverContext) -> DriverResult {
    let opened = SystemTime::now();
    let Some(home) = codex_home(input) else {
        ctx.cancelled().await;
        return DriverResult::ok();
    };
    let mut records = RolloutRecords::new(input.session_id.clone());
    // A resumed thread's earlier records are history: start at the end.
    let mut tail = input
        .session_id
        .as_deref()
        .and_then(|id| rollout_of(&home, id))
        .map(FileTail::from_end);
    let mut skip = Vec::new();
    loop {
        if tail.is_none() {
            tail = match &input.session_id {
                Some(id) => rollout_of(&home, id),
                None => new_rollout(
                    &home,
                    &input.workdir,
                    crate::tui::forks_from(input),
                    opened,
                    &mut skip,
                ),
            }
            .map(FileTail::from_start);
        }
        if let Some(t) = tail.as_mut() {
            drain(t, &mut records, ctx);
        }
        tokio::select! {
            _ = ctx.cancelled() => break,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
    if let Some(t) = tail.as_mut() {
        drain(t, &mut records, ctx);
    }
    DriverResult {
        ok: true,
        session_id: records.session_id,
        ..Default::default()
    }
}

fn drain(tail: &mut FileTail, records: &mut RolloutRecords, ctx: &DriverContext) {
    loop {
        let recs: Vec<Value> = tail
            .read()
            .iter()
            .filter_map(|l| serde_json::from_slice(l).ok())
            .collect();
        if recs.is_empty() {
            return;
        }
        let mut out = Vec::new();
        for r in &recs {
            records.record(r, &mut out);
        }
        for e in out {
            ctx.emit(e);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_rollout_becomes_a_transcript() {
        let text = include_str!("../tests/fixtures/rollout_file_example.jsonl");
        let mut r = RolloutRecords::new(None);
        let mut out = Vec::new();
        for line in text.lines() {
            let v: Value = serde_json::from_str(line).unwrap_or(Value::Null);
            r.record(&v, &mut out);
        }
        let mut acc = weft_protocol::Accumulator::new(Default::default());
        for e in &out {
            acc.apply(e, 0);
        }
        let snap = acc.snapshot();
        assert_eq!(
            snap.session_id.as_deref(),
            Some("01a22a6b-1a33-73c2-8da3-697eac086135")
        );
        assert_eq!(snap.model.as_deref(), Some("mock-model"));
        assert!(
            snap.text.starts_with("MOCK-REPLY: tool said"),
            "{}",
            snap.text
        );
        assert!(
            snap.text.ends_with("MOCK-REPLY: done (call 4) "),
            "{}",
            snap.text
        );
        let call = &snap.tool_calls[0];
        assert_eq!(call.summary, "$ echo hi-from-codex-tool");
        assert_eq!(call.status, ToolStatus::Done);
        assert_eq!(call.result.as_deref(), Some("hi-from-codex-tool"));
        assert!(snap
            .notices
            .contains(&"typed in the terminal: USE_TOOL please".to_string()));
        assert!(snap
            .usage
            .as_ref()
            .is_some_and(|u| u.output_tokens.is_some()));
    }

    #[test]
    fn a_new_rollout_is_found_for_its_folder_only() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let day = home.join("sessions/2026/11/30");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::create_dir_all(home.join("sessions/2026/11/29")).unwrap();
        let meta = |cwd: &str, id: &str| {
            format!(
                "{}\n",
                json!({"type": "session_meta", "payload": {"id": id, "cwd": cwd}})
            )
        };
        let since = SystemTime::now() - Duration::from_secs(1);
        let mut skip = Vec::new();
        assert_eq!(
            new_rollout(home, Path::new("/w"), None, since, &mut skip),
            None
        );
        std::fs::write(
            day.join("rollout-a-other.jsonl"),
            meta("/elsewhere", "other"),
        )
        .unwrap();
        std::fs::write(day.join("rollout-b-half.jsonl"), "{\"type\":\"session_me").unwrap();
        assert_eq!(
            new_rollout(home, Path::new("/w"), None, since, &mut skip),
            None
        );
        std::fs::write(day.join("rollout-c-mine.jsonl"), meta("/w", "mine")).unwrap();
        assert_eq!(
            new_rollout(home, Path::new("/w"), None, since, &mut skip),
            Some(day.join("rollout-c-mine.jsonl"))
        );
        assert_eq!(
            rollout_of(home, "mine"),
            Some(day.join("rollout-c-mine.jsonl"))
        );
    }

    #[test]
    fn a_forks_terminal_takes_the_rollout_forked_from_its_parent_only() {
        let tmp = tempfile::tempdir().unwrap();
        let home = tmp.path();
        let day = home.join("sessions/2026/12/01");
        std::fs::create_dir_all(&day).unwrap();
        let since = SystemTime::now() - Duration::from_secs(1);
        let write = |name: &str, payload: Value| {
            let line = json!({"type": "session_meta", "payload": payload});
            std::fs::write(day.join(name), format!("{line}\n")).unwrap();
        };
        // The parent, just run by the structured rail in the same folder.
        write(
            "rollout-a-parent.jsonl",
            json!({"id": "parent", "cwd": "/w", "source": "vscode"}),
        );
        let mut skip = Vec::new();
        assert_eq!(
            new_rollout(home, Path::new("/w"), Some("parent"), since, &mut skip),
            None
        );
        let mut skip = Vec::new();
        assert_eq!(
            new_rollout(home, Path::new("/w"), None, since, &mut skip),
            None
        );
        write(
            "rollout-b-fork.jsonl",
            json!({"id": "fork", "cwd": "/w", "source": "cli", "forked_from_id": "parent"}),
        );
        let mut skip = Vec::new();
        assert_eq!(
            new_rollout(home, Path::new("/w"), Some("parent"), since, &mut skip),
            Some(day.join("rollout-b-fork.jsonl"))
        );
        let mut skip = Vec::new();
        assert_eq!(
            new_rollout(home, Path::new("/w"), Some("another"), since, &mut skip),
            None
        );
    }
}
