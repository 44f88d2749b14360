//! `gemini -p --output-format stream-json` lines → [`DriverEvent`]s: pure, so the
//! replay tests drive it without a process.
//!
//! Lines (0.61.0, every one with a `timestamp`): `init {session_id, model}`,
//! `message {role, content, delta?}` (the user's echo, then the reply in pieces),
//! `tool_use {tool_name, tool_id, parameters}`, `tool_result {tool_id, status,
//! output?, error?}`, `error {severity, message}` and `result {status, stats, error?}`.
//! A line that is not JSON, or of a type this version does not know, is skipped and
//! named once in the log.

use std::collections::{BTreeSet, HashMap};

use serde_json::Value;
use weft_protocol::{DriverEvent, ToolCall, ToolKind, ToolStatus, Usage};

/// The normalized kind of a Gemini CLI tool, where the projection is lossless.
/// The file a `write_file` or `replace` call changes, as a unified diff against the file
/// on disk when the call is announced (Gemini's stream gives no before-image).
pub fn file_changes(name: &str, params: &Value) -> Vec<weft_protocol::FileChange> {
    let Some(path) = params["file_path"].as_str().filter(|p| !p.is_empty()) else {
        return Vec::new();
    };
    let text = |k: &str| params[k].as_str().unwrap_or_default();
    match name {
        "write_file" => vec![weft_kernel::changes::write_on_disk(
            None,
            path,
            text("content"),
        )],
        "replace" => {
            let all = params["expected_replacements"]
                .as_u64()
                .is_some_and(|n| n > 1);
            vec![weft_kernel::changes::replace_on_disk(
                None,
                path,
                &[(text("old_string"), text("new_string"), all)],
            )]
        }
        _ => Vec::new(),
    }
}

pub fn tool_kind(name: &str) -> ToolKind {
    match name {
        "run_shell_command" => ToolKind::Shell,
        "read_file" | "read_many_files" => ToolKind::Read,
        "write_file" => ToolKind::Write,
        "replace" => ToolKind::Edit,
        "grep_search" | "glob" | "list_directory" | "search_file_content" => ToolKind::Search,
        "web_fetch" | "google_web_search" => ToolKind::Fetch,
        "write_todos" => ToolKind::Plan,
        "invoke_agent" => ToolKind::Task,
        _ => ToolKind::Other,
    }
}

/// One human line for a call: its description, command, path or pattern.
pub fn tool_summary(name: &str, params: &Value) -> String {
    for key in [
        "description",
        "command",
        "file_path",
        "absolute_path",
        "path",
        "pattern",
        "url",
        "query",
    ] {
        if let Some(s) = params[key].as_str().filter(|s| !s.is_empty()) {
            return if key == "description" {
                match params["command"].as_str() {
                    Some(c) => c.to_string(),
                    None => s.to_string(),
                }
            } else {
                s.to_string()
            };
        }
    }
    name.to_string()
}

/// How the headless turn ended, from its `result` line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Outcome {
    /// `status: success`.
    Success,
    /// Anything else, with the CLI's message.
    Failed(String),
}

/// Folds one headless run's lines.
#[derive(Debug, Default)]
pub struct StreamNormalizer {
    tools: HashMap<String, ToolCall>,
    /// The session id from `init`.
    pub session_id: Option<String>,
    /// The model from `init`.
    pub model: Option<String>,
    /// Set by the `result` line.
    pub outcome: Option<Outcome>,
    /// The last `error` line's message (a failure's reason when `result` has none).
    pub last_error: Option<String>,
    logged: BTreeSet<String>,
}

impl StreamNormalizer {
    /// A normalizer with no state.
    pub fn new() -> Self {
        Self::default()
    }

