//! Gemini CLI chats: `<home>/.gemini/tmp/<project>/chats/session-*.jsonl` (0.61), older
//! `session-*.json` files holding one object rewritten whole.
//!
//! A JSONL chat starts with a header `{sessionId, projectHash, startTime, …}`; then
//! message records `{id, timestamp, type: "user"|"gemini"|…, content, thoughts?,
//! tokens?, model?, toolCalls?}` — a message is written again under the same id when
//! its tool calls get results (the later one wins) — and patches: `{"$set": {messages:
//! […]}}` replaces the whole list (on resume), `{"$rewindTo": id}` drops what follows.
//! Because of those, a chat is always read whole (chats are small next to Claude's
//! transcripts); its first user message is Gemini's injected `<session_context>`.
//! The working folder is not in the file: `tmp/<project>/.project_root` or
//! `projects.json` name it.

use std::collections::HashMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::value::RawValue;

use crate::lines::{Line, LineReader, MAX_LINE};
use crate::model::{parse_time, Batch, DocKind, Meta, TurnStart, UsageEvent};

/// One message as last written.
#[derive(Deserialize, Clone)]
pub(crate) struct Message {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub timestamp: Option<String>,
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub content: Option<Box<RawValue>>,
    #[serde(default)]
    pub thoughts: Option<Vec<Thought>>,
    #[serde(default)]
    pub tokens: Option<Tokens>,
    #[serde(default)]
    pub model: Option<String>,
    #[serde(rename = "toolCalls", default)]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Byte offset of the record it was last written in (not from the file).
    #[serde(skip)]
    pub off: u64,
}

#[derive(Deserialize, Clone)]
pub(crate) struct Thought {
    #[serde(default)]
    pub subject: Option<String>,
    #[serde(default)]
    pub description: Option<String>,
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(default)]
pub(crate) struct Tokens {
    pub input: u64,
    pub output: u64,
    pub cached: u64,
    pub thoughts: u64,
}

#[derive(Deserialize, Clone)]
pub(crate) struct ToolCall {
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub args: Option<Box<RawValue>>,
    #[serde(default)]
    pub result: Option<Box<RawValue>>,
    #[serde(default)]
    pub status: Option<String>,
}

#[derive(Deserialize)]
struct Header {
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
    #[serde(rename = "startTime", default)]
    start_time: Option<String>,
    #[serde(rename = "lastUpdated", default)]
    last_updated: Option<String>,
    #[serde(default)]
    summary: Option<String>,
    #[serde(default)]
    kind: Option<String>,
    #[serde(default)]
    messages: Option<Vec<Message>>,
    #[serde(rename = "$set", default)]
    set: Option<Box<Header>>,
    #[serde(rename = "$rewindTo", default)]
    rewind_to: Option<String>,
    #[serde(rename = "type", default)]
    record_type: Option<String>,
}

/// A chat read whole.
#[derive(Default)]
pub(crate) struct Chat {
    pub meta: Meta,
    pub messages: Vec<Message>,
    /// Lines that were not records.
    pub bad_lines: u32,
    /// The first problem, for the log.
    pub first_error: Option<String>,
}

impl Chat {
    fn upsert(&mut self, index: &mut HashMap<String, usize>, m: Message) {
        match m.id.clone() {
            Some(id) => match index.get(&id) {
                Some(&i) => self.messages[i] = m,
                None => {
                    index.insert(id, self.messages.len());
                    self.messages.push(m);
                }
            },
            None => self.messages.push(m),
        }
    }

    fn replace(&mut self, index: &mut HashMap<String, usize>, list: Vec<Message>, off: u64) {
        self.messages.clear();
        index.clear();
        for mut m in list {
            m.off = off;
            self.upsert(index, m);
        }
    }

    fn header(&mut self, h: &Header) {
        if self.meta.native_id.is_none() {
            self.meta.native_id = h.session_id.clone();
        }
        self.meta.saw(h.start_time.as_deref().and_then(parse_time));
        self.meta
            .saw(h.last_updated.as_deref().and_then(parse_time));
        if h.summary.is_some() {
            self.meta.summary = h.summary.clone();
        }
        if h.kind.as_deref() == Some("subagent") {
            self.meta.relation = Some("subagent".into());
        }
    }
}

fn apply(
    chat: &mut Chat,
    index: &mut HashMap<String, usize>,
    off: u64,
    line: &[u8],
) -> Result<(), String> {
    // A message record has a `type`; patches and headers do not.
    let h: Header = serde_json::from_slice(line).map_err(|e| e.to_string())?;
    if h.record_type.is_some() {
        let mut m: Message = serde_json::from_slice(line).map_err(|e| e.to_string())?;
        m.off = off;
        chat.upsert(index, m);
        return Ok(());
    }
    if let Some(to) = &h.rewind_to {
        if let Some(&i) = index.get(to) {
            chat.messages.truncate(i);
            index.retain(|_, v| *v < i);
        }
    }
    chat.header(&h);
    if let Some(list) = h.messages {
        chat.replace(index, list, off);
    }
    if let Some(set) = h.set {
        chat.header(&set);
        if let Some(list) = set.messages {
            chat.replace(index, list, off);
        }
    }
    Ok(())
}

