//! Claude Code's session files: `<config>/projects/<cwd as a folder name>/<session
//! id>.jsonl`, subagents in `<session id>/subagents/agent-*.jsonl`.
//!
//! One record per line. `user` and `assistant` records carry `message`, `cwd`,
//! `gitBranch`, `timestamp`, `isSidechain`; an assistant message is written one line
//! per content block, each line repeating the message's `id` and `usage` (so usage is
//! keyed by message id + `requestId` and counts once). Titles come from
//! `custom-title`, `ai-title` and `summary` records, else the first prompt the user
//! typed (not a slash command's wrapper, not a tool result, not a meta record).
//!
//! Lines are parsed into borrowed structs that name only the fields used: serde skips
//! the rest (huge tool results, file snapshots) without allocating.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::{parse_time, Batch, DocKind, Meta, TurnStart, UsageEvent};

#[derive(Deserialize)]
struct Rec<'a> {
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
    #[serde(rename = "sessionId", default)]
    session_id: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(rename = "gitBranch", default)]
    git_branch: Option<String>,
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
    #[serde(rename = "requestId", default)]
    request_id: Option<String>,
    #[serde(rename = "customTitle", default)]
    custom_title: Option<String>,
    #[serde(rename = "aiTitle", default)]
    ai_title: Option<String>,
    #[serde(default)]
    summary: Option<String>,
}

#[derive(Deserialize)]
struct Msg<'a> {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    model: Option<String>,
    #[serde(borrow, default)]
    content: Option<&'a RawValue>,
    #[serde(default)]
    usage: Option<ClaudeUsage>,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct ClaudeUsage {
    input_tokens: u64,
    output_tokens: u64,
    cache_creation_input_tokens: u64,
    cache_read_input_tokens: u64,
}

/// A content block; only what is shown or searched.
#[derive(Deserialize)]
pub(crate) struct Block {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub text: Option<String>,
    #[serde(default)]
    pub thinking: Option<String>,
    #[serde(default)]
    pub id: Option<String>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub input: Option<Box<RawValue>>,
    #[serde(default)]
    pub tool_use_id: Option<String>,
    #[serde(default)]
    pub content: Option<Box<RawValue>>,
    #[serde(default)]
    pub is_error: bool,
}

/// The fields of a tool's input that say what it did.
#[derive(Deserialize, Default)]
#[serde(default)]
pub(crate) struct ToolInput {
    pub command: Option<String>,
    pub cmd: Option<String>,
    pub file_path: Option<String>,
    pub path: Option<String>,
    pub pattern: Option<String>,
    pub query: Option<String>,
    pub url: Option<String>,
    pub description: Option<String>,
    pub prompt: Option<String>,
}

