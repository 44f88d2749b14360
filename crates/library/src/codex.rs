//! Codex rollouts: `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`,
//! one `{timestamp, type, payload}` per line.
//!
//! `session_meta` names the thread and its folder (and `forked_from_id` for a fork),
//! `turn_context` the model, `response_item`s are the conversation (user messages
//! include codex's own environment context and AGENTS.md text, which are not the
//! user's), and `event_msg/token_count` carries usage: `last_token_usage` is one model
//! call, `total_token_usage` the thread's running sum (its total keys the event, so a
//! history copied into a fork counts once). Thread names the user gave live in
//! `$CODEX_HOME/session_index.jsonl` (newest line wins), read by the indexer.

use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;

use crate::model::{parse_time, Batch, DocKind, Meta, TurnStart, UsageEvent};

#[derive(Deserialize)]
struct Line<'a> {
    #[serde(borrow, default)]
    timestamp: Option<&'a str>,
    #[serde(rename = "type", borrow, default)]
    kind: Option<&'a str>,
    #[serde(borrow, default)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct SessionMeta {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
    #[serde(default)]
    forked_from_id: Option<String>,
    #[serde(default)]
    git: Option<Git>,
}

#[derive(Deserialize)]
struct Git {
    #[serde(default)]
    branch: Option<String>,
}

#[derive(Deserialize)]
struct TurnContext {
    #[serde(default)]
    model: Option<String>,
    #[serde(default)]
    cwd: Option<String>,
}

/// A response item; only what is shown or searched.
#[derive(Deserialize)]
pub(crate) struct Item {
    #[serde(rename = "type", default)]
    pub kind: String,
    #[serde(default)]
    pub role: Option<String>,
    #[serde(default)]
    pub content: Option<Vec<Part>>,
    #[serde(default)]
    pub name: Option<String>,
    #[serde(default)]
    pub arguments: Option<String>,
    #[serde(default)]
    pub input: Option<String>,
    #[serde(default)]
    pub call_id: Option<String>,
    #[serde(default)]
    pub output: Option<Box<RawValue>>,
    #[serde(default)]
    pub summary: Option<Vec<Part>>,
}

#[derive(Deserialize)]
pub(crate) struct Part {
    #[serde(default)]
    pub text: Option<String>,
}

#[derive(Deserialize)]
struct Event {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    info: Option<TokenInfo>,
}

#[derive(Deserialize)]
struct TokenInfo {
    #[serde(default)]
    total_token_usage: Option<Tokens>,
    #[serde(default)]
    last_token_usage: Option<Tokens>,
}

#[derive(Deserialize, Default, Clone, Copy)]
#[serde(default)]
struct Tokens {
    input_tokens: u64,
    cached_input_tokens: u64,
    output_tokens: u64,
    reasoning_output_tokens: u64,
    total_tokens: u64,
}

pub(crate) fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when a user message is the user's own, not codex's injected context.
pub(crate) fn is_users_own(text: &str) -> bool {
    let t = text.trim_start();
    !(t.is_empty()
        || t.starts_with("<environment_context>")
        || t.starts_with("<user_instructions>")
        || t.starts_with("# AGENTS.md instructions")
        || t.starts_with("<turn_aborted>")
        || t.starts_with("<user_shell_command>"))
}

/// What a line is, for the transcript reader too.
pub(crate) enum Record {
    Prompt(String),
    Reply(String),
    Reasoning(String),
    Call {
        id: String,
        name: String,
        args: String,
    },
    Output {
        id: String,
        output: String,
    },
    Other,
}

pub(crate) fn item_record(item: Item) -> Record {
    match item.kind.as_str() {
        "message" => {
            let text = text_of(item.content.as_deref().unwrap_or_default());
            match item.role.as_deref() {
                Some("user") if is_users_own(&text) => Record::Prompt(text),
                Some("assistant") => Record::Reply(text),
                _ => Record::Other,
            }
        }
        "reasoning" => Record::Reasoning(text_of(item.summary.as_deref().unwrap_or_default())),
        "function_call" | "custom_tool_call" | "local_shell_call" => Record::Call {
            id: item.call_id.unwrap_or_default(),
            name: item.name.unwrap_or_else(|| item.kind.clone()),
            args: item.arguments.or(item.input).unwrap_or_default(),
        },
        "function_call_output" | "custom_tool_call_output" => Record::Output {
            id: item.call_id.unwrap_or_default(),
            output: item
                .output
                .map(|o| match serde_json::from_str::<String>(o.get()) {
                    Ok(s) => s,
                    Err(_) => o.get().to_string(),
                })
                .unwrap_or_default(),
        },
        _ => Record::Other,
    }
}

