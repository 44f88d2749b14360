//! Forking a native session, at its end or at a turn: a new session file in the same
//! home with the history up to that turn, under a new id, which the agent's own
//! resume then continues.
//!
//! This is what Claude Code's `--resume <id> --fork-session` (with
//! `--resume-session-at`) writes, done without running the agent: every record is
//! copied as it is (uuids, times, message ids and usage kept, so usage totals count
//! the copied calls once) with its `sessionId` changed. Codex's copy gets a new
//! `session_meta.id` and `forked_from_id` (what app-server `thread/fork` records);
//! Gemini's a new `sessionId`. Lines are copied one at a time: memory stays bounded.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::lines::{Line, LineReader};
use crate::LibraryError;

/// A fork written to disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    /// The new session's native id.
    pub native_id: String,
    /// Its file.
    pub path: PathBuf,
}

fn new_id() -> String {
    // A v4 UUID from the OS's randomness.
    let mut b = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut b);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// Copies `source` up to byte `until` (a turn's start; `None`: the whole file) into a
/// new session of `agent` beside it.
pub fn fork_file(
    agent: &str,
    source: &Path,
    old_id: &str,
    until: Option<u64>,
) -> Result<Forked, LibraryError> {
    let id = new_id();
    let dir = source
        .parent()
        .ok_or_else(|| LibraryError::Invalid("the session file has no folder".into()))?;
    let path = match agent {
        "claude" => dir.join(format!("{id}.jsonl")),
        "codex" => {
            let name = source
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            dir.join(name.replace(old_id, &id))
        }
        "gemini" => dir.join(format!("session-fork-{}.jsonl", &id[..8])),
        other => {
            return Err(LibraryError::Invalid(format!(
                "{other} sessions cannot be forked from their files"
            )))
        }
    };
    if agent == "gemini" && source.extension().is_some_and(|e| e == "json") {
        return Err(LibraryError::Invalid(
            "an old-format Gemini chat (.json) cannot be forked".into(),
        ));
    }
    let mut reader = LineReader::open(source, 0)?;
    if let Some(end) = until {
        reader = reader.until(end);
    }
    let tmp = path.with_extension("jsonl.part");
    let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
    while let Some(line) = reader.next_line()? {
        let Line::Text { bytes, .. } = line else {
            continue;
        };
        let Ok(mut v) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        match agent {
            "claude" => {
                if v.get("sessionId").is_some() {
                    v["sessionId"] = Value::String(id.clone());
                }
            }
            "codex" => {
                if v["type"] == "session_meta" {
                    v["payload"]["id"] = Value::String(id.clone());
                    if v["payload"].get("session_id").is_some() {
                        v["payload"]["session_id"] = Value::String(id.clone());
                    }
                    v["payload"]["forked_from_id"] = Value::String(old_id.to_string());
                }
            }
            _ => {
                if v.get("sessionId").is_some() {
                    v["sessionId"] = Value::String(id.clone());
                }
                if let Some(set) = v.get_mut("$set").and_then(|s| s.get_mut("sessionId")) {
                    *set = Value::String(id.clone());
                }
            }
        }
        serde_json::to_writer(&mut out, &v)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, &path)?;
    Ok(Forked {
        native_id: id,
        path,
    })
}