impl ToolInput {
    /// The one thing it ran on.
    pub fn subject(&self) -> Option<&str> {
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
pub(crate) fn tool_line(name: &str, input: Option<&RawValue>) -> String {
    let subject = input
        .and_then(|i| serde_json::from_str::<ToolInput>(i.get()).ok())
        .and_then(|i| i.subject().map(str::to_string));
    match subject {
        Some(s) => format!("{name}: {s}"),
        None => name.to_string(),
    }
}

/// What a user record's content is.
pub(crate) enum UserContent {
    /// Something the user typed (or a command they ran).
    Prompt(String),
    /// Tool results going back to the model.
    ToolResults(Vec<Block>),
    /// Nothing to show.
    Other,
}

pub(crate) fn user_content(raw: &RawValue) -> UserContent {
    let text = raw.get();
    if text.starts_with('"') {
        return match serde_json::from_str::<String>(text) {
            Ok(s) => UserContent::Prompt(s),
            Err(_) => UserContent::Other,
        };
    }
    let Ok(blocks) = serde_json::from_str::<Vec<Block>>(text) else {
        return UserContent::Other;
    };
    if blocks.iter().any(|b| b.kind == "tool_result") {
        return UserContent::ToolResults(blocks);
    }
    let parts: Vec<&str> = blocks
        .iter()
        .filter(|b| b.kind == "text")
        .filter_map(|b| b.text.as_deref())
        .collect();
    if parts.is_empty() {
        UserContent::Other
    } else {
        UserContent::Prompt(parts.join("\n"))
    }
}

/// True when a prompt is a wrapper Claude Code writes, not words the user typed.
pub(crate) fn is_wrapper(text: &str) -> bool {
    let t = text.trim_start();
    t.is_empty()
        || t.starts_with("Caveat:")
        || t.starts_with("<command-name>")
        || t.starts_with("<command-message>")
        || t.starts_with("<local-command-stdout>")
        || t.starts_with("<local-command-stderr>")
        || t.starts_with("<system-reminder>")
        || t.starts_with("[Request interrupted")
}

/// Record types with nothing to index, told from the line's first bytes so they are
/// never parsed (file snapshots can be hundreds of megabytes).
fn skippable(line: &[u8]) -> bool {
    const SKIP: [&[u8]; 5] = [
        b"{\"type\":\"file-history-snapshot\"",
        b"{\"type\":\"queue-operation\"",
        b"{\"type\":\"progress\"",
        b"{\"type\":\"last-prompt\"",
        b"{\"type\":\"mode\"",
    ];
    SKIP.iter().any(|p| line.starts_with(p))
}

/// Reads one line into `meta` and `batch`. `Err` when it is not a record (the caller
/// logs the file once).
pub fn read_line(meta: &mut Meta, off: u64, line: &[u8], batch: &mut Batch) -> Result<(), String> {
    if skippable(line) {
        return Ok(());
    }
    let rec: Rec<'_> = crate::lines::json(line).map_err(|e| e.to_string())?;
    let at = rec.timestamp.and_then(parse_time);
    match rec.kind {
        Some("custom-title") => meta.custom_title = rec.custom_title,
        Some("ai-title") => meta.ai_title = rec.ai_title,
        Some("summary") => {
            if meta.summary.is_none() {
                meta.summary = rec.summary;
            }
        }
        Some("user") | Some("assistant") => {}
        _ => return Ok(()),
    }
    let Some(msg) = rec.message else {
        return Ok(());
    };
    if meta.workdir.is_none() {
        meta.workdir = rec.cwd.clone();
    }
    if rec.git_branch.as_deref().is_some_and(|b| !b.is_empty()) {
        meta.git_branch = rec.git_branch.clone();
    }
    if let (Some(sid), Some(own)) = (&rec.session_id, &meta.native_id) {
        if sid != own && meta.parent.is_none() && meta.relation.is_none() {
            // Records copied from another session: a fork.
            meta.parent = Some(sid.clone());
            meta.relation = Some("fork".into());
        }
    }
    meta.saw(at);
    let at = at.unwrap_or(meta.updated_at);
    if rec.kind == Some("assistant") {
        if let Some(model) = msg.model.as_deref().filter(|m| *m != "<synthetic>") {
            meta.model = Some(model.to_string());
        }
        if let (Some(id), Some(u)) = (&msg.id, &msg.usage) {
            batch.usage.push(UsageEvent {
                key: format!("claude:{id}:{}", rec.request_id.as_deref().unwrap_or("")),
                at,
                model: msg.model.clone().unwrap_or_default(),
                input: u.input_tokens,
                output: u.output_tokens,
                cache_read: u.cache_read_input_tokens,
                cache_write: u.cache_creation_input_tokens,
                reasoning: 0,
            });
        }
        if rec.is_sidechain {
            return Ok(());
        }
        if msg.id.is_none() || msg.id != meta.last_message_id {
            meta.messages += 1;
            meta.last_message_id = msg.id.clone();
        }
        let blocks = msg
            .content
            .and_then(|c| serde_json::from_str::<Vec<Block>>(c.get()).ok())
            .unwrap_or_default();
        for b in blocks {
            match b.kind.as_str() {
                "text" => {
                    if let Some(t) = &b.text {
                        batch.doc(meta.turns, off, at, DocKind::Reply, t);
                    }
                }
                "tool_use" => {
                    let line = tool_line(b.name.as_deref().unwrap_or("tool"), b.input.as_deref());
                    batch.doc(meta.turns, off, at, DocKind::Tool, &line);
                }
                _ => {}
            }
        }
        return Ok(());
    }
    // A user record.
    if rec.is_sidechain || rec.is_meta || rec.is_compact_summary {
        return Ok(());
    }
    // Tool results (most of a transcript's bytes) are not prompts: told from their
    // first block's type without copying them out.
    if let Some(raw) = msg.content {
        static TOOL_RESULT: LazyLock<Finder<'static>> =
            LazyLock::new(|| Finder::new(b"\"tool_result\""));
        let head = &raw.get().as_bytes()[..raw.get().len().min(200)];
        if TOOL_RESULT.find(head).is_some() {
            return Ok(());
        }
    }
    if let Some(UserContent::Prompt(text)) = msg.content.map(user_content) {
        if is_wrapper(&text) {
            return Ok(());
        }
        meta.turns += 1;
        meta.messages += 1;
        if meta.first_prompt.is_none() {
            meta.first_prompt = Some(crate::model::excerpt(&text, 400).to_string());
        }
        batch.turns.push(TurnStart {
            n: meta.turns,
            off,
            at,
        });
        batch.doc(meta.turns, off, at, DocKind::Prompt, &text);
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_sample_reads_into_turns_usage_and_a_title() {
        let sample = include_str!("../tests/fixtures/claude_session.jsonl");
        let mut meta = Meta {
            native_id: Some("2beba834-ea9e-4d74-9e9f-b4a9f23cf57b".into()),
            ..Default::default()
        };
        let mut batch = Batch::default();
        let mut off = 0u64;
        for line in sample.lines() {
            read_line(&mut meta, off, line.as_bytes(), &mut batch)
                .unwrap_or_else(|e| panic!("{e}: {line}"));
            off += line.len() as u64 + 1;
        }
        assert_eq!(meta.turns, 3);
        assert_eq!(meta.title().0, "hello turn one");
        assert_eq!(meta.workdir.as_deref(), Some("/home/dev/probe/claude/work"));
        assert_eq!(meta.model.as_deref(), Some("claude-opus-4-8"));
        assert!(meta.parent.is_none());
        assert!(batch
            .docs
            .iter()
            .any(|d| d.kind == DocKind::Tool && d.text == "Bash: echo hi-from-tool"));
        assert!(batch.docs.iter().any(|d| d.text.contains("hi-from-tool\"")));
        // msg_4 is written as two lines (text, tool_use) with one usage.
        let mut keys: Vec<&str> = batch.usage.iter().map(|u| u.key.as_str()).collect();
        keys.sort();
        keys.dedup();
        assert!(keys.len() < batch.usage.len(), "{keys:?}");
    }
}
