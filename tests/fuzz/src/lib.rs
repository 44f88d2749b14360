//! Fuzz targets: each takes arbitrary bytes and feeds them to one parser Weft exposes
//! to bytes it does not control — an agent's stdout (each driver's line parser and
//! normalizer, the shared capped line reader), a client's or the daemon's frames, and
//! the snapshot patch algebra (and the UI's TypeScript applier against it), the session
//! library's readers of the agents' own session files, and the shell classifier. A
//! target panics only when the code under it does, or
//! when an invariant it states breaks.
//!
//! The coverage-guided fuzzer (`fuzz/`, cargo-fuzz with `--sanitizer none`, stable
//! toolchain) calls these; so does `cargo test`, replaying every input kept under
//! `corpus/<target>/` (the recorded fixtures they were seeded from, and any crash found,
//! kept as a regression).

use weft_protocol::{apply, diff, DriverEvent, SnapshotPatch, UniversalSnapshot};

mod library;
mod patch_ts;
mod shell;

pub use library::library_files;
pub use patch_ts::{patch_ts, unavailable as patch_ts_unavailable};
pub use shell::shell;

/// A fuzz target: bytes in, a panic only on a bug.
pub type Target = fn(&[u8]);

/// Every target by name (the names of `corpus/` folders and of `fuzz/fuzz_targets/`).
pub const TARGETS: &[(&str, Target)] = &[
    ("claude_lines", claude_lines),
    ("codex_lines", codex_lines),
    ("gemini_lines", gemini_lines),
    ("acp_lines", acp_lines),
    ("line_reader", line_reader),
    ("patch", patch),
    ("frames", frames),
    ("library_files", library_files),
    ("shell", shell),
    ("patch_ts", patch_ts),
];

fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|b| *b == b'\n')
}

/// Claude Code's stream-json: each line parsed (lossy on bad UTF-8) and normalized.
pub fn claude_lines(data: &[u8]) {
    use weft_claude::lines::{parse, Parsed};
    let mut norm = weft_claude::normalize::Normalizer::new(0.0);
    let mut out: Vec<DriverEvent> = Vec::new();
    for line in lines(data) {
        match parse(line) {
            Parsed::Line(l) | Parsed::Lossy(l) => {
                norm.line(l, &mut out);
            }
            Parsed::Malformed(_) | Parsed::Blank => {}
        }
    }
    let _ = norm.running_calls();
}

/// Codex's app-server JSON-RPC: each line classified; notifications normalized.
pub fn codex_lines(data: &[u8]) {
    use weft_codex::rpc::{parse, Incoming};
    let mut norm = weft_codex::normalize::Normalizer::new(None);
    norm.begin_turn(None);
    let mut out: Vec<DriverEvent> = Vec::new();
    for line in lines(data) {
        if let Ok(Incoming::Notification { method, params }) = parse(line) {
            let _ = norm.notification(&method, params, &mut out);
        }
    }
}

/// Gemini CLI's stream-json: each line (lossy UTF-8) normalized.
pub fn gemini_lines(data: &[u8]) {
    let mut norm = weft_gemini::stream::StreamNormalizer::new();
    let mut out: Vec<DriverEvent> = Vec::new();
    for line in lines(data) {
        norm.line(&String::from_utf8_lossy(line), &mut out);
    }
    let _ = norm.running();
}

/// An ACP agent's notifications (a recorded probe's `msg`, or a bare JSON-RPC line).
pub fn acp_lines(data: &[u8]) {
    let mut norm = weft_acp::normalize::Normalizer::new();
    norm.begin_turn();
    let mut out: Vec<DriverEvent> = Vec::new();
    for line in lines(data) {
        let Ok(v) = serde_json::from_slice::<serde_json::Value>(line) else {
            continue;
        };
        let msg = if v.get("msg").is_some() {
            &v["msg"]
        } else {
            &v
        };
        if let Some(method) = msg["method"].as_str() {
            norm.notification(method, &msg["params"], &mut out);
        }
    }
}

