//! The Gemini CLI's own session files as its driver uses them: finding them, and
//! reading tool results back (the session library reads them through
//! [`crate::native_sessions`]).
//!
//! 0.61.0 keeps one JSONL file per session under the home's `.gemini` folder, in a
//! per-project `tmp/<project>/chats/` folder (`session-<YYYY-MM-DDTHH-MM>-<first 8 of
//! the id>.jsonl`); `.gemini/projects.json` maps each working folder to its project
//! name. Line 1 is a header `{sessionId, projectHash, startTime, lastUpdated, kind}`;
//! the rest are message records `{id, timestamp, type: "user"|"gemini", content,
//! toolCalls?}` (a message is written again under the same id once its tool calls
//! have results) or patches `{"$set": {…}}`.

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_acp::backfill::ToolOutput;
use weft_kernel::driver::AgentTurnInput;

/// The `.gemini` folder of a whole spawn environment: its `HOME`'s.
pub fn gemini_dir(env: &[(String, String)]) -> Option<PathBuf> {
    let home = env
        .iter()
        .rev()
        .find(|(k, _)| k == "HOME")
        .map(|(_, v)| v)
        .filter(|v| !v.is_empty())?;
    Some(Path::new(home).join(".gemini"))
}

/// The `.gemini` folder as `input`'s agent sees it (its `HOME`'s).
/// `AgentTurnInput::default()` stands for the kernel's own environment.
pub fn gemini_dir_for(input: &AgentTurnInput) -> Option<PathBuf> {
    let home = input.var("HOME").filter(|v| !v.is_empty())?;
    Some(Path::new(&home).join(".gemini"))
}

/// Every `chats` folder under `dir`, at most a few levels down.
fn chat_dirs(dir: &Path, depth: usize, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if !p.is_dir() {
            continue;
        }
        if p.file_name().is_some_and(|n| n == "chats") {
            out.push(p);
        } else if depth > 0 {
            chat_dirs(&p, depth - 1, out);
        }
    }
}

/// Project name → working folder, from `projects.json`.
fn projects(gemini: &Path) -> HashMap<String, String> {
    let v: Value = std::fs::read_to_string(gemini.join("projects.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or(Value::Null);
    v["projects"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(dir, name)| Some((name.as_str()?.to_string(), dir.clone())))
                .collect()
        })
        .unwrap_or_default()
}

/// Every session file, with the folder it ran in when known.
pub fn session_files(gemini: &Path) -> Vec<(PathBuf, Option<String>)> {
    let mut dirs = Vec::new();
    chat_dirs(gemini, 6, &mut dirs);
    let projects = projects(gemini);
    let mut out = Vec::new();
    for d in dirs {
        let project = d
            .parent()
            .and_then(|p| p.file_name())
            .map(|n| n.to_string_lossy().into_owned());
        let workdir = project.and_then(|p| projects.get(&p).cloned());
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.extension().is_some_and(|x| x == "jsonl") {
                out.push((p, workdir.clone()));
            }
        }
    }
    out
}

fn ms(ts: &str) -> Option<i64> {
    weft_agent_process::time::parse_time(ts)
}

/// One session file, folded.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct ChatFile {
    /// The session id.
    pub session_id: String,
    /// Last change (ms).
    pub updated_at: i64,
    /// Messages by id, last write wins, in first-seen order.
    pub messages: Vec<Value>,
}

/// Reads one session file (None when it has no header).
pub fn read_chat(path: &Path) -> Option<ChatFile> {
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines();
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    let mut chat = ChatFile {
        session_id: header["sessionId"].as_str()?.to_string(),
        updated_at: header["lastUpdated"].as_str().and_then(ms).unwrap_or(0),
        messages: Vec::new(),
    };
    let mut order: Vec<String> = Vec::new();
    let mut by_id: BTreeMap<String, Value> = BTreeMap::new();
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            continue;
        };
        if let Some(set) = v.get("$set") {
            if let Some(t) = set["lastUpdated"].as_str().and_then(ms) {
                chat.updated_at = chat.updated_at.max(t);
            }
            if let Some(msgs) = set["messages"].as_array() {
                order.clear();
                by_id.clear();
                for m in msgs {
                    if let Some(id) = m["id"].as_str() {
                        order.push(id.to_string());
                        by_id.insert(id.to_string(), m.clone());
                    }
                }
            }
            continue;
        }
        if let Some(id) = v["id"].as_str() {
            if !by_id.contains_key(id) {
                order.push(id.to_string());
            }
            if let Some(t) = v["timestamp"].as_str().and_then(ms) {
                chat.updated_at = chat.updated_at.max(t);
            }
            by_id.insert(id.to_string(), v);
        }
    }
    chat.messages = order
        .into_iter()
        .filter_map(|id| by_id.remove(&id))
        .collect();
    Some(chat)
}

