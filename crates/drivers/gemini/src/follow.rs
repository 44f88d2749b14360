//! Following the Gemini CLI's own UI: while a session's terminal is open, its chat file
//! (see [`crate::sessions`]) is polled and the messages the CLI records there become
//! events, so the structured view shows what is typed in the terminal.
//!
//! Hazards:
//! - The file may not exist yet (a new session writes it on its first prompt). It is
//!   looked for by its name (`…-<first 8 of the id>.jsonl`) and its header's id.
//! - A message is written again under the same id once its tool calls have results:
//!   text is emitted once (only what grew), tool calls as their state changes.
//! - A resumed session appends a new header and `$set` patches carrying the whole
//!   history: both are skipped (history), as is everything before the end of the file
//!   when the terminal opened.
//! - Polling only (every [`POLL`]); the file search, which walks the chat folders,
//!   runs every [`SEARCH_EVERY`] ticks until the file is found.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use weft_agent_process::FileTail;
use weft_kernel::driver::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{DriverEvent, ToolCall, ToolKind, ToolStatus, Usage};

use crate::sessions::{self, shell_exit_code};

/// How often the chat file is read.
pub const POLL: Duration = Duration::from_millis(250);
/// Every this many ticks without the file, the chat folders are searched.
const SEARCH_EVERY: u32 = 4;

/// Chat-file records → [`DriverEvent`]s, with no I/O.
#[derive(Debug, Default)]
pub struct ChatRecords {
    session_id: String,
    model: Option<String>,
    /// User messages seen.
    prompts: Vec<String>,
    /// Text emitted per reply message id.
    texts: Vec<(String, String)>,
    /// The last emitted state of each tool call.
    calls: Vec<ToolCall>,
    /// Token figures per message id.
    tokens: Vec<(String, Value)>,
}

/// An edit's or a write's change from its session record: its `resultDisplay` is then
/// `{fileDiff, fileName, originalContent, newContent}` (original null for a new file),
/// the before and after the call saw.
fn display_changes(args: &Value, display: &Value) -> Vec<weft_protocol::FileChange> {
    let Some(new) = display["newContent"].as_str() else {
        return Vec::new();
    };
    let Some(path) = args["file_path"]
        .as_str()
        .or_else(|| display["filePath"].as_str())
        .or_else(|| display["fileName"].as_str())
    else {
        return Vec::new();
    };
    let original = display["originalContent"].as_str();
    vec![weft_kernel::changes::file_change(path, original, Some(new))]
}

fn kind_of(name: &str) -> ToolKind {
    match name {
        "run_shell_command" => ToolKind::Shell,
        "read_file" | "read_many_files" | "list_directory" => ToolKind::Read,
        "write_file" => ToolKind::Write,
        "replace" => ToolKind::Edit,
        "glob" | "search_file_content" | "grep" => ToolKind::Search,
        "web_fetch" | "google_web_search" => ToolKind::Fetch,
        "write_todos" => ToolKind::Plan,
        _ => ToolKind::Other,
    }
}

impl ChatRecords {
    /// A reader for session `session_id`.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            ..Default::default()
        }
    }

    /// Folds one record in.
    pub fn record(&mut self, rec: &Value, out: &mut Vec<DriverEvent>) {
        let Some(id) = rec["id"].as_str() else {
            return; // A header or a `$set` patch.
        };
        match rec["type"].as_str() {
            Some("user") => {
                let text: Vec<&str> = rec["content"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .filter_map(|p| p["text"].as_str())
                    .collect();
                let text = text.join("\n");
                let t = text.trim();
                let first = !self.prompts.iter().any(|m| m == id);
                if first {
                    self.prompts.push(id.to_string());
                }
                if first && !t.is_empty() && !t.starts_with('<') {
                    let line = t.split_whitespace().collect::<Vec<_>>().join(" ");
                    let short: String = line.chars().take(200).collect();
                    out.push(DriverEvent::Notice {
                        text: format!("typed in the terminal: {short}"),
                    });
                }
            }
            Some("gemini") => self.reply(id, rec, out),
            _ => {}
        }
    }

    fn reply(&mut self, id: &str, rec: &Value, out: &mut Vec<DriverEvent>) {
        let model = rec["model"].as_str().map(str::to_owned);
        if model.is_some() && model != self.model {
            self.model = model.clone();
            out.push(DriverEvent::Session {
                session_id: self.session_id.clone(),
                model,
            });
        }
        let text = rec["content"].as_str().unwrap_or_default();
        let had_text = self.texts.iter().any(|(_, t)| !t.is_empty());
        let new = match self.texts.iter_mut().find(|(m, _)| m == id) {
            Some((_, seen)) => {
                let grown = text.strip_prefix(seen.as_str()).unwrap_or_default();
                let grown = grown.to_string();
                seen.push_str(&grown);
                grown
            }
            None => {
                self.texts.push((id.to_string(), text.to_string()));
                if had_text && !text.is_empty() {
                    out.push(DriverEvent::Text {
                        delta: "\n\n".into(),
                    });
                }
                text.to_string()
            }
        };
        if !new.is_empty() {
            out.push(DriverEvent::Text { delta: new });
        }
        for call in rec["toolCalls"].as_array().into_iter().flatten() {
            self.call(call, out);
        }
        if rec["tokens"].is_object() {
            self.usage(id, &rec["tokens"], out);
        }
    }

    fn call(&mut self, call: &Value, out: &mut Vec<DriverEvent>) {
        let Some(id) = call["id"].as_str() else {
            return;
        };
        let name = call["name"].as_str().unwrap_or("tool").to_string();
        let response = &call["result"][0]["functionResponse"]["response"];
        let result = call["resultDisplay"]
            .as_str()
            .or_else(|| response["output"].as_str())
            .or_else(|| response["error"].as_str())
            .map(str::to_owned);
        let exit = response["output"].as_str().and_then(shell_exit_code);
        let status = match call["status"].as_str() {
            Some("success") if exit.is_none_or(|c| c == 0) => ToolStatus::Done,
            Some("success" | "error" | "cancelled") => ToolStatus::Failed,
            _ => ToolStatus::Running,
        };
        let tc = ToolCall {
            id: id.to_string(),
            summary: call["description"]
                .as_str()
                .map_or_else(|| name.clone(), str::to_owned),
            kind: kind_of(&name),
            name,
            input: call["args"].clone(),
            result,
            status,
            parent_id: None,
            changes: display_changes(&call["args"], &call["resultDisplay"]),
        };
        match self.calls.iter_mut().find(|c| c.id == tc.id) {
            Some(seen) if *seen == tc => return,
            Some(seen) => *seen = tc.clone(),
            None => self.calls.push(tc.clone()),
        }
        out.push(DriverEvent::Tool { call: tc });
    }

    fn usage(&mut self, id: &str, tokens: &Value, out: &mut Vec<DriverEvent>) {
        match self.tokens.iter_mut().find(|(m, _)| m == id) {
            Some((_, t)) if t == tokens => return,
            Some((_, t)) => *t = tokens.clone(),
            None => self.tokens.push((id.to_string(), tokens.clone())),
        }
        let sum = |k: &str| {
            self.tokens
                .iter()
                .map(|(_, t)| t[k].as_u64().unwrap_or(0))
                .sum::<u64>()
        };
        out.push(DriverEvent::Usage {
            usage: Usage {
                input_tokens: Some(sum("input")),
                output_tokens: Some(sum("output") + sum("thoughts")),
                cached_input_tokens: Some(sum("cached")),
                context_used_tokens: tokens["total"].as_u64(),
                provider_name: Some("google".into()),
                ..Default::default()
            },
        });
    }
}

