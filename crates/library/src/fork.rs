//! Forking a native session, at its end or at a turn.
//!
//! Claude Code and Codex fork a session themselves, so for them (with a store to keep
//! the record in) a fork is a managed session recorded as forked from a point of the
//! parent: [`fork_point`] names that point in the agent's own terms (Claude: the
//! `uuid` of the turn's last assistant record, for `--resume-session-at`; Codex: the
//! turn's id, for `thread/fork`'s `lastTurnId`), and the driver's first turn asks the
//! agent for the fork. The agent writes the new session's file; the parent's is left
//! as it is.
//!
//! For the others (Gemini), and without a store, [`fork_file`] writes the fork
//! itself: a new session file in the same home with the history up to that turn,
//! under a new id, which the agent's own resume then continues. A Gemini chat is not
//! cut by bytes (a `$set` patch may hold many turns in one line): the copy is whole and
//! ends with the `{"$rewindTo": id}` record Gemini's own `/rewind` appends, naming the
//! first user message after the turn, so Gemini (and the index) drop what follows.
//! Otherwise it writes what Claude Code's `--resume <id> --fork-session` (with `--resume-session-at`) would: every record is
//! copied as it is (uuids, times, message ids and usage kept, so usage totals count
//! the copied calls once) with its `sessionId` changed. Codex's copy gets a new
//! `session_meta.id` and `forked_from_id` (what app-server `thread/fork` records);
//! Gemini's a new `sessionId`. Lines are copied one at a time: memory stays bounded.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};

use rusqlite::{params, OptionalExtension};
use serde_json::Value;
use weft_protocol::{ForkOrigin, LibrarySession, SessionRecord};

use crate::lines::{Line, LineReader};
use crate::{query, Library, LibraryError};

/// A fork written to disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    /// The new session's native id.
    pub native_id: String,
    /// Its file.
    pub path: PathBuf,
}