/// Lines never indexed, told by their first bytes (the environment snapshot codex
/// writes is large).
fn skippable(line: &[u8]) -> bool {
    static WORLD: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"\"type\":\"world_state\""));
    static COMPACTED: LazyLock<Finder<'static>> =
        LazyLock::new(|| Finder::new(b"\"type\":\"compacted\""));
    let head = &line[..line.len().min(80)];
    WORLD.find(head).is_some() || COMPACTED.find(head).is_some()
}

/// A tool's output (most of a rollout's bytes), told by its payload's first bytes:
/// outputs are not indexed, so it is not copied out or decoded.
fn is_output(payload: &str) -> bool {
    payload.starts_with("{\"type\":\"function_call_output\"")
        || payload.starts_with("{\"type\":\"custom_tool_call_output\"")
}

/// Reads one line into `meta` and `batch`.
pub fn read_line(meta: &mut Meta, off: u64, line: &[u8], batch: &mut Batch) -> Result<(), String> {
    if skippable(line) {
        return Ok(());
    }
    let l: Line<'_> = crate::lines::json(line).map_err(|e| e.to_string())?;
    let at = l.timestamp.and_then(parse_time);
    meta.saw(at);
    let at = at.unwrap_or(meta.updated_at);
    let Some(payload) = l.payload else {
        return Ok(());
    };
    let p = payload.get();
    match l.kind {
        Some("session_meta") => {
            let m: SessionMeta = serde_json::from_str(p).map_err(|e| e.to_string())?;
            if meta.native_id.is_none() {
                meta.native_id = m.id;
            }
            if meta.workdir.is_none() {
                meta.workdir = m.cwd;
            }
            if let Some(b) = m.git.and_then(|g| g.branch) {
                meta.git_branch = Some(b);
            }
            if let Some(parent) = m.forked_from_id {
                meta.parent = Some(parent);
                meta.relation = Some("fork".into());
            }
        }
        Some("turn_context") => {
            if let Ok(t) = serde_json::from_str::<TurnContext>(p) {
                if t.model.is_some() {
                    meta.model = t.model;
                }
                if meta.workdir.is_none() {
                    meta.workdir = t.cwd;
                }
            }
        }
        Some("response_item") if is_output(p) => {}
        Some("response_item") => {
            let item: Item = serde_json::from_str(p).map_err(|e| e.to_string())?;
            match item_record(item) {
                Record::Prompt(text) => {
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
                Record::Reply(text) => {
                    meta.messages += 1;
                    batch.doc(meta.turns, off, at, DocKind::Reply, &text);
                }
                Record::Call { name, args, .. } => {
                    let raw = RawValue::from_string(args).ok();
                    let line = crate::claude::tool_line(&name, raw.as_deref());
                    batch.doc(meta.turns, off, at, DocKind::Tool, &line);
                }
                _ => {}
            }
        }
        Some("event_msg") => {
            if !p.contains("\"token_count\"") {
                return Ok(());
            }
            let e: Event = serde_json::from_str(p).map_err(|e| e.to_string())?;
            if e.kind != "token_count" {
                return Ok(());
            }
            let Some(info) = e.info else { return Ok(()) };
            let (Some(last), Some(total)) = (info.last_token_usage, info.total_token_usage) else {
                return Ok(());
            };
            let id = meta.native_id.as_deref().unwrap_or("");
            let cached = last.cached_input_tokens.min(last.input_tokens);
            batch.usage.push(UsageEvent {
                key: format!(
                    "codex:{}:{}:{}",
                    l.timestamp.unwrap_or(id),
                    total.total_tokens,
                    last.total_tokens
                ),
                at,
                model: meta.model.clone().unwrap_or_default(),
                input: last.input_tokens - cached,
                output: last.output_tokens,
                cache_read: cached,
                cache_write: 0,
                reasoning: last.reasoning_output_tokens,
            });
        }
        _ => {}
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_recorded_rollout_reads_into_turns_usage_and_a_title() {
        let sample = include_str!("../tests/fixtures/codex_rollout.jsonl");
        let mut meta = Meta::default();
        let mut batch = Batch::default();
        let mut off = 0u64;
        for line in sample.lines() {
            read_line(&mut meta, off, line.as_bytes(), &mut batch)
                .unwrap_or_else(|e| panic!("{e}: {line}"));
            off += line.len() as u64 + 1;
        }
        assert_eq!(
            meta.native_id.as_deref(),
            Some("01a22a6b-1a33-73c2-8da3-697eac086135")
        );
        assert_eq!(meta.title().0, "USE_TOOL please");
        assert_eq!(meta.turns, 3);
        assert_eq!(meta.model.as_deref(), Some("mock-model"));
        let out: u64 = batch.usage.iter().map(|u| u.output).sum();
        assert_eq!(out, 28, "the thread's final total_token_usage output");
        assert!(batch
            .docs
            .iter()
            .any(|d| d.kind == DocKind::Tool && d.text.contains("echo hi-from-codex-tool")));
    }
}
