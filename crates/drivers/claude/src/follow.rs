//! Following Claude Code's own UI: while a session's terminal is open, its session file
//! (`<config>/projects/<encoded cwd>/<id>.jsonl`, see [`crate::recover`]) is tailed and
//! every new complete record goes through the same [`Normalizer`] as the structured
//! rail, so text, tool calls and plans typed in the terminal show in the snapshot live.
//!
//! Hazards:
//! - The file may not exist yet: a new session creates it on its first prompt. It is
//!   looked for on every tick (the expected folder each time, every project folder now
//!   and then, as [`recover::session_file`] does).
//! - What was in the file when the terminal opened is history: reading starts at its
//!   end. A file that appears later is new from its first byte.
//! - The CLI writes in batches, and the first batch of a session is not in order (an
//!   assistant record before the user record it answers). Records of one read are put
//!   in timestamp order before they are folded, so a tool result never precedes its call.
//! - A record being written is not read until its newline lands.
//! - The session file's records differ from stream-json lines in small ways
//!   (`toolUseResult`, `isSidechain`, `isMeta`); [`SessionRecords`] maps them.
//! - The structured rail's process, closed as the terminal opens, may write its last
//!   records after the follower took its starting point (the CLI queues its writes):
//!   records stamped before the terminal opened are history and skipped.
//! - `notify` wakes the loop early; a poll is the fallback (and the only way while the
//!   project folder does not exist, since a missing folder cannot be watched).

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, SystemTime};

use notify::{RecursiveMode, Watcher};
use serde_json::{json, Value};
use weft_agent_process::FileTail;
use weft_kernel::driver::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{DriverEvent, Usage};

use crate::normalize::Normalizer;
use crate::recover;
use crate::wire::OutLine;

/// Poll interval while the folder is watched (notify does the real work).
const POLL_WATCHED: Duration = Duration::from_millis(1000);
/// Poll interval while it is not (no folder yet, or no watcher).
const POLL_UNWATCHED: Duration = Duration::from_millis(200);
/// Every this many ticks without the file, every project folder is searched.
const SEARCH_EVERY: u32 = 10;
/// Typed prompts longer than this are shortened in their notice.
const PROMPT_NOTICE_CHARS: usize = 200;

/// Session-file records → [`DriverEvent`]s, with no I/O.
#[derive(Debug)]
pub struct SessionRecords {
    session_id: String,
    norm: Normalizer,
    model: Option<String>,
    since: Option<String>,
    /// Each message's usage as last written (its block lines repeat it, growing).
    usage: Vec<(String, Value)>,
}

impl SessionRecords {
    /// A fresh reader for session `session_id`.
    pub fn new(session_id: impl Into<String>) -> Self {
        Self {
            session_id: session_id.into(),
            norm: Normalizer::new(0.0),
            model: None,
            since: None,
            usage: Vec::new(),
        }
    }

    /// Skips records stamped before `since` (an ISO-8601 UTC time as the CLI writes
    /// them, `2026-01-01T00:00:00.000Z`).
    pub fn since(mut self, since: impl Into<String>) -> Self {
        self.since = Some(since.into());
        self
    }

    /// Folds one read's complete lines in, in timestamp order.
    pub fn lines<'a>(
        &mut self,
        lines: impl IntoIterator<Item = &'a [u8]>,
        out: &mut Vec<DriverEvent>,
    ) {
        let mut records: Vec<Value> = lines
            .into_iter()
            .filter_map(|l| serde_json::from_slice::<Value>(l).ok())
            .filter(|r| r.is_object())
            .collect();
        // Stable: records without a timestamp (metadata) keep their relative order.
        records.sort_by(|a, b| {
            let t = |r: &Value| {
                r.get("timestamp")
                    .and_then(Value::as_str)
                    .map(str::to_owned)
            };
            t(a).cmp(&t(b))
        });
        for r in records {
            self.record(r, out);
        }
    }

    fn record(&mut self, mut rec: Value, out: &mut Vec<DriverEvent>) {
        if rec["isSidechain"] == true || rec["isMeta"] == true {
            return;
        }
        if let (Some(since), Some(at)) = (&self.since, rec["timestamp"].as_str()) {
            if at < since.as_str() {
                return;
            }
        }
        let kind = rec["type"].as_str().unwrap_or_default().to_string();
        let message = rec
            .as_object_mut()
            .and_then(|o| o.remove("message"))
            .unwrap_or(Value::Null);
        let line = match kind.as_str() {
            "assistant" => {
                let model = message["model"].as_str().map(str::to_owned);
                if model.is_some() && model.as_deref() != Some("<synthetic>") && model != self.model
                {
                    self.model = model.clone();
                    out.push(DriverEvent::Session {
                        session_id: self.session_id.clone(),
                        model,
                    });
                }
                self.note_usage(&message, out);
                json!({"type": "assistant", "message": message})
            }
            "user" => {
                if let Some(prompt) = typed_prompt(&message["content"]) {
                    out.push(DriverEvent::Notice {
                        text: format!("typed in the terminal: {}", shorten(&prompt)),
                    });
                    return;
                }
                let result = rec.get("toolUseResult").cloned().unwrap_or(Value::Null);
                json!({"type": "user", "message": message, "tool_use_result": result})
            }
            "system" if rec["subtype"] == "compact_boundary" => rec,
            _ => return,
        };
        if let Ok(line) = serde_json::from_value::<OutLine>(line) {
            self.norm.line(line, out);
        }
    }
}