/// Reads a chat file whole (a `.json` one as one object, at most [`MAX_LINE`] bytes).
pub(crate) fn read_chat(path: &Path) -> std::io::Result<Chat> {
    let mut chat = Chat::default();
    let mut index = HashMap::new();
    let is_json = path.extension().is_some_and(|e| e == "json");
    if is_json {
        let len = std::fs::metadata(path)?.len();
        if len > MAX_LINE as u64 {
            chat.first_error = Some(format!("a {len}-byte chat file is past the limit"));
            return Ok(chat);
        }
        let bytes = std::fs::read(path)?;
        if let Err(e) = apply(&mut chat, &mut index, 0, &bytes) {
            chat.bad_lines += 1;
            chat.first_error = Some(e);
        }
        return Ok(chat);
    }
    let mut reader = LineReader::open(path, 0)?;
    while let Some(line) = reader.next_line()? {
        match line {
            Line::Text { off, bytes } => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if let Err(e) = apply(&mut chat, &mut index, off, bytes) {
                    chat.bad_lines += 1;
                    chat.first_error.get_or_insert(e);
                }
            }
            Line::TooLong { len, .. } => {
                chat.bad_lines += 1;
                chat.first_error
                    .get_or_insert(format!("a {len}-byte line was skipped"));
            }
        }
    }
    Ok(chat)
}

/// What a user message's content is.
pub(crate) fn content_text(content: Option<&RawValue>) -> Option<String> {
    let raw = content?.get();
    if raw.starts_with('"') {
        return serde_json::from_str(raw).ok();
    }
    #[derive(Deserialize)]
    struct Part {
        #[serde(default)]
        text: Option<String>,
    }
    let parts: Vec<Part> = serde_json::from_str(raw).ok()?;
    let text: Vec<String> = parts.into_iter().filter_map(|p| p.text).collect();
    (!text.is_empty()).then(|| text.join("\n"))
}

fn is_users_own(text: &str) -> bool {
    let t = text.trim_start();
    !(t.is_empty() || t.starts_with("<session_context>"))
}

impl Message {
    /// The text of a turn's prompt, when this message is one: the user's own words, not
    /// a tool result or Gemini's injected context. Turns are counted by these.
    pub(crate) fn prompt(&self) -> Option<String> {
        (self.kind == "user")
            .then(|| content_text(self.content.as_deref()))
            .flatten()
            .filter(|t| is_users_own(t))
    }
}

/// The chat's summary, excerpts, turns and usage.
pub(crate) fn index_chat(chat: &mut Chat, batch: &mut Batch) {
    let meta = &mut chat.meta;
    let sid = meta.native_id.clone().unwrap_or_default();
    for m in &chat.messages {
        let at = m.timestamp.as_deref().and_then(parse_time);
        meta.saw(at);
        let at = at.unwrap_or(meta.updated_at);
        match m.kind.as_str() {
            "user" => {
                let Some(text) = m.prompt() else {
                    continue;
                };
                meta.turns += 1;
                meta.messages += 1;
                if meta.first_prompt.is_none() {
                    meta.first_prompt = Some(crate::model::excerpt(&text, 400).to_string());
                }
                batch.turns.push(TurnStart {
                    n: meta.turns,
                    off: m.off,
                    at,
                });
                batch.doc(meta.turns, m.off, at, DocKind::Prompt, &text);
            }
            "gemini" => {
                meta.messages += 1;
                if let Some(model) = &m.model {
                    meta.model = Some(model.clone());
                }
                if let Some(text) = content_text(m.content.as_deref()) {
                    batch.doc(meta.turns, m.off, at, DocKind::Reply, &text);
                }
                for call in m.tool_calls.iter().flatten() {
                    let line = crate::claude::tool_line(
                        call.name.as_deref().unwrap_or("tool"),
                        call.args.as_deref(),
                    );
                    batch.doc(meta.turns, m.off, at, DocKind::Tool, &line);
                }
                if let (Some(t), Some(id)) = (m.tokens, &m.id) {
                    let cached = t.cached.min(t.input);
                    batch.usage.push(UsageEvent {
                        key: format!("gemini:{sid}:{id}"),
                        at,
                        model: m.model.clone().unwrap_or_default(),
                        input: t.input - cached,
                        output: t.output + t.thoughts,
                        cache_read: cached,
                        cache_write: 0,
                        reasoning: t.thoughts,
                    });
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_with_resumes_reads_each_message_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("session-x.jsonl");
        std::fs::write(&path, include_str!("../tests/fixtures/gemini_chat.jsonl"))
            .unwrap_or_else(|e| panic!("{e}"));
        let mut chat = read_chat(&path).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(chat.bad_lines, 0, "{:?}", chat.first_error);
        let mut batch = Batch::default();
        index_chat(&mut chat, &mut batch);
        assert_eq!(
            chat.meta.native_id.as_deref(),
            Some("6f1fd193-c4e2-4471-acd0-fc646b5f1f76")
        );
        assert_eq!(chat.meta.title().0, "USE_TOOL please");
        assert_eq!(chat.meta.turns, 3, "first, resumed hello, resumed latest");
        assert_eq!(chat.meta.model.as_deref(), Some("gemini-3.8-flash"));
        assert!(batch
            .docs
            .iter()
            .any(|d| d.text.contains("MOCK-REPLY: done (call 10)")));
    }
}