/// The capped line reader every process driver reads stdout with: with the first byte
/// choosing the cap, every line it yields fits the cap and holds no newline, and with
/// nothing skipped the lines are the input, in order.
pub fn line_reader(data: &[u8]) {
    use weft_agent_process::{read_lines, RawLine};
    let Some((&cap, input)) = data.split_first() else {
        return;
    };
    let cap = 1 + usize::from(cap);
    // One runtime per thread: building one per input was most of an execution.
    thread_local! {
        static RT: Option<tokio::runtime::Runtime> =
            tokio::runtime::Builder::new_current_thread().build().ok();
    }
    let got = RT.with(|rt| {
        let rt = rt.as_ref()?;
        Some(rt.block_on(async {
            let (tx, mut rx) = tokio::sync::mpsc::channel(16);
            // A small buffer makes lines span reads, as a pipe does.
            let reader = tokio::io::BufReader::with_capacity(7, input);
            let collect = async {
                let mut got = Vec::new();
                while let Some(line) = rx.recv().await {
                    let eof = matches!(line, RawLine::Eof);
                    got.push(line);
                    if eof {
                        break;
                    }
                }
                got
            };
            tokio::join!(read_lines(reader, cap, tx), collect).1
        }))
    });
    let Some(got) = got else {
        return;
    };
    let mut rebuilt = Vec::new();
    let mut skipped = false;
    for line in &got {
        match line {
            RawLine::Line(l) => {
                assert!(l.len() <= cap, "a line of {} over the cap {cap}", l.len());
                assert!(!l.contains(&b'\n'));
                rebuilt.extend_from_slice(l);
                rebuilt.push(b'\n');
            }
            RawLine::Cut(l) => {
                assert!(l.len() <= cap && !l.contains(&b'\n'));
                rebuilt.extend_from_slice(l);
            }
            RawLine::TooLong { len, .. } => {
                assert!(*len > cap, "skipped a line of {len} within the cap {cap}");
                skipped = true;
            }
            RawLine::Eof => {}
        }
    }
    assert!(
        matches!(got.last(), Some(RawLine::Eof)),
        "no Eof at the end"
    );
    if !skipped {
        assert_eq!(rebuilt, input, "the lines are not the input");
    }
}

/// The patch algebra: two snapshots (JSON, split at the first NUL) give a diff that
/// rebuilds the second from the first; any patch (JSON) applies to any snapshot
/// without panicking; two patches after the snapshot (NUL-separated) merged apply as
/// the two in turn.
pub fn patch(data: &[u8]) {
    let (a, b) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let prev: UniversalSnapshot = serde_json::from_slice(a).unwrap_or_default();
    if let Ok(next) = serde_json::from_slice::<UniversalSnapshot>(b) {
        let d = diff(&prev, &next);
        let rebuilt = apply(&prev, &d);
        // Compared as JSON: a NaN cost is not equal to itself as an f64.
        assert_eq!(
            serde_json::to_value(&rebuilt).ok(),
            serde_json::to_value(&next).ok(),
            "apply(prev, diff(prev, next)) != next"
        );
    }
    if let Ok(p) = serde_json::from_slice::<SnapshotPatch>(b) {
        let _ = apply(&prev, &p);
    }
    // prev NUL first-patch NUL second-patch: the two merged apply as both in turn.
    let (first, second) = match b.iter().position(|c| *c == 0) {
        Some(i) => (&b[..i], &b[i + 1..]),
        None => return,
    };
    if let (Ok(p1), Ok(p2)) = (
        serde_json::from_slice::<SnapshotPatch>(first),
        serde_json::from_slice::<SnapshotPatch>(second),
    ) {
        let mut merged = p1.clone();
        if merged.merge(&p2) {
            assert_eq!(
                serde_json::to_value(apply(&prev, &merged)).ok(),
                serde_json::to_value(apply(&apply(&prev, &p1), &p2)).ok(),
                "a merged patch applies differently from its two parts"
            );
        } else {
            assert_eq!(
                serde_json::to_value(&merged).ok(),
                serde_json::to_value(&p1).ok(),
                "a refused merge changed the patch"
            );
        }
    }
}

/// Frames as either side reads them: a server frame, a client frame, a terminal
/// frame or input; a terminal frame that decodes encodes back to the same bytes.
pub fn frames(data: &[u8]) {
    let _ = weft_client::frame::decode_server(data);
    let _ = weft_client::frame::decode_client(data);
    let _ = weft_client::frame::decode_client_text(data);
    if let Some(t) = weft_protocol::TerminalFrame::decode(data) {
        assert_eq!(t.encode(), data, "a terminal frame re-encodes differently");
    }
    if let Some(i) = weft_protocol::TerminalInput::decode(data) {
        assert_eq!(i.encode(), data, "terminal input re-encodes differently");
    }
}