impl SessionRecords {
    /// Usage so far from the messages' own figures (the session file has no `result`
    /// lines with totals, and no cost).
    fn note_usage(&mut self, message: &Value, out: &mut Vec<DriverEvent>) {
        let (Some(id), usage) = (message["id"].as_str(), &message["usage"]) else {
            return;
        };
        if !usage.is_object() || message["model"] == "<synthetic>" {
            return;
        }
        match self.usage.iter_mut().find(|(m, _)| m == id) {
            Some((_, u)) if u == usage => return,
            Some((_, u)) => *u = usage.clone(),
            None => self.usage.push((id.to_string(), usage.clone())),
        }
        let n = |u: &Value, k: &str| u[k].as_u64().unwrap_or(0);
        let sum = |k: &str| self.usage.iter().map(|(_, u)| n(u, k)).sum::<u64>();
        let context = n(usage, "input_tokens")
            + n(usage, "cache_read_input_tokens")
            + n(usage, "cache_creation_input_tokens")
            + n(usage, "output_tokens");
        let window = self.model.as_deref().map(crate::normalize::window_of);
        out.push(DriverEvent::Usage {
            usage: Usage {
                input_tokens: Some(sum("input_tokens") + sum("cache_creation_input_tokens")),
                output_tokens: Some(sum("output_tokens")),
                cached_input_tokens: Some(sum("cache_read_input_tokens")),
                context_used_tokens: Some(context),
                context_percent: window
                    .filter(|w| *w > 0)
                    .map(|w| ((context as f64) * 10_000.0 / w as f64).round() / 100.0),
                cost_usd: None,
                provider_name: Some("anthropic".into()),
            },
        });
    }
}

/// The text of a prompt the user typed (not a tool result, a slash command's wrapper,
/// or an interrupt marker).
fn typed_prompt(content: &Value) -> Option<String> {
    let text = match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| b["type"] == "tool_result") {
                return None;
            }
            let parts: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            parts.join("\n")
        }
        _ => return None,
    };
    let t = text.trim();
    if t.is_empty() || t.starts_with('<') || t.starts_with("[Request interrupted") {
        return None;
    }
    Some(t.to_string())
}

fn shorten(s: &str) -> String {
    let line = s.split_whitespace().collect::<Vec<_>>().join(" ");
    if line.chars().count() > PROMPT_NOTICE_CHARS {
        let cut: String = line.chars().take(PROMPT_NOTICE_CHARS).collect();
        format!("{cut}…")
    } else {
        line
    }
}

/// `t` as the CLI stamps its records: `2026-01-01T00:00:00.000Z`.
fn iso_utc(t: SystemTime) -> String {
    jiff::Timestamp::try_from(t)
        .unwrap_or(jiff::Timestamp::UNIX_EPOCH)
        .strftime("%Y-%m-%dT%H:%M:%S%.3fZ")
        .to_string()
}

