//! The UI's TypeScript patch applier (`ui/src/lib/patch.ts`) against the Rust one, on
//! the same inputs: a differential check. One `node` process (`ts/apply.mjs`, the
//! applier transpiled with the UI's own TypeScript) lives as long as the fuzzer and
//! answers one JSON line per case.

use std::io::{BufRead, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, ChildStdout, Command, Stdio};
use std::sync::{Mutex, OnceLock};

use serde_json::{json, Value};
use weft_protocol::{apply, diff, SnapshotPatch, UniversalSnapshot};

struct Node {
    _child: Child,
    to: BufWriter<ChildStdin>,
    from: BufReader<ChildStdout>,
}

/// Why the TS applier cannot run here (no `node`, or the UI's dependencies not
/// installed), or `None` when it can.
pub fn unavailable() -> Option<String> {
    node().as_ref().err().cloned()
}

fn node() -> &'static Result<Mutex<Node>, String> {
    static NODE: OnceLock<Result<Mutex<Node>, String>> = OnceLock::new();
    NODE.get_or_init(|| {
        let script = concat!(env!("CARGO_MANIFEST_DIR"), "/ts/apply.mjs");
        let mut child = Command::new(std::env::var("WEFT_NODE").unwrap_or_else(|_| "node".into()))
            .arg(script)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .map_err(|e| format!("node: {e}"))?;
        let (Some(to), Some(from)) = (child.stdin.take(), child.stdout.take()) else {
            return Err("node: no pipes".into());
        };
        let mut from = BufReader::new(from);
        let mut hello = String::new();
        let _ = from.read_line(&mut hello);
        if hello.trim() != "ready" {
            let _ = child.kill();
            let _ = child.wait();
            return Err(format!("{script} did not start: {}", hello.trim()));
        }
        Ok(Mutex::new(Node {
            _child: child,
            to: BufWriter::new(to),
            from,
        }))
    })
}

/// Asks the TS applier to apply `patch` to `prev`; it answers whether the result is
/// `want` (with a clear-as-null field taken as absent) and whether it left `prev` and
/// the patch as they were.
fn check(prev: &UniversalSnapshot, patch: &SnapshotPatch) {
    let Ok(node) = node() else {
        return;
    };
    let want = apply(prev, patch);
    let case = json!({"prev": prev, "patch": patch, "want": want});
    let mut n = node.lock().unwrap_or_else(|p| p.into_inner());
    let mut answer = String::new();
    let sent = writeln!(n.to, "{case}").and_then(|()| n.to.flush());
    if sent.is_err() || n.from.read_line(&mut answer).unwrap_or(0) == 0 {
        panic!("the TS applier died on {case}");
    }
    let answer: Value = serde_json::from_str(&answer).unwrap_or(Value::Null);
    if answer["ok"] != true {
        panic!(
            "TS and Rust apply differ: {}\ncase: {case}",
            answer["why"].as_str().unwrap_or("no answer")
        );
    }
}

/// Two JSON documents split at the first NUL: a snapshot (else the empty one), then a
/// snapshot (the patch is Rust's diff to it) or a patch. Each pair is applied by both.
pub fn patch_ts(data: &[u8]) {
    let (a, b) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let prev: UniversalSnapshot = serde_json::from_slice(a).unwrap_or_default();
    if let Ok(next) = serde_json::from_slice::<UniversalSnapshot>(b) {
        check(&prev, &diff(&prev, &next));
    }
    if let Ok(p) = serde_json::from_slice::<SnapshotPatch>(b) {
        check(&prev, &p);
    }
}
