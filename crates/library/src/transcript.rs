//! A native session's turns as snapshots, read from the agent's file page by page.
//!
//! The index keeps each turn's byte offset, so a page reads only its own bytes: the
//! first screen of a 500 MB transcript costs the last few turns, not the file. Records
//! map onto the same snapshot fields a live turn fills (prompt, text, reasoning, tool
//! calls with results, usage, model, times). Tool results and inputs are cut to
//! [`RESULT_BYTES`]: the file keeps them whole.

use std::path::Path;

use serde_json::value::RawValue;
use serde_json::Value;
use weft_protocol::{Phase, ToolCall, ToolKind, ToolStatus, UniversalSnapshot, Usage};

use crate::claude::{self, Block, UserContent};
use crate::codex::{self, Record};
use crate::gemini;
use crate::lines::{Line, LineReader};
use crate::model::{excerpt, parse_time};

/// The most of a tool's result (or input) put in a transcript snapshot.
pub const RESULT_BYTES: usize = 8 << 10;

fn kind_of(name: &str) -> ToolKind {
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

fn input_value(raw: Option<&RawValue>) -> Value {
    match raw {
        Some(r) if r.get().len() <= RESULT_BYTES => {
            serde_json::from_str(r.get()).unwrap_or(Value::Null)
        }
        Some(r) => Value::String(format!("{}…", excerpt(r.get(), RESULT_BYTES))),
        None => Value::Null,
    }
}

fn cut(text: &str) -> String {
    if text.len() > RESULT_BYTES {
        format!("{}…", excerpt(text, RESULT_BYTES))
    } else {
        text.to_string()
    }
}

/// Builds turn snapshots one record at a time.
struct Turns {
    agent: String,
    session_id: String,
    out: Vec<UniversalSnapshot>,
    last_message: Option<String>,
}

impl Turns {
    fn new(agent: &str, session_id: &str) -> Self {
        Self {
            agent: agent.to_string(),
            session_id: session_id.to_string(),
            out: Vec::new(),
            last_message: None,
        }
    }

    fn start(&mut self, prompt: String, at: Option<i64>) {
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

    fn cur(&mut self, at: Option<i64>) -> Option<&mut UniversalSnapshot> {
        let t = self.out.last_mut()?;
        if let Some(at) = at {
            t.updated_at = t.updated_at.max(at);
        }
        Some(t)
    }

    fn text(&mut self, message: Option<&str>, text: &str, at: Option<i64>) {
        let new_message = message.is_none() || message != self.last_message.as_deref();
        self.last_message = message.map(str::to_string);
        if let Some(t) = self.cur(at) {
            if !t.text.is_empty() && new_message {
                t.text.push_str("\n\n");
            }
            t.text.push_str(text);
        }
    }

    fn reasoning(&mut self, text: &str, at: Option<i64>) {
        if let Some(t) = self.cur(at) {
            if !t.reasoning.is_empty() {
                t.reasoning.push_str("\n\n");
            }
            t.reasoning.push_str(text);
        }
    }

    fn call(&mut self, id: String, name: String, input: Value, summary: String, at: Option<i64>) {
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

    fn result(&mut self, id: &str, result: String, failed: bool, at: Option<i64>) {
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

    fn usage(&mut self, model: Option<&str>, input: u64, output: u64, cached: u64) {
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

fn result_text(raw: Option<&RawValue>) -> String {
    let Some(raw) = raw else {
        return String::new();
    };
    let s = raw.get();
    if s.starts_with('"') {
        return serde_json::from_str(s).unwrap_or_default();
    }
    #[derive(serde::Deserialize)]
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

fn claude_line(turns: &mut Turns, line: &[u8]) {
    #[derive(serde::Deserialize)]
    struct Rec<'a> {
        #[serde(rename = "type", borrow, default)]
        kind: Option<&'a str>,
        #[serde(borrow, default)]
        timestamp: Option<&'a str>,
        #[serde(rename = "isSidechain", default)]
        is_sidechain: bool,
        #[serde(rename = "isMeta", default)]
        is_meta: bool,
        #[serde(rename = "isCompactSummary", default)]
        is_compact_summary: bool,
        #[serde(borrow, default)]
        message: Option<Msg<'a>>,
    }
    #[derive(serde::Deserialize)]
    struct Msg<'a> {
        #[serde(default)]
        id: Option<String>,
        #[serde(default)]
        model: Option<String>,
        #[serde(borrow, default)]
        content: Option<&'a RawValue>,
        #[serde(default)]
        usage: Option<U>,
    }
    #[derive(serde::Deserialize, Default)]
    #[serde(default)]
    struct U {
        input_tokens: u64,
        output_tokens: u64,
        cache_read_input_tokens: u64,
        cache_creation_input_tokens: u64,
    }
    let Ok(rec) = serde_json::from_slice::<Rec<'_>>(line) else {
        return;
    };
    if rec.is_sidechain {
        return;
    }
    let at = rec.timestamp.and_then(parse_time);
    let Some(msg) = rec.message else { return };
    match rec.kind {
        Some("user") if !rec.is_meta && !rec.is_compact_summary => {
            match msg.content.map(claude::user_content) {
                Some(UserContent::Prompt(p)) if !claude::is_wrapper(&p) => turns.start(p, at),
                Some(UserContent::ToolResults(blocks)) => {
                    for b in blocks.into_iter().filter(|b| b.kind == "tool_result") {
                        let id = b.tool_use_id.clone().unwrap_or_default();
                        turns.result(&id, result_text(b.content.as_deref()), b.is_error, at);
                    }
                }
                _ => {}
            }
        }
        Some("assistant") => {
            let model = msg.model.as_deref().filter(|m| *m != "<synthetic>");
            let first_block = msg.id.is_none() || msg.id != turns.last_message;
            let blocks: Vec<Block> = msg
                .content
                .and_then(|c| serde_json::from_str(c.get()).ok())
                .unwrap_or_default();
            for b in blocks {
                match b.kind.as_str() {
                    "text" => turns.text(msg.id.as_deref(), b.text.as_deref().unwrap_or(""), at),
                    "thinking" => turns.reasoning(b.thinking.as_deref().unwrap_or(""), at),
                    "tool_use" => {
                        let name = b.name.clone().unwrap_or_default();
                        let summary = claude::tool_line(&name, b.input.as_deref());
                        turns.call(
                            b.id.clone().unwrap_or_default(),
                            name,
                            input_value(b.input.as_deref()),
                            summary,
                            at,
                        );
                    }
                    _ => {}
                }
            }
            turns.last_message = msg.id.clone();
            if let (true, Some(u)) = (first_block, &msg.usage) {
                turns.usage(
                    model,
                    u.input_tokens + u.cache_creation_input_tokens,
                    u.output_tokens,
                    u.cache_read_input_tokens,
                );
            }
        }
        _ => {}
    }
}

fn codex_line(turns: &mut Turns, line: &[u8]) {
    #[derive(serde::Deserialize)]
    struct L<'a> {
        #[serde(borrow, default)]
        timestamp: Option<&'a str>,
        #[serde(rename = "type", borrow, default)]
        kind: Option<&'a str>,
        #[serde(borrow, default)]
        payload: Option<&'a RawValue>,
    }
    let Ok(l) = serde_json::from_slice::<L<'_>>(line) else {
        return;
    };
    let at = l.timestamp.and_then(parse_time);
    let Some(p) = l.payload else { return };
    match l.kind {
        Some("response_item") => {
            let Ok(item) = serde_json::from_str::<codex::Item>(p.get()) else {
                return;
            };
            match codex::item_record(item) {
                Record::Prompt(t) => turns.start(t, at),
                Record::Reply(t) => turns.text(None, &t, at),
                Record::Reasoning(t) if !t.is_empty() => turns.reasoning(&t, at),
                Record::Call { id, name, args } => {
                    let raw = RawValue::from_string(args).ok();
                    let summary = claude::tool_line(&name, raw.as_deref());
                    turns.call(id, name, input_value(raw.as_deref()), summary, at);
                }
                Record::Output { id, output } => turns.result(&id, output, false, at),
                _ => {}
            }
        }
        Some("turn_context") => {
            #[derive(serde::Deserialize)]
            struct Tc {
                #[serde(default)]
                model: Option<String>,
            }
            if let (Ok(tc), Some(t)) = (serde_json::from_str::<Tc>(p.get()), turns.cur(at)) {
                if tc.model.is_some() {
                    t.model = tc.model;
                }
            }
        }
        Some("event_msg") if p.get().contains("\"token_count\"") => {
            let v: Value = serde_json::from_str(p.get()).unwrap_or_default();
            let last = &v["info"]["last_token_usage"];
            if last.is_object() {
                let n = |k: &str| last[k].as_u64().unwrap_or(0);
                let cached = n("cached_input_tokens").min(n("input_tokens"));
                turns.usage(None, n("input_tokens") - cached, n("output_tokens"), cached);
            }
        }
        _ => {}
    }
}

/// Turns `[start, end)` (0-based) of a JSONL transcript whose turn `n` (1-based)
/// starts at `offsets[n-1]`.
pub fn read_page(
    agent: &str,
    session_id: &str,
    path: &Path,
    from: u64,
    until: Option<u64>,
) -> std::io::Result<Vec<UniversalSnapshot>> {
    let mut turns = Turns::new(agent, session_id);
    if agent == "gemini" {
        let mut chat = gemini::read_chat(path)?;
        gemini_turns(&mut turns, &mut chat);
        return Ok(turns.out);
    }
    let mut reader = LineReader::open(path, from)?;
    if let Some(end) = until {
        reader = reader.until(end);
    }
    while let Some(line) = reader.next_line()? {
        if let Line::Text { bytes, .. } = line {
            match agent {
                "claude" => claude_line(&mut turns, bytes),
                _ => codex_line(&mut turns, bytes),
            }
        }
    }
    Ok(turns.out)
}

fn gemini_turns(turns: &mut Turns, chat: &mut gemini::Chat) {
    for m in &chat.messages {
        let at = m.timestamp.as_deref().and_then(parse_time);
        match m.kind.as_str() {
            "user" => {
                if let Some(t) = m.prompt() {
                    turns.start(t, at);
                }
            }
            "gemini" => {
                for th in m.thoughts.iter().flatten() {
                    let text = [th.subject.as_deref(), th.description.as_deref()]
                        .into_iter()
                        .flatten()
                        .collect::<Vec<_>>()
                        .join(": ");
                    turns.reasoning(&text, at);
                }
                if let Some(text) = gemini::content_text(m.content.as_deref()) {
                    turns.text(m.id.as_deref(), &text, at);
                }
                for c in m.tool_calls.iter().flatten() {
                    let name = c.name.clone().unwrap_or_default();
                    let id = c.id.clone().unwrap_or_default();
                    let summary = claude::tool_line(&name, c.args.as_deref());
                    turns.call(
                        id.clone(),
                        name,
                        input_value(c.args.as_deref()),
                        summary,
                        at,
                    );
                    if c.result.is_some() {
                        let failed = c.status.as_deref().is_some_and(|s| s == "error");
                        let text = c
                            .result
                            .as_deref()
                            .map(|r| excerpt(r.get(), RESULT_BYTES).to_string())
                            .unwrap_or_default();
                        turns.result(&id, text, failed, at);
                    }
                }
                if let Some(t) = m.tokens {
                    let cached = t.cached.min(t.input);
                    turns.usage(
                        m.model.as_deref(),
                        t.input - cached,
                        t.output + t.thoughts,
                        cached,
                    );
                }
            }
            _ => {}
        }
    }
}
