//! Codex rollouts, as the session library reads them:
//! `$CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl`, one
//! `{timestamp, type, payload}` per line.
//!
//! `session_meta` names the thread and its folder (and `forked_from_id` for a fork),
//! `turn_context` the model, `response_item`s are the conversation (user messages
//! include codex's own environment context and AGENTS.md text, which are not the
//! user's), and `event_msg/token_count` carries usage: `last_token_usage` is one model
//! call, `total_token_usage` the thread's running sum (its total keys the event, so a
//! history copied into a fork counts once). Thread names the user gave live in
//! `$CODEX_HOME/session_index.jsonl` (newest line wins), read by the indexer.

use std::ops::ControlFlow;
use std::path::{Path, PathBuf};
use std::sync::LazyLock;

use memchr::memmem::Finder;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::Value;
use weft_agent_process::time::parse_time;
use weft_agent_spec::sessions::lines::{json, Line, LineReader};
use weft_agent_spec::sessions::transcript::{input_value, tool_line, Turns};
use weft_agent_spec::sessions::{
    config_home, each_line, each_value, fork_lines, under_roots, Batch, DocKind, Forked, Keep,
    LineReaders, Meta, NativeSessions, SessionsError, UsageEvent,
};

#[derive(Deserialize)]
struct Rollout<'a> {
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
struct Item {
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
struct Part {
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

fn text_of(parts: &[Part]) -> String {
    parts
        .iter()
        .filter_map(|p| p.text.as_deref())
        .collect::<Vec<_>>()
        .join("\n")
}

/// True when a user message is the user's own, not codex's injected context.
fn is_users_own(text: &str) -> bool {
    let t = text.trim_start();
    !(t.is_empty()
        || t.starts_with("<environment_context>")
        || t.starts_with("<user_instructions>")
        || t.starts_with("# AGENTS.md instructions")
        || t.starts_with("<turn_aborted>")
        || t.starts_with("<user_shell_command>"))
}

/// What a line is, for the transcript reader too.
enum Record {
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

fn item_record(item: Item) -> Record {
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
    let l: Rollout<'_> = json(line).map_err(|e| e.to_string())?;
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
                Record::Prompt(text) => batch.prompt(meta, off, at, &text),
                Record::Reply(text) => {
                    meta.messages += 1;
                    batch.doc(meta.turns, off, at, DocKind::Reply, &text);
                }
                Record::Call { name, args, .. } => {
                    let raw = RawValue::from_string(args).ok();
                    let line = tool_line(&name, raw.as_deref());
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

/// `CODEX_HOME`'s rollouts, for the session library.
pub struct CodexSessions;

impl NativeSessions for CodexSessions {
    fn agent(&self) -> &'static str {
        "codex"
    }

    /// `CODEX_HOME`, else `~/.codex`.
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
        config_home(var, "CODEX_HOME", ".codex")
    }

    fn session_roots(&self, home: &Path) -> Vec<PathBuf> {
        vec![home.join("sessions"), home.join("archived_sessions")]
    }

    fn owns(&self, home: &Path, path: &Path) -> bool {
        under_roots(home, path, &["sessions", "archived_sessions"])
            .is_some_and(|(_, name)| name.starts_with("rollout-") && name.ends_with(".jsonl"))
    }

    fn line_readers(&self) -> Option<LineReaders> {
        Some(LineReaders {
            index: read_line,
            transcript: codex_line,
        })
    }

    /// The copy gets a new `session_meta.id` and `forked_from_id` (what app-server
    /// `thread/fork` records).
    fn fork_file(&self, source: &Path, old_id: &str, keep: Keep) -> Result<Forked, SessionsError> {
        let name = source
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        fork_lines(
            source,
            keep.until(),
            None,
            &|id| name.replace(old_id, id),
            &|id, v| {
                if v["type"] == "session_meta" {
                    v["payload"]["id"] = Value::String(id.to_string());
                    if v["payload"].get("session_id").is_some() {
                        v["payload"]["session_id"] = Value::String(id.to_string());
                    }
                    v["payload"]["forked_from_id"] = Value::String(old_id.to_string());
                }
            },
        )
    }

    fn forks_itself(&self) -> bool {
        true
    }

    /// The turn's id, for `thread/fork`'s `lastTurnId`: everything from the turn's
    /// user message on carries it; the next turn's `task_started` comes later in the
    /// range.
    fn fork_point(
        &self,
        source: &Path,
        from: u64,
        until: Option<u64>,
    ) -> std::io::Result<Option<String>> {
        let mut found = None;
        each_value(
            source,
            from,
            until,
            &mut |v| match v["payload"]["turn_id"].as_str() {
                Some(t) => {
                    found = Some(t.to_string());
                    ControlFlow::Break(())
                }
                None => ControlFlow::Continue(()),
            },
        )?;
        Ok(found)
    }

    /// Codex's paginated history: a forked rollout's `session_meta.history_base` (the
    /// parent thread's id and the byte offset of its rollout the fork's history ends
    /// at).
    fn history_base(&self, path: &Path) -> Option<(String, u64)> {
        let mut reader = LineReader::open(path, 0).ok()?;
        let Line::Text { bytes, .. } = reader.next_line().ok()?? else {
            return None;
        };
        let v: Value = serde_json::from_slice(bytes).ok()?;
        if v["type"] != "session_meta" {
            return None;
        }
        let base = &v["payload"]["history_base"];
        Some((
            base["thread_id"].as_str()?.to_string(),
            base["end_byte_offset"].as_u64()?,
        ))
    }

    /// Thread names the user gave (`session_index.jsonl`, newest line wins).
    fn names_file(&self, home: &Path) -> Option<PathBuf> {
        Some(home.join("session_index.jsonl"))
    }

    fn read_names(&self, file: &Path) -> Vec<(String, String)> {
        #[derive(Deserialize)]
        struct Entry {
            id: String,
            #[serde(default)]
            thread_name: Option<String>,
        }
        let mut names = Vec::new();
        let _ = each_line(file, 0, None, &mut |line| {
            if let Ok(e) = serde_json::from_slice::<Entry>(line) {
                if let Some(n) = e.thread_name.filter(|n| !n.trim().is_empty()) {
                    names.push((e.id, n));
                }
            }
            ControlFlow::Continue(())
        });
        names
    }
}

/// One transcript line into `turns`.
fn codex_line(turns: &mut Turns, line: &[u8]) {
    let Ok(l) = serde_json::from_slice::<Rollout<'_>>(line) else {
        return;
    };
    let at = l.timestamp.and_then(parse_time);
    let Some(p) = l.payload else { return };
    match l.kind {
        Some("response_item") => {
            let Ok(item) = serde_json::from_str::<Item>(p.get()) else {
                return;
            };
            match item_record(item) {
                Record::Prompt(t) => turns.start(t, at),
                Record::Reply(t) => turns.text(None, &t, at),
                Record::Reasoning(t) if !t.is_empty() => turns.reasoning(&t, at),
                Record::Call { id, name, args } => {
                    let raw = RawValue::from_string(args).ok();
                    let summary = tool_line(&name, raw.as_deref());
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

#[cfg(test)]
mod tests {
    use super::*;
    use weft_agent_spec::sessions::read_text;

    #[test]
    fn the_recorded_rollout_reads_into_turns_usage_and_a_title() {
        let sample = include_str!("../../../library/tests/fixtures/codex_rollout.jsonl");
        let mut meta = Meta::default();
        let batch = read_text(read_line, sample, &mut meta).unwrap_or_else(|e| panic!("{e}"));
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
