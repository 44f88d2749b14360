//! Forking a native session, at its end or at a turn.
//!
//! An agent that forks a session itself (its reader's `forks_itself`: Claude Code,
//! Codex) gets, with a store to keep the record in, a managed session recorded as
//! forked from a point of the parent: the reader's `fork_point` names that point in
//! the agent's own terms, and the driver's first turn asks the agent for the fork. The
//! agent writes the new session's file; the parent's is left as it is.
//!
//! For the others, and without a store, the reader's `fork_file` writes the fork: a new
//! session file in the same home with the history up to that turn, under a new id,
//! which the agent's own resume then continues. A file the agent rewrites is cut by
//! turns, the others by the byte offset of the next turn, which the index keeps.

use std::path::Path;

use rusqlite::{params, OptionalExtension};
use weft_agent_spec::sessions::{new_id, Keep};
use weft_protocol::{ForkOrigin, LibrarySession, SessionRecord};

use crate::{query, Library, LibraryError};

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
    /// prompt has the agent write the fork (see [`fork`](self)). Others get a file
    /// written here.
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
        let agent = self.agent(&session.agent)?;
        let reader = agent.sessions();
        if self.store.is_some() && reader.forks_itself() {
            let own = at.map(|n| n - inherited);
            return self.fork_by_agent(key, &session, sid, &path, own, at.unwrap_or(all));
        }
        let keep = match at {
            None => Keep::All,
            Some(n) if reader.rewrites() => Keep::Turns(n),
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
        let forked = reader.fork_file(&path, &old, keep)?;
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
        let reader = self.agent(&session.agent)?.sessions();
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
                let point = reader.fork_point(path, from as u64, until.map(|u| u as u64))?;
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
                session_id: reader.fork_takes_id().then(|| id.clone()),
            }),
            switch: None,
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
