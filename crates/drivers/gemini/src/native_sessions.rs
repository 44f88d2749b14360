//! Gemini CLI chats, as the session library reads them: `<home>/.gemini/tmp/<project>/chats/session-*.jsonl` (0.61), older
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
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use weft_agent_process::time::parse_time;
use weft_agent_spec::sessions::lines::{Line, LineReader, MAX_LINE};
use weft_agent_spec::sessions::transcript::{input_value, tool_line, Turns, RESULT_BYTES};
use weft_agent_spec::sessions::{
    env_dir, excerpt, fork_lines, under_roots, Batch, Chunk, DocKind, Forked, Keep, Meta,
    NativeSessions, SessionsError, UsageEvent,
};
use weft_protocol::UniversalSnapshot;

/// One message as last written.
#[derive(Deserialize, Clone)]
struct Message {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    timestamp: Option<String>,
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    content: Option<Box<RawValue>>,
    #[serde(default)]
    thoughts: Option<Vec<Thought>>,
    #[serde(default)]
    tokens: Option<Tokens>,
    #[serde(default)]
    model: Option<String>,
    #[serde(rename = "toolCalls", default)]
    tool_calls: Option<Vec<ToolCall>>,
    /// Byte offset of the record it was last written in (not from the file).
    #[serde(skip)]
    off: u64,
}

#[derive(Deserialize, Clone)]
struct Thought {
    #[serde(default)]
    subject: Option<String>,
    #[serde(default)]
    description: Option<String>,
}

#[derive(Deserialize, Clone, Copy, Default)]
#[serde(default)]
struct Tokens {
    input: u64,
    output: u64,
    cached: u64,
    thoughts: u64,
}

#[derive(Deserialize, Clone)]
struct ToolCall {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    name: Option<String>,
    #[serde(default)]
    args: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    status: Option<String>,
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
struct Chat {
    meta: Meta,
    messages: Vec<Message>,
    /// Lines that were not records.
    bad_lines: u32,
    /// The first problem, for the log.
    first_error: Option<String>,
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
fn read_chat(path: &Path) -> std::io::Result<Chat> {
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
fn content_text(content: Option<&RawValue>) -> Option<String> {
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
    fn prompt(&self) -> Option<String> {
        (self.kind == "user")
            .then(|| content_text(self.content.as_deref()))
            .flatten()
            .filter(|t| is_users_own(t))
    }
}

/// The chat's summary, excerpts, turns and usage.
fn index_chat(chat: &mut Chat, batch: &mut Batch) {
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
                batch.prompt(meta, m.off, at, &text);
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
                    let line =
                        tool_line(call.name.as_deref().unwrap_or("tool"), call.args.as_deref());
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

/// The `.gemini` folder's chat files, for the session library.
pub struct GeminiSessions;

impl NativeSessions for GeminiSessions {
    fn agent(&self) -> &'static str {
        "gemini"
    }

    /// `GEMINI_CLI_HOME/.gemini`, else `~/.gemini`.
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        env_dir(var, "GEMINI_CLI_HOME")
            .or_else(|| env_dir(var, "HOME"))
            .map(|h| h.join(".gemini"))
    }

    /// An account's folder is its `GEMINI_CLI_HOME`.
    fn account_home(&self, folder: &Path) -> PathBuf {
        folder.join(".gemini")
    }

    fn session_roots(&self, home: &Path) -> Vec<PathBuf> {
        vec![home.join("tmp")]
    }

    fn owns(&self, home: &Path, path: &Path) -> bool {
        under_roots(home, path, &["tmp"]).is_some_and(|(rel, name)| {
            rel.components().any(|c| c.as_os_str() == "chats")
                && (name.ends_with(".jsonl") || name.ends_with(".json"))
        })
    }

    /// A chat is patched (`$set`, `$rewindTo`) and an old one rewritten whole.
    fn rewrites(&self) -> bool {
        true
    }

    fn seed(&self, home: &Path, path: &Path) -> Meta {
        let mut meta = Meta::default();
        let parent_dir = || {
            path.parent()
                .and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned())
        };
        // tmp/<project>/chats/[<parent>/]session-….jsonl
        let mut dir = path.parent();
        if dir.and_then(Path::file_name).is_some_and(|n| n != "chats") {
            meta.parent = parent_dir();
            meta.relation = Some("subagent".into());
            dir = dir.and_then(Path::parent);
        }
        let project = dir.and_then(Path::parent);
        if let Some(project) = project {
            meta.workdir = std::fs::read_to_string(project.join(".project_root"))
                .ok()
                .map(|s| s.trim().to_string())
                .filter(|s| !s.is_empty())
                .or_else(|| {
                    let name = project.file_name()?.to_string_lossy().into_owned();
                    projects(home).remove(&name)
                });
        }
        meta
    }