/// What a tool call returned, by call id, from the session's file.
/// The ACP updates of 0.61.0 carry no output; the file does. Every record is read,
/// including ones a later `$set` replaced (a resumed session's rewritten history
/// drops the tool calls).
pub fn tool_results(gemini: &Path, session_id: &str) -> HashMap<String, ToolOutput> {
    let short: String = session_id.chars().take(8).collect();
    let mut out = HashMap::new();
    for (path, _) in session_files(gemini) {
        let name = path.file_name().map(|n| n.to_string_lossy().into_owned());
        if !name.is_some_and(|n| n.contains(&short)) {
            continue;
        }
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let mut lines = text.lines();
        let header: Option<Value> = lines.next().and_then(|l| serde_json::from_str(l).ok());
        if header.is_none_or(|h| h["sessionId"] != session_id) {
            continue;
        }
        for line in lines {
            let Ok(v) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let set: Vec<Value> = v["$set"]["messages"]
                .as_array()
                .cloned()
                .unwrap_or_default();
            for m in std::iter::once(&v).chain(set.iter()) {
                for call in m["toolCalls"].as_array().into_iter().flatten() {
                    if let Some((id, result)) = call_result(call) {
                        out.insert(id, result);
                    }
                }
            }
        }
    }
    out
}

/// [`tool_results`] for a whole spawn environment: the hook `weft_acp` calls after a
/// turn.
pub fn tool_output(env: &[(String, String)], session_id: &str) -> HashMap<String, ToolOutput> {
    gemini_dir(env)
        .map(|dir| tool_results(&dir, session_id))
        .unwrap_or_default()
}

/// Before `session/load` of `session_id`: moves the session's own file out of the way
/// of the fresh chat the CLI starts first; returns the files moved.
///
/// 0.61.0's `session/load` starts a chat for the id it is given (in
/// `session-<this minute, UTC>-<id8>.jsonl`) before it looks for the session. When that
/// is the session's own file's name (its last process started in this minute, or Weft
/// wrote a fork in it), the fresh chat's `$set` replaces the conversation, the session
/// has nothing left to resume, and the load fails ("No previous sessions found for this
/// project"). Observed with the real CLI; under another minute's name the same load
/// finds the session, replays it and goes on in that file. So a file of the session
/// under this minute's name or the next one's (the load may start as the minute turns)
/// moves to an earlier minute's, keeping the `-<id8>` suffix the CLI lists and cleans up
/// by. The fresh file the load leaves beside it goes afterwards
/// ([`remove_resume_stubs`]).
pub fn clear_load_collision(gemini: &Path, session_id: &str, now: jiff::Timestamp) -> Vec<PathBuf> {
    let short: String = session_id.chars().take(8).collect();
    if short.len() < 8 {
        return Vec::new();
    }
    let minute = |k: i64| {
        now.checked_add(jiff::SignedDuration::from_secs(60 * k))
            .ok()
            .map(|t| {
                t.to_zoned(jiff::tz::TimeZone::UTC)
                    .strftime("%Y-%m-%dT%H-%M")
                    .to_string()
            })
    };
    let name = |k: i64| minute(k).map(|m| format!("session-{m}-{short}.jsonl"));
    let taken: Vec<String> = [name(0), name(1)].into_iter().flatten().collect();
    let mut moved = Vec::new();
    for (path, _) in session_files(gemini) {
        let own = path
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .is_some_and(|n| taken.contains(&n));
        if !own || nothing_to_resume(&path, session_id) != Some(false) {
            continue;
        }
        let free = (2..120)
            .filter_map(name)
            .map(|n| path.with_file_name(n))
            .find(|p| !p.exists());
        if let Some(to) = free {
            if std::fs::rename(&path, &to).is_ok() {
                moved.push(to);
            }
        }
    }
    moved
}