/// A new v4 UUID (a session id the agent accepts).
pub fn new_id() -> String {
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

/// The agent's own name for the end of the turn in bytes `[from, until)` of `source`
/// (`None`: to the end of the file): Claude's last main-chain assistant record's
/// `uuid`, Codex's turn id. `None` when the turn has none (a turn that never got a
/// reply).
pub fn fork_point(
    agent: &str,
    source: &Path,
    from: u64,
    until: Option<u64>,
) -> Result<Option<String>, LibraryError> {
    let mut reader = LineReader::open(source, from)?;
    if let Some(end) = until {
        reader = reader.until(end);
    }
    let mut found = None;
    while let Some(line) = reader.next_line()? {
        let Line::Text { bytes, .. } = line else {
            continue;
        };
        let Ok(v) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        match agent {
            "claude" => {
                if v["type"] == "assistant" && v["isSidechain"] != true {
                    if let Some(u) = v["uuid"].as_str() {
                        found = Some(u.to_string());
                    }
                }
            }
            "codex" => {
                // Everything from the turn's user message on carries its id; the next
                // turn's `task_started` comes later in the range.
                if let Some(t) = v["payload"]["turn_id"].as_str() {
                    return Ok(Some(t.to_string()));
                }
            }
            _ => return Ok(None),
        }
    }
    Ok(found)
}

/// How much of the parent a fork written here keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep<'a> {
    /// All of it.
    All,
    /// The lines before this byte (a turn's start).
    Until(u64),
    /// All lines, then a Gemini `$rewindTo` this message id (the next turn's prompt).
    RewindTo(&'a str),
}

/// Copies what `keep` names of `source` into a new session of `agent` beside it.
pub fn fork_file(
    agent: &str,
    source: &Path,
    old_id: &str,
    keep: Keep<'_>,
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
        // Gemini's own name (`session-<this minute, UTC>-<id8>`): the CLI finds and
        // deletes a session's files by it, and a resume in the minute the fork was made
        // writes to this file rather than leaving a header-only one beside it.
        "gemini" => {
            let now = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX));
            let [y, m, d, h, min] = crate::export::civil_utc(now);
            dir.join(format!(
                "session-{y:04}-{m:02}-{d:02}T{h:02}-{min:02}-{}.jsonl",
                &id[..8]
            ))
        }
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
    if let Keep::Until(end) = keep {
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
    if let Keep::RewindTo(id) = keep {
        serde_json::to_writer(&mut out, &serde_json::json!({ "$rewindTo": id }))?;
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

/// The message id of turn `n`'s prompt in a Gemini chat, turns counted as the index
/// counts them (the user's own prompts, not tool results or Gemini's injected context).
fn gemini_prompt_id(path: &Path, n: u32) -> Result<String, LibraryError> {
    let chat = crate::gemini::read_chat(path)?;
    let prompt = chat
        .messages
        .iter()
        .filter(|m| m.prompt().is_some())
        .nth(n as usize - 1)
        .ok_or_else(|| LibraryError::Invalid(format!("the chat has no turn {n}")))?;
    prompt.id.clone().ok_or_else(|| {
        LibraryError::Invalid(format!(
            "turn {n}'s prompt has no message id: the chat cannot be rewound to it"
        ))
    })
}

/// Codex's paginated history: a forked rollout's `session_meta.history_base` (the
/// parent thread's id and the byte offset of its rollout the fork's history ends at).
pub fn codex_history_base(path: &Path) -> Option<(String, u64)> {
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

impl Library {
    /// Where managed session `key` was forked from, if it was.
    pub(crate) fn fork_origin(&self, key: &str) -> Result<Option<ForkOrigin>, LibraryError> {
        let Some(store) = &self.store else {
            return Ok(None);
        };
        Ok(store.get_session(key)?.and_then(|r| r.fork))
    }

    /// Forks a native session (or a managed one's native file) at its end, or after
    /// turn `at` (1-based): a new session of the same agent in the same home holding
    /// the history up to there, recorded with its parent. Returns the new session.
    ///
    /// Claude and Codex sessions (with a store) fork by the agent's own mechanism: the
    /// new session is a managed one recorded as forked from that point, and its first
    /// prompt has the agent write the fork (see [`fork`]). Others get a file written
    /// here.
    pub fn fork(&self, key: &str, at: Option<u32>) -> Result<LibrarySession, LibraryError> {
        let Some(session) = self.native(key)? else {
            // A fork not started yet is its parent up to the fork point.
            let origin = self
                .fork_origin(key)?
                .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
            let n = at.unwrap_or(origin.turns);
            if n == 0 || n > origin.turns {
                return Err(LibraryError::Invalid(format!(
                    "{key} has turns 1 to {}; there is no turn {n}",
                    origin.turns
                )));
            }
            return self.fork(&origin.parent_key, Some(n));
        };
        let (sid, path, gone) = self
            .file_of(&session.session_key)?
            .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
        if gone || !path.is_file() {
            return Err(LibraryError::Invalid(format!(
                "the agent's file of {key} is gone: it cannot be forked"
            )));
        }
        // Turns numbered as the transcript shows them: a Codex fork's first ones are
        // its parent's (see `open`); forking at one of those forks the parent.
        let base = self.codex_base(&session)?;
        let inherited = base.as_ref().map_or(0, |(_, n)| *n);
        let all = inherited + session.turns;
        if let (Some(n), Some((parent, _))) = (at, &base) {
            if n > 0 && n <= inherited {
                return self.fork(&parent.session_key, Some(n));
            }
        }
        let at = match at {
            Some(n) if n == 0 || n > all => {
                return Err(LibraryError::Invalid(format!(
                    "{key} has turns 1 to {all}; there is no turn {n}"
                )))
            }
            Some(n) if n == all => None,
            other => other,
        };
        if self.store.is_some() && matches!(session.agent.as_str(), "claude" | "codex") {
            let own = at.map(|n| n - inherited);
            return self.fork_by_agent(key, &session, sid, &path, own, at.unwrap_or(all));
        }
        let rewind_id;
        let keep = match at {
            None => Keep::All,
            Some(n) if session.agent == "gemini" => {
                rewind_id = gemini_prompt_id(&path, n + 1)?;
                Keep::RewindTo(&rewind_id)
            }
            Some(n) => {
                let off: i64 = self
                    .read
                    .lock()
                    .prepare_cached("SELECT off FROM lib_turns WHERE session_id = ?1 AND n = ?2")?
                    .query_row(params![sid, n + 1], |r| r.get(0))?;
                Keep::Until(off as u64)
            }
        };
        let old = session.session_id.clone().unwrap_or_default();
        let forked = fork_file(&session.agent, &path, &old, keep)?;
        self.index_paths(std::slice::from_ref(&forked.path))?;
        let new_key = format!("{}:{}", session.agent, forked.native_id);
        self.read.lock().execute(
            "INSERT INTO lib_marks (session_key, parent_key) VALUES (?1, ?2)
             ON CONFLICT (session_key) DO UPDATE SET parent_key = excluded.parent_key",
            // The key forked from (a managed session's own, when it is one): the
            // native key of a Weft session is not listed apart from it.
            params![new_key, key],
        )?;
        self.native(&new_key)?
            .ok_or_else(|| LibraryError::Invalid("the fork was written but not indexed".into()))
    }

    /// A fork the agent makes at its first prompt: the managed record of a new session
    /// of the same agent, folder and account, forked from `session` after turn `at` of
    /// its own file (none: its end) and keeping `kept` turns, and its parent mark.
    fn fork_by_agent(
        &self,
        key: &str,
        session: &LibrarySession,
        sid: i64,
        path: &Path,
        at: Option<u32>,
        kept: u32,
    ) -> Result<LibrarySession, LibraryError> {
        let Some(store) = &self.store else {
            return Err(LibraryError::Invalid("no store to keep the fork in".into()));
        };
        let parent_id = session
            .session_id
            .clone()
            .ok_or_else(|| LibraryError::Invalid(format!("{key} has no agent session id")))?;
        let workdir = session.workdir.clone().ok_or_else(|| {
            LibraryError::Invalid(format!("the folder `{key}` ran in is not known"))
        })?;
        let point = match at {
            None => None,
            Some(n) => {
                let conn = self.read.lock();
                let mut stmt = conn
                    .prepare_cached("SELECT off FROM lib_turns WHERE session_id = ?1 AND n = ?2")?;
                let from: i64 = stmt.query_row(params![sid, n], |r| r.get(0))?;
                let until: Option<i64> = stmt
                    .query_row(params![sid, n + 1], |r| r.get(0))
                    .optional()?;
                drop(stmt);
                drop(conn);
                let point = fork_point(&session.agent, path, from as u64, until.map(|u| u as u64))?;
                Some(point.ok_or_else(|| {
                    LibraryError::Invalid(format!(
                        "turn {n} of {key} has no reply of the agent's to fork after"
                    ))
                })?)
            }
        };
        let id = new_id();
        let new_key = format!("{}:{id}", session.agent);
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.as_millis() as i64);
        store.upsert_session(&SessionRecord {
            session_key: new_key.clone(),
            agent: session.agent.clone(),
            session_id: None,
            workdir,
            title: session.title.clone(),
            model: None,
            effort: None,
            created_at: now,
            updated_at: now,
            account: session.account.clone(),
            fork: Some(ForkOrigin {
                parent_key: key.to_string(),
                parent_id,
                at: point,
                turns: kept,
                // Claude takes the new session's id from outside: the fork's key and
                // its native id are then the same.
                session_id: (session.agent == "claude").then(|| id.clone()),
            }),
        })?;
        store.flush()?;
        self.read.lock().execute(
            "INSERT INTO lib_marks (session_key, parent_key) VALUES (?1, ?2)
             ON CONFLICT (session_key) DO UPDATE SET parent_key = excluded.parent_key",
            params![new_key, key],
        )?;
        query::managed_session(&self.read.lock(), &new_key)?
            .ok_or_else(|| LibraryError::Invalid("the fork was recorded but not found".into()))
    }
}
