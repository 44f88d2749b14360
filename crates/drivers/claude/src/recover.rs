//! Claude Code's own session files: where they are, and recovering a turn's reply from
//! one when stdout lost it (the session library reads them through
//! [`crate::native_sessions`]).
//!
//! `<config>/projects/<cwd, every non-alphanumeric byte as '-'>/<session id>.jsonl`,
//! where `<config>` is `$CLAUDE_CONFIG_DIR` or `~/.claude`. One JSON record per line:
//! `user` and `assistant` records (one content block per assistant line, blocks of a
//! message sharing `message.id`), plus queue operations, attachments, summaries.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};

use serde::Deserialize;
use serde_json::Value;
use weft_kernel::driver::AgentTurnInput;

/// The folder Claude Code keeps its state in, as `input`'s agent sees it (its
/// `CLAUDE_CONFIG_DIR`, else its `HOME`'s `.claude`). `AgentTurnInput::default()`
/// stands for the kernel's own environment.
pub fn config_dir(input: &AgentTurnInput) -> Option<PathBuf> {
    let get = |name: &str| input.var(name).filter(|v| !v.is_empty());
    if let Some(dir) = get("CLAUDE_CONFIG_DIR") {
        return Some(PathBuf::from(dir));
    }
    get("HOME").map(|h| Path::new(&h).join(".claude"))
}

/// A working folder as Claude Code names its project folder.
pub fn encode_cwd(cwd: &Path) -> String {
    cwd.to_string_lossy()
        .chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '-' })
        .collect()
}

/// The session file of `session_id` run in `cwd`, if it exists (any project folder is
/// searched when the expected one does not have it).
pub fn session_file(config: &Path, cwd: &Path, session_id: &str) -> Option<PathBuf> {
    let projects = config.join("projects");
    let name = format!("{session_id}.jsonl");
    let direct = projects.join(encode_cwd(cwd)).join(&name);
    if direct.is_file() {
        return Some(direct);
    }
    std::fs::read_dir(&projects)
        .ok()?
        .flatten()
        .map(|e| e.path().join(&name))
        .find(|p| p.is_file())
}

#[derive(Deserialize)]
struct Record {
    #[serde(rename = "type", default)]
    kind: String,
    #[serde(default)]
    message: Option<RecordMessage>,
    #[serde(default, rename = "isSidechain")]
    is_sidechain: bool,
}

#[derive(Deserialize)]
struct RecordMessage {
    #[serde(default)]
    id: Option<String>,
    #[serde(default)]
    content: Value,
}

fn prompt_text(content: &Value) -> Option<String> {
    match content {
        Value::String(s) => Some(s.clone()),
        Value::Array(blocks) => {
            if blocks.iter().any(|b| b["type"] == "tool_result") {
                return None;
            }
            let text: Vec<&str> = blocks
                .iter()
                .filter(|b| b["type"] == "text")
                .filter_map(|b| b["text"].as_str())
                .collect();
            (!text.is_empty()).then(|| text.join("\n"))
        }
        _ => None,
    }
}

/// The reply text of the turn that started with `prompt` (the last user record with
/// that text): every main-thread assistant text block after it, messages separated by
/// a blank line as the normalizer separates them.
pub fn turn_text(file: &Path, prompt: &str) -> Option<String> {
    let reader = BufReader::new(std::fs::File::open(file).ok()?);
    let mut pieces: Vec<(String, String)> = Vec::new();
    let mut found = false;
    for line in reader.split(b'\n').map_while(Result::ok) {
        let Ok(rec) = serde_json::from_slice::<Record>(&line) else {
            continue;
        };
        if rec.is_sidechain {
            continue;
        }
        let Some(msg) = rec.message else { continue };
        match rec.kind.as_str() {
            "user" if prompt_text(&msg.content).as_deref() == Some(prompt) => {
                found = true;
                pieces.clear();
            }
            "assistant" if found => {
                let id = msg.id.unwrap_or_default();
                for b in msg.content.as_array().into_iter().flatten() {
                    if b["type"] == "text" {
                        if let Some(t) = b["text"].as_str() {
                            pieces.push((id.clone(), t.to_string()));
                        }
                    }
                }
            }
            _ => {}
        }
    }
    if !found {
        return None;
    }
    let mut out = String::new();
    let mut last_id: Option<&str> = None;
    for (id, text) in &pieces {
        if text.is_empty() {
            continue;
        }
        if !out.is_empty() && last_id != Some(id.as_str()) && !out.ends_with("\n\n") {
            out.push_str(if out.ends_with('\n') { "\n" } else { "\n\n" });
        }
        out.push_str(text);
        last_id = Some(id);
    }
    Some(out)
}

/// What of `full` is missing from `have`: the tail when `have` is a prefix of it.
pub fn missing_tail<'a>(full: &'a str, have: &str) -> Option<&'a str> {
    let tail = full.strip_prefix(have)?;
    (!tail.is_empty()).then_some(tail)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn encodes_like_the_cli() {
        assert_eq!(
            encode_cwd(Path::new("/tmp/probe/we ird.dir_x")),
            "-tmp-probe-we-ird-dir-x"
        );
    }

    #[test]
    fn missing_tail_needs_a_prefix() {
        assert_eq!(missing_tail("abcdef", "abc"), Some("def"));
        assert_eq!(missing_tail("abc", "abc"), None);
        assert_eq!(missing_tail("abc", "xyz"), None);
    }
}