    fn index(
        &self,
        path: &Path,
        _from: u64,
        mut meta: Meta,
        emit: &mut dyn FnMut(Chunk) -> ControlFlow<()>,
    ) {
        let mut chat = match read_chat(path) {
            Ok(c) => c,
            Err(e) => {
                let _ = emit(Chunk::Unreadable(format!("cannot be read: {e}")));
                return;
            }
        };
        chat.meta.workdir = meta.workdir.take().or(chat.meta.workdir);
        if chat.meta.native_id.is_none() {
            chat.meta.native_id = meta.native_id.take();
        }
        chat.meta.parent = meta.parent.take().or(chat.meta.parent);
        if meta.relation.is_some() {
            chat.meta.relation = meta.relation.take();
        }
        let mut batch = Batch::default();
        index_chat(&mut chat, &mut batch);
        let size = std::fs::metadata(path).map_or(0, |m| m.len());
        let _ = emit(Chunk::End {
            batch,
            bad: chat.bad_lines,
            error: chat.first_error.take(),
            meta: chat.meta,
            consumed: size,
        });
    }

    fn open_page(
        &self,
        session_id: &str,
        path: &Path,
        _from: u64,
        _until: Option<u64>,
    ) -> std::io::Result<Vec<UniversalSnapshot>> {
        let mut turns = Turns::new("gemini", session_id);
        chat_turns(&mut turns, &read_chat(path)?);
        Ok(turns.out)
    }

    /// The copy is whole (a `$set` patch may hold many turns in one line) and, cut at a
    /// turn, ends with the `{"$rewindTo": id}` record Gemini's own `/rewind` appends,
    /// naming the first user message after it, so Gemini (and the index) drop what
    /// follows. Its `sessionId` is new.
    fn fork_file(&self, source: &Path, _old_id: &str, keep: Keep) -> Result<Forked, SessionsError> {
        if source.extension().is_some_and(|e| e == "json") {
            return Err(SessionsError::Invalid(
                "an old-format Gemini chat (.json) cannot be forked".into(),
            ));
        }
        let trailer = match keep {
            Keep::Turns(n) => Some(serde_json::json!({ "$rewindTo": prompt_id(source, n + 1)? })),
            Keep::All | Keep::Until(_) => None,
        };
        // Gemini's own name (`session-<this minute, UTC>-<id8>`): the CLI finds and
        // deletes a session's files by it, and a resume in the minute the fork was made
        // writes to this file rather than leaving a header-only one beside it.
        let minute = jiff::Timestamp::now()
            .to_zoned(jiff::tz::TimeZone::UTC)
            .strftime("%Y-%m-%dT%H-%M");
        let file_name = |id: &str| format!("session-{minute}-{}.jsonl", &id[..8]);
        let rewrite = |id: &str, v: &mut Value| {
            if v.get("sessionId").is_some() {
                v["sessionId"] = Value::String(id.to_string());
            }
            if let Some(set) = v.get_mut("$set").and_then(|s| s.get_mut("sessionId")) {
                *set = Value::String(id.to_string());
            }
        };
        fork_lines(source, None, trailer, &file_name, &rewrite)
    }
}

/// Gemini's project name → folder map (`projects.json`).
fn projects(home: &Path) -> HashMap<String, String> {
    let v: Value = std::fs::read_to_string(home.join("projects.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    v["projects"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(dir, name)| Some((name.as_str()?.to_string(), dir.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// The message id of turn `n`'s prompt in a chat, turns counted as the index counts
/// them (the user's own prompts, not tool results or Gemini's injected context).
fn prompt_id(path: &Path, n: u32) -> Result<String, SessionsError> {
    let chat = read_chat(path)?;
    let prompt = chat
        .messages
        .iter()
        .filter(|m| m.prompt().is_some())
        .nth(n as usize - 1)
        .ok_or_else(|| SessionsError::Invalid(format!("the chat has no turn {n}")))?;
    prompt.id.clone().ok_or_else(|| {
        SessionsError::Invalid(format!(
            "turn {n}'s prompt has no message id: the chat cannot be rewound to it"
        ))
    })
}

/// A chat's turns as snapshots.
fn chat_turns(turns: &mut Turns, chat: &Chat) {
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
                if let Some(text) = content_text(m.content.as_deref()) {
                    turns.text(m.id.as_deref(), &text, at);
                }
                for c in m.tool_calls.iter().flatten() {
                    let name = c.name.clone().unwrap_or_default();
                    let id = c.id.clone().unwrap_or_default();
                    let summary = tool_line(&name, c.args.as_deref());
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_chat_with_resumes_reads_each_message_once() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("session-x.jsonl");
        std::fs::write(
            &path,
            include_str!("../../../library/tests/fixtures/gemini_chat.jsonl"),
        )
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