/// Tails `session_id`'s file for `input`'s session until `ctx` is cancelled, emitting
/// what the terminal adds to it.
pub async fn follow(input: &AgentTurnInput, session_id: &str, ctx: &DriverContext) -> DriverResult {
    let result = DriverResult {
        ok: true,
        session_id: Some(session_id.to_string()),
        ..Default::default()
    };
    let Some(config) = recover::config_dir(input) else {
        ctx.emit(DriverEvent::Notice {
            text: "Claude Code's config folder is unknown (no HOME): the terminal's turns \
                   show here once it closes"
                .into(),
        });
        ctx.cancelled().await;
        return result;
    };
    let expected = config
        .join("projects")
        .join(recover::encode_cwd(&input.workdir))
        .join(format!("{session_id}.jsonl"));
    // Earlier turns are history: start at the end of what is there now.
    let mut tail =
        recover::session_file(&config, &input.workdir, session_id).map(FileTail::from_end);
    let wake = Arc::new(tokio::sync::Notify::new());
    let mut watcher = Watch::new(wake.clone());
    let mut records = SessionRecords::new(session_id).since(iso_utc(SystemTime::now()));
    let mut ticks: u32 = 0;
    loop {
        if tail.is_none() {
            ticks = ticks.wrapping_add(1);
            tail = if expected.is_file() {
                Some(expected.clone())
            } else if ticks.is_multiple_of(SEARCH_EVERY) {
                recover::session_file(&config, &input.workdir, session_id)
            } else {
                None
            }
            .map(FileTail::from_start);
        }
        let dir = tail
            .as_ref()
            .and_then(|t| t.path().parent())
            .unwrap_or_else(|| expected.parent().unwrap_or(&config));
        watcher.watch(dir);
        if let Some(t) = tail.as_mut() {
            drain(t, &mut records, ctx);
        }
        let poll = if watcher.watching.is_some() {
            POLL_WATCHED
        } else {
            POLL_UNWATCHED
        };
        tokio::select! {
            _ = ctx.cancelled() => break,
            _ = wake.notified() => {}
            _ = tokio::time::sleep(poll) => {}
        }
    }
    // The terminal's last records may have landed as it closed.
    if tail.is_none() {
        tail = recover::session_file(&config, &input.workdir, session_id).map(FileTail::from_start);
    }
    if let Some(t) = tail.as_mut() {
        drain(t, &mut records, ctx);
    }
    result
}

fn drain(tail: &mut FileTail, records: &mut SessionRecords, ctx: &DriverContext) {
    loop {
        let lines = tail.read();
        if lines.is_empty() {
            return;
        }
        let mut events = Vec::new();
        records.lines(lines.iter().map(Vec::as_slice), &mut events);
        for e in events {
            ctx.emit(e);
        }
    }
}

/// A `notify` watch on one folder that wakes the loop; none when it cannot be set up.
struct Watch {
    wake: Arc<tokio::sync::Notify>,
    watcher: Option<notify::RecommendedWatcher>,
    watching: Option<PathBuf>,
}

impl Watch {
    fn new(wake: Arc<tokio::sync::Notify>) -> Self {
        Self {
            wake,
            watcher: None,
            watching: None,
        }
    }