/// Removes the files a resume of `session_id` left with nothing to resume; returns
/// them.
///
/// 0.61.0 starts a fresh chat (its header and session context go to
/// `session-<this minute>-<id8>.jsonl`) before it loads the one asked for, which it then
/// appends to. Unless the two names coincide (a resume in the minute the session
/// began), the first file stays. The CLI's own cleanup, at its next start in any session
/// of the project, takes a file with nothing to resume for a broken one and deletes
/// every file of that short id — the session's real file too. So after a resumed turn
/// such a file goes (the cleanup would delete it anyway), and only when a file beside it
/// holds the same session's conversation.
pub fn remove_resume_stubs(gemini: &Path, session_id: &str) -> Vec<PathBuf> {
    let short: String = session_id.chars().take(8).collect();
    if short.len() < 8 {
        return Vec::new();
    }
    let suffix = format!("-{short}.jsonl");
    let mut stubs: Vec<PathBuf> = Vec::new();
    let mut held: Vec<PathBuf> = Vec::new();
    for (path, _) in session_files(gemini) {
        let named = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .is_some_and(|n| n.starts_with("session-") && n.ends_with(&suffix));
        if !named {
            continue;
        }
        match nothing_to_resume(&path, session_id) {
            Some(true) => stubs.push(path),
            Some(false) => held.extend(path.parent().map(Path::to_path_buf)),
            None => {}
        }
    }
    stubs.retain(|s| s.parent().is_some_and(|d| held.contains(&d.to_path_buf())));
    stubs.retain(|s| std::fs::remove_file(s).is_ok());
    stubs
}

/// Whether `path`, a file of `session_id`, holds no message the CLI would resume (its
/// own test: a prompt that is not empty, a command or injected context; a reply with
/// text, tool calls or thoughts). `None` when it is another session's or unreadable.
fn nothing_to_resume(path: &Path, session_id: &str) -> Option<bool> {
    // Such a file is a header and the session context; a large one is a conversation.
    if std::fs::metadata(path).ok()?.len() > 1 << 20 {
        let chat = read_chat(path)?;
        return (chat.session_id == session_id).then_some(false);
    }
    let text = std::fs::read_to_string(path).ok()?;
    let mut lines = text.lines().filter(|l| !l.trim().is_empty());
    let header: Value = serde_json::from_str(lines.next()?).ok()?;
    if header["sessionId"] != session_id {
        return None;
    }
    for line in lines {
        let Ok(v) = serde_json::from_str::<Value>(line) else {
            return Some(false);
        };
        if v.get("$rewindTo").is_some() {
            return Some(false);
        }
        let set = v["$set"]["messages"].as_array();
        let own = v.get("type").is_some().then_some(&v);
        if own
            .into_iter()
            .chain(set.into_iter().flatten())
            .any(resumable)
        {
            return Some(false);
        }
    }
    Some(true)
}

fn resumable(m: &Value) -> bool {
    let text = match &m["content"] {
        Value::String(s) => s.clone(),
        Value::Array(parts) => {
            if parts.iter().any(|p| p.get("text").is_none()) {
                return true; // an image, a file: not something to drop
            }
            parts.iter().filter_map(|p| p["text"].as_str()).collect()
        }
        _ => String::new(),
    };
    let t = text.trim();
    let listed = |k: &str| m[k].as_array().is_some_and(|a| !a.is_empty());
    match m["type"].as_str() {
        Some("user") => {
            !(t.is_empty()
                || t.starts_with('/')
                || t.starts_with('?')
                || t.starts_with("<session_context>")
                || t.starts_with("<hook_context>"))
        }
        Some("gemini") => !t.is_empty() || listed("toolCalls") || listed("thoughts"),
        _ => false,
    }
}

/// The exit code a shell result reports (`Exit Code: N` in its output), when any.
pub fn shell_exit_code(output: &str) -> Option<i64> {
    output
        .lines()
        .find_map(|l| l.trim().strip_prefix("Exit Code:"))
        .and_then(|c| c.trim().parse().ok())
}

fn call_result(call: &Value) -> Option<(String, ToolOutput)> {
    let id = call["id"].as_str()?.to_string();
    let response = &call["result"][0]["functionResponse"]["response"];
    let text = call["resultDisplay"]
        .as_str()
        .map(String::from)
        .or_else(|| response["output"].as_str().map(String::from))
        .or_else(|| response["error"].as_str().map(String::from))?;
    // gemini 0.61.0 records a shell command that exited non-zero as a success; its
    // output says otherwise.
    let exit = response["output"].as_str().and_then(shell_exit_code);
    let ok = call["status"] == "success" && exit.is_none_or(|c| c == 0);
    let input = call.get("args").filter(|a| a.is_object()).cloned();
    Some((id, ToolOutput { ok, text, input }))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn timestamps() {
        assert_eq!(ms("1970-01-01T00:00:01.500Z"), Some(1500));
        assert_eq!(ms("2026-11-30T03:08:18.021Z"), Some(1_796_008_098_021));
    }
}
