//! Claude Code's session files, as the session library reads them:
//! `<config>/projects/<cwd as a folder name>/<session id>.jsonl`, subagents in
//! `<session id>/subagents/agent-*.jsonl`.
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

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use weft_agent_process::time::parse_time;
use weft_agent_spec::sessions::lines::json;
use weft_agent_spec::sessions::transcript::{input_value, result_text, tool_line, Turns};
use weft_agent_spec::sessions::{
    config_home, each_value, fork_lines, under_roots, Batch, DocKind, Forked, Keep, LineReaders,
    Meta, NativeSessions, SessionsError, UsageEvent,
};

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
struct Block {
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

/// What a user record's content is.
enum UserContent {
    /// Something the user typed (or a command they ran).
    Prompt(String),
    /// Tool results going back to the model.
    ToolResults(Vec<Block>),
    /// Nothing to show.
    Other,
}

fn user_content(raw: &RawValue) -> UserContent {
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
fn is_wrapper(text: &str) -> bool {
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
    let rec: Rec<'_> = json(line).map_err(|e| e.to_string())?;
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
        batch.prompt(meta, off, at, &text);
    }
    Ok(())
}

/// Claude Code's config folder's session files, for the session library.
pub struct ClaudeSessions;

impl NativeSessions for ClaudeSessions {
    fn agent(&self) -> &'static str {
        "claude"
    }

    /// `CLAUDE_CONFIG_DIR`, else `~/.claude`.
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        config_home(var, "CLAUDE_CONFIG_DIR", ".claude")
    }

    fn session_roots(&self, home: &Path) -> Vec<PathBuf> {
        vec![home.join("projects")]
    }

    fn owns(&self, home: &Path, path: &Path) -> bool {
        under_roots(home, path, &["projects"]).is_some_and(|(rel, name)| {
            name.ends_with(".jsonl") && !rel.components().any(|c| c.as_os_str() == "tool-results")
        })
    }

    /// The session id is the file's name; a subagent's parent is the folder above
    /// `subagents`.
    fn seed(&self, _home: &Path, path: &Path) -> Meta {
        let dir_name = |p: Option<&Path>| {
            p.and_then(Path::file_name)
                .map(|s| s.to_string_lossy().into_owned())
        };
        let mut meta = Meta {
            native_id: Some(
                path.file_stem()
                    .map(|s| s.to_string_lossy().into_owned())
                    .unwrap_or_default(),
            ),
            ..Meta::default()
        };
        if dir_name(path.parent()).as_deref() == Some("subagents") {
            meta.parent = dir_name(path.parent().and_then(Path::parent));
            meta.relation = Some("subagent".into());
        }
        meta
    }

    fn line_readers(&self) -> Option<LineReaders> {
        Some(LineReaders {
            index: read_line,
            transcript: claude_line,
        })
    }

    /// What `--resume <id> --fork-session` (with `--resume-session-at`) would write:
    /// every record copied as it is (uuids, times, message ids and usage kept, so
    /// usage totals count the copied calls once) with its `sessionId` changed.
    fn fork_file(&self, source: &Path, _old_id: &str, keep: Keep) -> Result<Forked, SessionsError> {
        fork_lines(
            source,
            keep.until(),
            None,
            &|id| format!("{id}.jsonl"),
            &|id, v| {
                if v.get("sessionId").is_some() {
                    v["sessionId"] = Value::String(id.to_string());
                }
            },
        )
    }

    fn forks_itself(&self) -> bool {
        true
    }

    fn fork_takes_id(&self) -> bool {
        true
    }

    /// The `uuid` of the turn's last main-chain assistant record, for
    /// `--resume-session-at`.
    fn fork_point(
        &self,
        source: &Path,
        from: u64,
        until: Option<u64>,
    ) -> std::io::Result<Option<String>> {
        let mut found = None;
        each_value(source, from, until, &mut |v| {
            if v["type"] == "assistant" && v["isSidechain"] != true {
                if let Some(u) = v["uuid"].as_str() {
                    found = Some(u.to_string());
                }
            }
            ControlFlow::Continue(())
        })?;
        Ok(found)
    }
}

/// One transcript line into `turns`.
fn claude_line(turns: &mut Turns, line: &[u8]) {
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
            match msg.content.map(user_content) {
                Some(UserContent::Prompt(p)) if !is_wrapper(&p) => turns.start(p, at),
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
                        let summary = tool_line(&name, b.input.as_deref());
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

#[cfg(test)]
mod tests {
    use super::*;
    use weft_agent_spec::sessions::read_text;

    #[test]
    fn the_recorded_sample_reads_into_turns_usage_and_a_title() {
        let sample = include_str!("../../../library/tests/fixtures/claude_session.jsonl");
        let mut meta = Meta {
            native_id: Some("2beba834-ea9e-4d74-9e9f-b4a9f23cf57b".into()),
            ..Default::default()
        };
        let batch = read_text(read_line, sample, &mut meta).unwrap_or_else(|e| panic!("{e}"));
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