    /// One stdout line → events.
    pub fn line(&mut self, line: &str, out: &mut Vec<DriverEvent>) {
        let line = line.trim();
        if line.is_empty() {
            return;
        }
        let v: Value = match serde_json::from_str(line) {
            Ok(v) => v,
            Err(_) => {
                self.log_once("a line that is not JSON");
                return;
            }
        };
        match v["type"].as_str().unwrap_or_default() {
            "init" => {
                self.session_id = v["session_id"].as_str().map(String::from);
                self.model = v["model"].as_str().map(String::from);
                if let Some(id) = &self.session_id {
                    out.push(DriverEvent::Session {
                        session_id: id.clone(),
                        model: self.model.clone(),
                    });
                }
            }
            "message" => {
                if v["role"] == "assistant" {
                    if let Some(t) = v["content"].as_str().filter(|t| !t.is_empty()) {
                        out.push(DriverEvent::Text {
                            delta: t.to_string(),
                        });
                    }
                }
            }
            "tool_use" => {
                let id = v["tool_id"].as_str().unwrap_or_default().to_string();
                let name = v["tool_name"].as_str().unwrap_or("tool").to_string();
                let params = v["parameters"].clone();
                let changes = file_changes(&name, &params);
                let call = ToolCall {
                    id: id.clone(),
                    summary: tool_summary(&name, &params),
                    kind: tool_kind(&name),
                    name,
                    input: if params.is_null() {
                        Value::Object(Default::default())
                    } else {
                        params
                    },
                    result: None,
                    status: ToolStatus::Running,
                    parent_id: None,
                    changes,
                };
                self.tools.insert(id, call.clone());
                out.push(DriverEvent::Tool { call });
            }
            "tool_result" => {
                let id = v["tool_id"].as_str().unwrap_or_default().to_string();
                let mut call = self.tools.remove(&id).unwrap_or_else(|| ToolCall {
                    id: id.clone(),
                    name: "tool".into(),
                    summary: "tool".into(),
                    input: Value::Object(Default::default()),
                    ..Default::default()
                });
                // A shell command that exited non-zero is reported as a success;
                // its output says otherwise.
                let exit = v["output"]
                    .as_str()
                    .and_then(crate::sessions::shell_exit_code);
                let ok = v["status"] == "success" && exit.is_none_or(|c| c == 0);
                call.status = if ok {
                    ToolStatus::Done
                } else {
                    ToolStatus::Failed
                };
                call.result = v["output"]
                    .as_str()
                    .map(String::from)
                    .or_else(|| v["error"]["message"].as_str().map(String::from))
                    .or_else(|| v["error"]["type"].as_str().map(String::from));
                self.tools.insert(id, call.clone());
                out.push(DriverEvent::Tool { call });
            }
            "error" => {
                let msg = v["message"].as_str().unwrap_or("error").to_string();
                if v["severity"] == "warning" {
                    out.push(DriverEvent::Notice { text: msg });
                } else {
                    self.last_error = Some(msg);
                }
            }
            "result" => {
                let s = &v["stats"];
                if s.is_object() {
                    out.push(DriverEvent::Usage {
                        usage: Usage {
                            input_tokens: s["input_tokens"].as_u64(),
                            output_tokens: s["output_tokens"].as_u64(),
                            cached_input_tokens: s["cached"].as_u64().filter(|c| *c > 0),
                            ..Default::default()
                        },
                    });
                }
                self.outcome = Some(if v["status"] == "success" {
                    Outcome::Success
                } else {
                    let msg = v["error"]["message"]
                        .as_str()
                        .map(String::from)
                        .or_else(|| self.last_error.clone())
                        .unwrap_or_else(|| {
                            format!("the Gemini CLI reported status {}", v["status"])
                        });
                    out.extend(crate::limits::from_failure(&msg));
                    Outcome::Failed(msg)
                });
            }
            other => self.log_once(&format!("line type `{other}`")),
        }
    }

    /// Calls still running (when the process ended without their results).
    pub fn running(&self) -> Vec<ToolCall> {
        let mut v: Vec<ToolCall> = self
            .tools
            .values()
            .filter(|t| t.status == ToolStatus::Running)
            .cloned()
            .collect();
        v.sort_by(|a, b| a.id.cmp(&b.id));
        v
    }

    fn log_once(&mut self, what: &str) {
        if self.logged.insert(what.to_string()) {
            tracing::info!("gemini stream-json: skipping {what}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_replace_and_a_write_carry_their_changes_against_the_file_on_disk() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let file = dir.path().join("notes.txt");
        let _ = std::fs::write(&file, "one\ntwo\nthree\n");
        let path = file.display().to_string();
        let mut n = StreamNormalizer::new();
        let mut out = Vec::new();
        let line = serde_json::json!({"type": "tool_use", "tool_id": "r1", "tool_name": "replace",
            "parameters": {"file_path": path, "old_string": "two", "new_string": "2"}});
        n.line(&line.to_string(), &mut out);
        let line = serde_json::json!({"type": "tool_use", "tool_id": "w1", "tool_name": "write_file",
            "parameters": {"file_path": dir.path().join("new.txt").display().to_string(), "content": "hi\n"}});
        n.line(&line.to_string(), &mut out);
        let calls: Vec<ToolCall> = out
            .into_iter()
            .filter_map(|e| match e {
                DriverEvent::Tool { call } => Some(call),
                _ => None,
            })
            .collect();
        let shown = path.trim_start_matches('/');
        assert_eq!(
            calls[0].changes[0].diff,
            format!("--- a/{shown}\n+++ b/{shown}\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n")
        );
        assert_eq!(calls[1].changes[0].kind, weft_protocol::ChangeKind::Add);
    }
}
