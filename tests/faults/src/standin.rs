//! Stand-in agents: this crate's `weft-faults-agent` binary, linked into a run's bin
//! folder as `claude` and `codex`, speaks just enough of each CLI's stdout protocol
//! (Claude Code's `stream-json`, Codex's `app-server` JSON-RPC) to replay a recorded
//! turn's shape, and inserts the fault its prompt asks for.
//!
//! The prompt carries a directive (`fault=KIND deltas=N delay=MS at=I id=FAULT`); every
//! text delta written to stdout (and flushed) is then appended to the harness's own log
//! (`WEFT_FAULTS_LOG`), so the harness knows what reached the daemon's pipe without
//! asking the daemon: a pipe keeps what was written even after its writer is killed.

use std::io::{BufRead, Write};
use std::time::Duration;

use serde_json::{json, Value};

/// What a prompt asks the stand-in to do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Directive {
    /// The fault (`none` for a clean turn).
    pub fault: String,
    /// Text deltas to stream.
    pub deltas: usize,
    /// Pause after each delta.
    pub delay_ms: u64,
    /// The delta index the fault comes at.
    pub at: usize,
    /// The harness's id for this fault, written before each logged delta.
    pub id: String,
}

impl Directive {
    /// The directive in `prompt`, defaults for whatever it leaves out.
    pub fn parse(prompt: &str) -> Directive {
        let mut d = Directive {
            fault: "none".into(),
            deltas: 5,
            delay_ms: 0,
            at: 2,
            id: "0".into(),
        };
        for word in prompt.split_whitespace() {
            let Some((k, v)) = word.split_once('=') else {
                continue;
            };
            match k {
                "fault" => d.fault = v.to_string(),
                "deltas" => d.deltas = v.parse().unwrap_or(d.deltas),
                "delay" => d.delay_ms = v.parse().unwrap_or(d.delay_ms),
                "at" => d.at = v.parse().unwrap_or(d.at),
                "id" => d.id = v.to_string(),
                _ => {}
            }
        }
        d.at = d.at.min(d.deltas.saturating_sub(1));
        d
    }

    /// The `i`th delta's text.
    pub fn delta(&self, i: usize) -> String {
        format!("d{i}.{} ", self.id)
    }

    /// A prompt carrying this directive.
    pub fn prompt(&self) -> String {
        format!(
            "weft-fault fault={} deltas={} delay={} at={} id={}",
            self.fault, self.deltas, self.delay_ms, self.at, self.id
        )
    }
}

/// Writes lines to stdout and logs the text deltas that were flushed.
struct Out {
    stdout: std::io::Stdout,
    log: Option<std::fs::File>,
}

impl Out {
    fn new() -> Out {
        let log = std::env::var_os("WEFT_FAULTS_LOG").and_then(|p| {
            std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(p)
                .ok()
        });
        Out {
            stdout: std::io::stdout(),
            log,
        }
    }

    fn raw(&mut self, bytes: &[u8]) {
        let mut lock = self.stdout.lock();
        // The reader gone means the daemon ended us: nothing left to say.
        if lock.write_all(bytes).and_then(|()| lock.flush()).is_err() {
            std::process::exit(0);
        }
    }

    fn line(&mut self, value: &Value) {
        let mut bytes = value.to_string().into_bytes();
        bytes.push(b'\n');
        self.raw(&bytes);
    }

    /// Records that `text` (of fault `id`) is on the pipe.
    fn logged(&mut self, id: &str, text: &str) {
        if let Some(log) = self.log.as_mut() {
            let _ = writeln!(log, "{id}\t{text}");
            let _ = log.flush();
        }
    }
}

fn pause(ms: u64) {
    if ms > 0 {
        std::thread::sleep(Duration::from_millis(ms));
    }
}

fn hang() -> ! {
    loop {
        std::thread::sleep(Duration::from_secs(3600));
    }
}

/// The prompt text of a Claude `stream-json` user message.
fn claude_prompt(message: &Value) -> String {
    let content = &message["message"]["content"];
    match content {
        Value::String(s) => s.clone(),
        Value::Array(blocks) => blocks
            .iter()
            .filter_map(|b| b["text"].as_str())
            .collect::<Vec<_>>()
            .join(" "),
        _ => String::new(),
    }
}

/// `claude -p --input-format stream-json --output-format stream-json …`.
pub fn claude(args: &[String]) {
    let sid = args
        .windows(2)
        .find(|w| w[0] == "--session-id" || w[0] == "--resume")
        .map_or_else(|| "standin-session".to_string(), |w| w[1].clone());
    let mut out = Out::new();
    let stdin = std::io::stdin();
    let mut n = 0;
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        if msg["type"] != "user" {
            continue;
        }
        n += 1;
        let d = Directive::parse(&claude_prompt(&msg));
        claude_turn(&mut out, &sid, n, &d);
    }
}

fn claude_delta(sid: &str, text: &str) -> Value {
    json!({"type":"stream_event","event":{"type":"content_block_delta","index":0,
        "delta":{"type":"text_delta","text":text}},"parent_tool_use_id":null,"session_id":sid})
}

