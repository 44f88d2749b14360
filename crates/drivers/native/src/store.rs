//! A native session on disk: `<WEFT_HOME>/native/<session id>.jsonl`, one record a
//! line, appended and flushed as the turn goes (a crash loses at most the line being
//! written), so a new process resumes the conversation exactly.
//!
//! Records: `meta` (pack, plan mode), `msg` (one message the model sees), `reset`
//! (compaction: the model-visible conversation replaced by these messages; the user's
//! transcript lives in the kernel's store and is untouched), `undo` (the files the last
//! turn changed, as they were before it).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::conversation::{Block, Message, Role};

/// One line of the file.
#[derive(Debug, Clone, Serialize, Deserialize)]
#[serde(tag = "t", rename_all = "snake_case")]
pub enum Record {
    /// Session settings (the last one wins).
    Meta {
        /// The pack.
        pack: String,
        /// Plan mode.
        #[serde(default)]
        plan_mode: bool,
    },
    /// A message.
    Msg {
        /// It.
        m: Message,
    },
    /// Compaction: the conversation from here on.
    Reset {
        /// The new conversation.
        messages: Vec<Message>,
    },
    /// The files the last turn changed, before it changed them.
    Undo {
        /// The turn.
        task: String,
        /// Path → content before (None: it did not exist).
        files: Originals,
    },
}

/// Files as they were before a turn: path → content (None: it did not exist).
pub type Originals = Vec<(PathBuf, Option<Vec<u8>>)>;

/// A session as loaded.
#[derive(Debug, Clone, Default)]
pub struct Loaded {
    /// The pack, if recorded.
    pub pack: Option<String>,
    /// Plan mode.
    pub plan_mode: bool,
    /// The model-visible conversation.
    pub messages: Vec<Message>,
    /// The last turn's undo record.
    pub undo: Option<(String, Originals)>,
}

/// The file of session `id`.
pub fn path(home: &Path, id: &str) -> PathBuf {
    home.join("native").join(format!("{id}.jsonl"))
}

/// Loads session `id` (missing: empty). A torn last line is skipped.
pub fn load(home: &Path, id: &str) -> Loaded {
    let mut s = Loaded::default();
    let Ok(text) = std::fs::read_to_string(path(home, id)) else {
        return s;
    };
    for line in text.lines() {
        match serde_json::from_str::<Record>(line) {
            Ok(Record::Meta { pack, plan_mode }) => {
                s.pack = Some(pack);
                s.plan_mode = plan_mode;
            }
            Ok(Record::Msg { m }) => s.messages.push(m),
            Ok(Record::Reset { messages }) => s.messages = messages,
            Ok(Record::Undo { task, files }) => s.undo = Some((task, files)),
            Err(_) => {}
        }
    }
    repair(&mut s.messages);
    s
}

/// Appends `records` to session `id`'s file.
pub fn append(home: &Path, id: &str, records: &[Record]) -> Result<(), String> {
    let p = path(home, id);
    if let Some(dir) = p.parent() {
        std::fs::create_dir_all(dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    }
    // The conversation holds tool output (files read, commands' output): the user's.
    let mut f = std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new().create(true).append(true),
        0o600,
    )
    .open(&p)
    .map_err(|e| format!("{}: {e}", p.display()))?;
    let mut buf = String::new();
    for r in records {
        buf.push_str(&serde_json::to_string(r).map_err(|e| e.to_string())?);
        buf.push('\n');
    }
    f.write_all(buf.as_bytes())
        .and_then(|_| f.flush())
        .map_err(|e| format!("{}: {e}", p.display()))
}

/// Gives every tool call an answer: a turn stopped between the model's call and its
/// result leaves the call unanswered, which every provider refuses on the next request.
pub fn repair(messages: &mut Vec<Message>) {
    let answered: std::collections::HashSet<String> = messages
        .iter()
        .flat_map(|m| m.blocks.iter())
        .filter_map(|b| match b {
            Block::ToolResult { id, .. } => Some(id.clone()),
            _ => None,
        })
        .collect();
    let mut i = 0;
    while i < messages.len() {
        let missing: Vec<Block> = messages[i]
            .blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse { id, name, .. } if !answered.contains(id) => {
                    Some(Block::ToolResult {
                        id: id.clone(),
                        name: name.clone(),
                        content: "the turn was stopped before this call finished".into(),
                        is_error: true,
                    })
                }
                _ => None,
            })
            .collect();
        if !missing.is_empty() {
            let next_is_results = messages.get(i + 1).is_some_and(|m| {
                m.role == Role::User
                    && m.blocks
                        .iter()
                        .any(|b| matches!(b, Block::ToolResult { .. }))
            });
            if next_is_results {
                messages[i + 1].blocks.extend(missing);
            } else {
                messages.insert(
                    i + 1,
                    Message {
                        role: Role::User,
                        blocks: missing,
                        origin: Default::default(),
                    },
                );
            }
        }
        i += 1;
    }
}

/// The undo record from this turn's originals.
pub fn undo_record(task: &str, originals: BTreeMap<PathBuf, Option<Vec<u8>>>) -> Record {
    Record::Undo {
        task: task.into(),
        files: originals.into_iter().collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_conversation_file_is_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        append(dir.path(), "s1", &[]).unwrap_or_else(|e| panic!("{e}"));
        let mode = std::fs::metadata(path(dir.path(), "s1")).map(|m| m.permissions().mode());
        assert_eq!(mode.ok().map(|m| m & 0o777), Some(0o600));
    }
}