    /// Watches `dir` (once it exists), replacing an earlier watch.
    fn watch(&mut self, dir: &Path) {
        if self.watching.as_deref() == Some(dir) || !dir.is_dir() {
            return;
        }
        if self.watcher.is_none() {
            let wake = self.wake.clone();
            self.watcher =
                notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
                    if res.is_ok() {
                        wake.notify_one();
                    }
                })
                .map_err(|e| tracing::debug!("no file watcher, polling: {e}"))
                .ok();
        }
        let Some(w) = self.watcher.as_mut() else {
            return;
        };
        if let Some(old) = self.watching.take() {
            let _ = w.unwatch(&old);
        }
        match w.watch(dir, RecursiveMode::NonRecursive) {
            Ok(()) => self.watching = Some(dir.to_path_buf()),
            Err(e) => tracing::debug!("cannot watch {}, polling: {e}", dir.display()),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn fold(lines: &[Value]) -> Vec<DriverEvent> {
        let bytes: Vec<Vec<u8>> = lines.iter().map(|l| l.to_string().into_bytes()).collect();
        let mut out = Vec::new();
        SessionRecords::new("s1").lines(bytes.iter().map(Vec::as_slice), &mut out);
        out
    }

    #[test]
    fn a_batch_out_of_order_folds_in_timestamp_order() {
        let out = fold(&[
            json!({"type":"last-prompt","sessionId":"s1"}),
            json!({"type":"user","timestamp":"2026-01-01T00:00:02.000Z","toolUseResult":{"stdout":"hi"},
                   "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"t1","content":"hi"}]}}),
            json!({"type":"assistant","timestamp":"2026-01-01T00:00:01.000Z",
                   "message":{"id":"m1","model":"claude-x","content":[{"type":"tool_use","id":"t1","name":"Bash","input":{"command":"echo hi"}}]}}),
            json!({"type":"user","timestamp":"2026-01-01T00:00:00.000Z","message":{"role":"user","content":"run it"}}),
            json!({"type":"assistant","timestamp":"2026-01-01T00:00:03.000Z",
                   "message":{"id":"m2","model":"claude-x","content":[{"type":"text","text":"It said hi."}]}}),
            json!({"type":"assistant","isSidechain":true,"timestamp":"2026-01-01T00:00:04.000Z",
                   "message":{"id":"m3","content":[{"type":"text","text":"not the reply"}]}}),
        ]);
        let kinds: Vec<String> = out
            .iter()
            .map(|e| match e {
                DriverEvent::Notice { text } => format!("notice {text}"),
                DriverEvent::Session { model, .. } => format!("session {model:?}"),
                DriverEvent::Tool { call } => format!("tool {} {:?}", call.name, call.status),
                DriverEvent::Text { delta } => format!("text {delta}"),
                other => format!("{other:?}"),
            })
            .collect();
        assert_eq!(
            kinds,
            [
                "notice typed in the terminal: run it",
                "session Some(\"claude-x\")",
                "tool Bash Running",
                "tool Bash Done",
                "text It said hi.",
            ]
        );
    }

    #[test]
    fn the_recorded_session_file_and_a_task_list_become_a_transcript() {
        let text = include_str!("../tests/fixtures/session_file_example.jsonl");
        let mut lines: Vec<Vec<u8>> = text.lines().map(|l| l.as_bytes().to_vec()).collect();
        lines.push(
            json!({"type":"assistant","timestamp":"2099-01-01T00:00:00.000Z",
                   "message":{"id":"m9","model":"claude-opus-4-8","content":[{"type":"tool_use","id":"toolu_tc","name":"TaskCreate",
                   "input":{"subject":"Write the tests","description":"d"}}],"usage":{"input_tokens":10,"output_tokens":5}}})
            .to_string()
            .into_bytes(),
        );
        lines.push(
            json!({"type":"user","timestamp":"2099-01-01T00:00:01.000Z","toolUseResult":{"task":{"id":"1","subject":"Write the tests"}},
                   "message":{"role":"user","content":[{"type":"tool_result","tool_use_id":"toolu_tc","content":"Task #1 created"}]}})
            .to_string()
            .into_bytes(),
        );
        let mut out = Vec::new();
        let mut records = SessionRecords::new("s1");
        records.lines(lines.iter().map(Vec::as_slice), &mut out);
        let mut acc = weft_protocol::Accumulator::new(Default::default());
        for e in &out {
            acc.apply(e, 0);
        }
        let snap = acc.snapshot();
        assert!(
            snap.text.starts_with("MOCK-REPLY: done (call 3) "),
            "{}",
            snap.text
        );
        assert!(snap.text.contains("Calling Bash."));
        assert!(
            snap.text.ends_with("MOCK-REPLY: done (call 5) "),
            "{}",
            snap.text
        );
        let bash = &snap.tool_calls[0];
        assert_eq!(
            (bash.name.as_str(), bash.status),
            ("Bash", weft_protocol::ToolStatus::Done)
        );
        assert_eq!(
            snap.plan.as_ref().map(|p| p.steps[0].text.as_str()),
            Some("Write the tests")
        );
        assert_eq!(
            snap.notices,
            [
                "typed in the terminal: hello turn one",
                "typed in the terminal: USE_TOOL turn two",
                "typed in the terminal: resumed message"
            ]
        );
        let usage = snap.usage.clone().unwrap();
        assert!(usage.output_tokens.unwrap() >= 5);
        assert!(usage.context_percent.is_some());
    }

    #[test]
    fn records_from_before_the_terminal_opened_are_history() {
        let bytes: Vec<Vec<u8>> = [
            json!({"type":"assistant","timestamp":"2026-01-01T00:00:00.999Z",
                   "message":{"id":"m1","content":[{"type":"text","text":"old"}]}}),
            json!({"type":"assistant","timestamp":"2026-01-01T00:00:01.000Z",
                   "message":{"id":"m2","content":[{"type":"text","text":"new"}]}}),
        ]
        .iter()
        .map(|l| l.to_string().into_bytes())
        .collect();
        let mut out = Vec::new();
        SessionRecords::new("s1")
            .since("2026-01-01T00:00:01.000Z")
            .lines(bytes.iter().map(Vec::as_slice), &mut out);
        assert_eq!(
            out,
            [DriverEvent::Text {
                delta: "new".into()
            }]
        );
    }

    #[test]
    fn times_are_stamped_like_the_cli() {
        let t = std::time::UNIX_EPOCH + Duration::from_millis(1_796_018_507_065);
        assert_eq!(iso_utc(t), "2026-11-30T06:01:47.065Z");
        assert_eq!(
            iso_utc(std::time::UNIX_EPOCH + Duration::from_secs(951_782_400)),
            "2000-02-29T00:00:00.000Z"
        );
    }

    #[test]
    fn command_wrappers_and_interrupt_markers_are_not_prompts() {
        assert_eq!(
            typed_prompt(&json!("<command-name>/clear</command-name>")),
            None
        );
        assert_eq!(
            typed_prompt(&json!([{"type":"text","text":"[Request interrupted by user]"}])),
            None
        );
        assert_eq!(typed_prompt(&json!(" hi ")).as_deref(), Some("hi"));
    }
}
