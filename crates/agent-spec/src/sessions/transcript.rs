//! The pieces every reader's transcript page is built from: [`Turns`] builds turn
//! snapshots one record at a time, mapping records onto the fields a live turn fills
//! (prompt, text, reasoning, tool calls with results, usage, model, times). Tool
//! results and inputs are cut to [`RESULT_BYTES`]: the file keeps them whole.

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use weft_protocol::{Phase, ToolCall, ToolKind, ToolStatus, UniversalSnapshot, Usage};

use super::batch::excerpt;

/// The most of a tool's result (or input) put in a transcript snapshot.
pub const RESULT_BYTES: usize = 8 << 10;

/// What kind of tool a name is, across the agents' tool names.
pub fn kind_of(name: &str) -> ToolKind {
    match name {
        "Read" | "read_file" | "NotebookRead" => ToolKind::Read,
        "Write" | "write_file" => ToolKind::Write,
        "Edit" | "MultiEdit" | "replace" | "apply_patch" | "NotebookEdit" => ToolKind::Edit,
        "Bash" | "exec_command" | "shell" | "local_shell_call" | "run_shell_command" => {
            ToolKind::Shell
        }
        "Grep" | "Glob" | "search_file_content" | "glob" | "WebSearch" => ToolKind::Search,
        "WebFetch" | "web_fetch" => ToolKind::Fetch,
        "TodoWrite" | "update_plan" | "write_todos" => ToolKind::Plan,
        "Task" | "Agent" => ToolKind::Task,
        n if n.starts_with("mcp__") => ToolKind::Mcp,
        _ => ToolKind::Other,
    }
}

/// A tool's input as a value, cut to [`RESULT_BYTES`].
pub fn input_value(raw: Option<&RawValue>) -> Value {
    match raw {
        Some(r) if r.get().len() <= RESULT_BYTES => {
            serde_json::from_str(r.get()).unwrap_or(Value::Null)
        }
        Some(r) => Value::String(format!("{}…", excerpt(r.get(), RESULT_BYTES))),
        None => Value::Null,
    }
}

/// `text`, cut to [`RESULT_BYTES`].
pub fn cut(text: &str) -> String {
    if text.len() > RESULT_BYTES {
        format!("{}…", excerpt(text, RESULT_BYTES))
    } else {
        text.to_string()
    }
}

/// Builds turn snapshots one record at a time.
pub struct Turns {
    agent: String,
    session_id: String,
    /// The turns so far.
    pub out: Vec<UniversalSnapshot>,
    /// The id of the last assistant message seen (its blocks continue one text).
    pub last_message: Option<String>,
}

impl Turns {
    /// No turns yet, of `agent`'s session `session_id`.
    pub fn new(agent: &str, session_id: &str) -> Self {
        Self {
            agent: agent.to_string(),
            session_id: session_id.to_string(),
            out: Vec::new(),
            last_message: None,
        }
    }

    /// A new turn with its prompt.
    pub fn start(&mut self, prompt: String, at: Option<i64>) {
        self.last_message = None;
        self.out.push(UniversalSnapshot {
            phase: Phase::Done,
            agent: self.agent.clone(),
            session_id: Some(self.session_id.clone()),
            prompt,
            started_at: at,
            updated_at: at.unwrap_or(0),
            ..Default::default()
        });
    }

    /// The turn being built, its time moved on to `at`.
    pub fn cur(&mut self, at: Option<i64>) -> Option<&mut UniversalSnapshot> {
        let t = self.out.last_mut()?;
        if let Some(at) = at {
            t.updated_at = t.updated_at.max(at);
        }
        Some(t)
    }

    /// Reply text; a new message (by id) starts a new paragraph.
    pub fn text(&mut self, message: Option<&str>, text: &str, at: Option<i64>) {
        let new_message = message.is_none() || message != self.last_message.as_deref();
        self.last_message = message.map(str::to_string);
        if let Some(t) = self.cur(at) {
            if !t.text.is_empty() && new_message {
                t.text.push_str("\n\n");
            }
            t.text.push_str(text);
        }
    }

    /// Reasoning text.
    pub fn reasoning(&mut self, text: &str, at: Option<i64>) {
        if let Some(t) = self.cur(at) {
            if !t.reasoning.is_empty() {
                t.reasoning.push_str("\n\n");
            }
            t.reasoning.push_str(text);
        }
    }

    /// A tool call started.
    pub fn call(
        &mut self,
        id: String,
        name: String,
        input: Value,
        summary: String,
        at: Option<i64>,
    ) {
        if let Some(t) = self.cur(at) {
            t.tool_calls.push(ToolCall {
                id,
                kind: kind_of(&name),
                name,
                summary,
                input,
                result: None,
                status: ToolStatus::Running,
                parent_id: None,
                changes: Vec::new(),
            });
        }
    }

    /// A tool call's result.
    pub fn result(&mut self, id: &str, result: String, failed: bool, at: Option<i64>) {
        if let Some(t) = self.cur(at) {
            if let Some(c) = t.tool_calls.iter_mut().rev().find(|c| c.id == id) {
                c.result = Some(cut(&result));
                c.status = if failed {
                    ToolStatus::Failed
                } else {
                    ToolStatus::Done
                };
            }
        }
    }

    /// Tokens of one model call, added to the turn's.
    pub fn usage(&mut self, model: Option<&str>, input: u64, output: u64, cached: u64) {
        if let Some(t) = self.cur(None) {
            if let Some(m) = model {
                t.model = Some(m.to_string());
            }
            let u = t.usage.get_or_insert_with(Usage::default);
            u.input_tokens = Some(u.input_tokens.unwrap_or(0) + input);
            u.output_tokens = Some(u.output_tokens.unwrap_or(0) + output);
            u.cached_input_tokens = Some(u.cached_input_tokens.unwrap_or(0) + cached);
        }
    }
}

/// A tool result's text: a string, or the text parts of a list.
pub fn result_text(raw: Option<&RawValue>) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    let s = raw.get();
    if s.starts_with('"') {
        return serde_json::from_str(s).unwrap_or_default();
    }
    #[derive(Deserialize)]
    struct Part {
        #[serde(default)]
        text: Option<String>,
    }
    match serde_json::from_str::<Vec<Part>>(s) {
        Ok(parts) => parts
            .into_iter()
            .filter_map(|p| p.text)
            .collect::<Vec<_>>()
            .join("\n"),
        Err(_) => excerpt(s, RESULT_BYTES).to_string(),
    }
}

/// The fields of a tool's input that say what it did.
#[derive(Deserialize, Default)]
#[serde(default)]
struct ToolInput {
    command: Option<String>,
    cmd: Option<String>,
    file_path: Option<String>,
    path: Option<String>,
    pattern: Option<String>,
    query: Option<String>,
    url: Option<String>,
    description: Option<String>,
    prompt: Option<String>,
}

impl ToolInput {
    /// The one thing it ran on.
    fn subject(&self) -> Option<&str> {
        [
            &self.command,
            &self.cmd,
            &self.file_path,
            &self.path,
            &self.pattern,
            &self.query,
            &self.url,
            &self.description,
            &self.prompt,
        ]
        .into_iter()
        .find_map(|v| v.as_deref())
    }
}

/// A tool's name and subject in one line.
pub fn tool_line(name: &str, input: Option<&RawValue>) -> String {
    let subject = input
        .and_then(|i| serde_json::from_str::<ToolInput>(i.get()).ok())
        .and_then(|i| i.subject().map(str::to_string));
    match subject {
        Some(s) => format!("{name}: {s}"),
        None => name.to_string(),
    }
}