/// The chat file of session `id` under `gemini`, if there is one.
fn chat_file(gemini: &Path, id: &str) -> Option<PathBuf> {
    let short: String = id.chars().take(8).collect();
    sessions::session_files(gemini)
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().contains(&short))
        })
        .find(|p| {
            let mut first = String::new();
            let _ = std::fs::File::open(p)
                .ok()
                .map(std::io::BufReader::new)
                .and_then(|mut r| std::io::BufRead::read_line(&mut r, &mut first).ok());
            serde_json::from_str::<Value>(&first).is_ok_and(|h| h["sessionId"] == id)
        })
}

/// Polls session `id`'s chat file until `ctx` is cancelled, emitting what the terminal
/// adds to it.
pub async fn follow(input: &AgentTurnInput, id: &str, ctx: &DriverContext) -> DriverResult {
    let result = DriverResult {
        ok: true,
        session_id: Some(id.to_string()),
        ..Default::default()
    };
    let Some(gemini) = sessions::gemini_dir_for(input) else {
        ctx.cancelled().await;
        return result;
    };
    // What the file holds now is history.
    let mut tail = chat_file(&gemini, id).map(FileTail::from_end);
    let mut records = ChatRecords::new(id);
    let mut ticks: u32 = 0;
    loop {
        if tail.is_none() && ticks.is_multiple_of(SEARCH_EVERY) {
            tail = chat_file(&gemini, id).map(FileTail::from_start);
        }
        ticks = ticks.wrapping_add(1);
        if let Some(t) = tail.as_mut() {
            drain(t, &mut records, ctx);
        }
        tokio::select! {
            _ = ctx.cancelled() => break,
            _ = tokio::time::sleep(POLL) => {}
        }
    }
    if tail.is_none() {
        tail = chat_file(&gemini, id).map(FileTail::from_start);
    }
    if let Some(t) = tail.as_mut() {
        drain(t, &mut records, ctx);
    }
    result
}

fn drain(tail: &mut FileTail, records: &mut ChatRecords, ctx: &DriverContext) {
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
    fn the_recorded_chat_file_becomes_a_transcript() {
        let text = include_str!("../tests/fixtures/chat_file_example.jsonl");
        let mut r = ChatRecords::new("s1");
        let mut out = Vec::new();
        for line in text.lines() {
            r.record(&serde_json::from_str(line).unwrap(), &mut out);
        }
        let mut acc = weft_protocol::Accumulator::new(Default::default());
        for e in &out {
            acc.apply(e, 0);
        }
        let snap = acc.snapshot();
        assert_eq!(snap.model.as_deref(), Some("gemini-3.8-flash"));
        assert!(snap
            .text
            .starts_with("Calling run_shell_command.\n\nMOCK-REPLY: tool said"));
        assert!(
            snap.text.contains("\n\nMOCK-REPLY: done (call 8)\n\n"),
            "{}",
            snap.text
        );
        assert_eq!(snap.text.matches("Calling run_shell_command.").count(), 1);
        let call = &snap.tool_calls[0];
        assert_eq!(
            (call.name.as_str(), call.kind, call.status),
            ("run_shell_command", ToolKind::Shell, ToolStatus::Done)
        );
        assert_eq!(call.result.as_deref(), Some("hi-from-gemini-tool"));
        assert!(snap
            .notices
            .contains(&"typed in the terminal: USE_TOOL please".to_string()));
        assert!(!snap.notices.iter().any(|n| n.contains("session_context")));
        assert!(snap.usage.is_some());
    }
}