fn claude_turn(out: &mut Out, sid: &str, n: usize, d: &Directive) {
    let cwd = std::env::current_dir().unwrap_or_default();
    out.line(
        &json!({"type":"system","subtype":"init","session_id":sid,"model":"standin",
        "cwd":cwd,"permissionMode":"default"}),
    );
    let mid = format!("m{n}");
    out.line(
        &json!({"type":"stream_event","event":{"type":"message_start","message":{
        "id":mid,"model":"standin","usage":{"input_tokens":10,"output_tokens":1}}},
        "parent_tool_use_id":null,"session_id":sid}),
    );
    out.line(
        &json!({"type":"stream_event","event":{"type":"content_block_start","index":0,
        "content_block":{"type":"text","text":""}},"parent_tool_use_id":null,"session_id":sid}),
    );
    let mut text = String::new();
    for i in 0..d.deltas {
        if i == d.at {
            match d.fault.as_str() {
                "hang" => hang(),
                "cut_line" => {
                    out.raw(br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":"cut her"#);
                    std::process::exit(0);
                }
                "huge_line" => {
                    let mut line = br#"{"type":"stream_event","event":{"type":"content_block_delta","index":0,"delta":{"type":"text_delta","text":""#.to_vec();
                    line.extend(std::iter::repeat_n(b'x', 16 << 20));
                    line.extend_from_slice(b"\"}},\"parent_tool_use_id\":null}\n");
                    out.raw(&line);
                }
                "bad_utf8" => {
                    out.raw(b"{\"type\":\"stream_event\",\"event\":{\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"bad\xff\xfe byte\"}},\"parent_tool_use_id\":null}\n");
                }
                "garbage" => {
                    out.raw(b"this is {not json\n");
                    out.raw(b"\x00\x01\x02 binary \x7f\n");
                    out.raw(b"[1,2,3]\n");
                    out.raw(b"{\"type\":\"weft_unknown_thing\",\"x\":1}\n");
                    out.raw(b"\n");
                }
                _ => {}
            }
        }
        let delta = d.delta(i);
        out.line(&claude_delta(sid, &delta));
        out.logged(&d.id, &delta);
        text.push_str(&delta);
        pause(d.delay_ms);
    }
    out.line(
        &json!({"type":"assistant","message":{"id":mid,"model":"standin",
        "content":[{"type":"text","text":text}],"usage":{"input_tokens":10,"output_tokens":3}},
        "parent_tool_use_id":null,"session_id":sid}),
    );
    out.line(
        &json!({"type":"result","subtype":"success","is_error":false,"result":text,
        "session_id":sid,"total_cost_usd":0.001,"duration_api_ms":5,
        "usage":{"input_tokens":10,"output_tokens":3},
        "modelUsage":{"standin":{"contextWindow":200000}}}),
    );
}

/// `codex app-server`: JSON-RPC over stdio lines.
pub fn codex() {
    let mut out = Out::new();
    let thread = "standin-thread-1";
    let mut n = 0;
    let stdin = std::io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        let Ok(msg) = serde_json::from_str::<Value>(&line) else {
            continue;
        };
        let id = msg["id"].clone();
        match msg["method"].as_str().unwrap_or_default() {
            "initialize" => out.line(&json!({"id":id,"result":{"userAgent":"standin/0.0.0",
                "codexHome":"/nowhere","platformFamily":"unix","platformOs":"linux"}})),
            "thread/start" | "thread/resume" => out.line(&json!({"id":id,"result":{
                "thread":{"id":thread,"path":null},"model":"standin","modelProvider":"standin"}})),
            "turn/start" => {
                n += 1;
                let prompt: Vec<&str> = msg["params"]["input"]
                    .as_array()
                    .map(|a| a.iter().filter_map(|i| i["text"].as_str()).collect())
                    .unwrap_or_default();
                let d = Directive::parse(&prompt.join(" "));
                codex_turn(&mut out, thread, n, &id, &d);
            }
            "turn/interrupt" => out.line(&json!({"id":id,"result":{}})),
            _ => {}
        }
    }
}

fn codex_turn(out: &mut Out, thread: &str, n: usize, id: &Value, d: &Directive) {
    let turn = format!("turn-{n}");
    let reply_id = if d.fault == "wrong_id" {
        // A reply to a request that was never made, then none to the real one.
        json!(id.as_u64().unwrap_or(0) + 1000)
    } else {
        id.clone()
    };
    out.line(
        &json!({"id":reply_id,"result":{"turn":{"id":turn,"items":[],
        "status":"inProgress","error":null}}}),
    );
    let note = |method: &str, params: Value| json!({"method":method,"params":params});
    out.line(&note(
        "turn/started",
        json!({"threadId":thread,"turn":{"id":turn,"items":[],"status":"inProgress"}}),
    ));
    let item = format!("msg-{n}");
    out.line(&note(
        "item/started",
        json!({"threadId":thread,"turnId":turn,
        "item":{"type":"agentMessage","id":item,"text":""}}),
    ));
    let mut text = String::new();
    for i in 0..d.deltas {
        let delta = d.delta(i);
        out.line(&note(
            "item/agentMessage/delta",
            json!({"threadId":thread,"turnId":turn,"itemId":item,"delta":delta}),
        ));
        out.logged(&d.id, &delta);
        text.push_str(&delta);
        pause(d.delay_ms);
    }
    out.line(&note(
        "item/completed",
        json!({"threadId":thread,"turnId":turn,
        "item":{"type":"agentMessage","id":item,"text":text}}),
    ));
    out.line(&note(
        "turn/completed",
        json!({"threadId":thread,"turn":{"id":turn,"items":[],"status":"completed","error":null}}),
    ));
}

/// Runs as the agent named by the executable's file name (`claude` or `codex`).
pub fn main() {
    let args: Vec<String> = std::env::args().collect();
    let name = args
        .first()
        .and_then(|a| std::path::Path::new(a).file_name())
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    match name.as_str() {
        "codex" => codex(),
        _ => claude(&args),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_directive_round_trips_through_its_prompt() {
        let d = Directive {
            fault: "cut_line".into(),
            deltas: 40,
            delay_ms: 3,
            at: 7,
            id: "12".into(),
        };
        assert_eq!(Directive::parse(&d.prompt()), d);
        assert_eq!(Directive::parse("hello").fault, "none");
    }
}
