//! Opening a session's transcript a page of turns at a time, from the agent's file
//! (the byte range of the turns asked for), or from the excerpts the index kept when
//! the file is gone.
//!
//! A fork's first turns may live in its parent's file: before the agent has written
//! the fork (a fork Weft made, waiting for its first prompt), all of them; with Codex's
//! paginated history, always: a forked rollout's `session_meta.history_base` names the
//! parent thread and the byte offset its history ends at instead of copying it
//! (observed with codex-cli 0.171.0). Those turns come first, then the fork's own.

use rusqlite::params;
use weft_protocol::{LibrarySession, TranscriptPage, UniversalSnapshot};

use crate::{query, Library, LibraryError};

/// A transcript's sources (see [`Library::parts`]).
struct Parts {
    /// The session's own file's session.
    own: Option<LibrarySession>,
    /// The parent's session and how many of its first turns come first.
    inherited: Option<(LibrarySession, u32)>,
}

impl Library {
    /// Turns `[start, start + limit)` of a native session's transcript (by default the
    /// last `limit`, 50 unless given).
    pub fn open_transcript(
        &self,
        key: &str,
        start: Option<u32>,
        limit: Option<u32>,
    ) -> Result<TranscriptPage, LibraryError> {
        let Parts { own, inherited } = self.parts(key)?;
        let k = inherited.as_ref().map_or(0, |(_, n)| *n);
        let total = k + own.as_ref().map_or(0, |s| s.turns);
        let limit = limit.unwrap_or(50).clamp(1, 1000);
        let start = start.unwrap_or(total.saturating_sub(limit)).min(total);
        let end = (start + limit).min(total);
        let mut turns = Vec::new();
        let mut gone = false;
        if let Some((parent, _)) = inherited.as_ref().filter(|_| start < k) {
            let (t, g) = self.turns_of(parent, start, end.min(k))?;
            turns.extend(t);
            gone |= g;
        }
        if let Some(own) = own.as_ref().filter(|_| end > k) {
            let (t, g) = self.turns_of(own, start.max(k) - k, end - k)?;
            turns.extend(t);
            gone |= g;
        }
        Ok(TranscriptPage {
            session_key: key.to_string(),
            total,
            start,
            turns,
            source_gone: gone,
        })
    }

    /// The turns of managed session `key`'s transcript from before its first turn in
    /// Weft — an adopted session's past, a fork's inherited turns — paged as
    /// [`Self::open_transcript`] pages (by default the last `limit`); the page's
    /// `total` counts those turns only. The agent's file holds Weft's own turns too
    /// (their times are after Weft's first), and the store has those.
    pub fn earlier_turns(
        &self,
        key: &str,
        start: Option<u32>,
        limit: Option<u32>,
    ) -> Result<TranscriptPage, LibraryError> {
        self.flush_store();
        let first: Option<i64> = self
            .read
            .lock()
            .prepare_cached("SELECT MIN(started_at) FROM turns WHERE session_key = ?1")?
            .query_row([key], |r| r.get(0))?;
        let Parts { own, inherited } = self.parts(key)?;
        let all = inherited.map_or(0, |(_, n)| n) + own.as_ref().map_or(0, |s| s.turns);
        let later: u32 = match (first, own) {
            (Some(first), Some(own)) => match self.file_of(&own.session_key)? {
                Some((sid, _, _)) => self
                    .read
                    .lock()
                    .prepare_cached(
                        "SELECT COUNT(*) FROM lib_turns WHERE session_id = ?1 AND at >= ?2",
                    )?
                    .query_row(params![sid, first], |r| r.get(0))?,
                None => 0,
            },
            _ => 0,
        };
        let total = all.saturating_sub(later);
        let limit = limit.unwrap_or(50).clamp(1, 1000);
        let start = start.unwrap_or(total.saturating_sub(limit)).min(total);
        let n = limit.min(total - start);
        let mut page = if n == 0 {
            TranscriptPage {
                session_key: key.to_string(),
                total,
                start,
                turns: Vec::new(),
                source_gone: false,
            }
        } else {
            self.open_transcript(key, Some(start), Some(n))?
        };
        page.total = total;
        Ok(page)
    }

    /// Where session `key`'s transcript comes from: its own file, and the parent's turns
    /// it starts with (all of them while a fork Weft made waits for its first prompt).
    fn parts(&self, key: &str) -> Result<Parts, LibraryError> {
        let own = self.native(key)?;
        let inherited = match &own {
            Some(s) => self.codex_base(s)?,
            None => {
                let fork = self
                    .fork_origin(key)?
                    .ok_or_else(|| LibraryError::Unknown(key.to_string()))?;
                let parent = self
                    .native(&fork.parent_key)?
                    .ok_or_else(|| LibraryError::Unknown(fork.parent_key.clone()))?;
                let n = fork.turns.min(parent.turns);
                Some((parent, n))
            }
        };
        Ok(Parts { own, inherited })
    }

    /// The parent's session and how many of its turns a Codex fork's history starts
    /// with, when its rollout refers to them (`history_base`) and the parent is indexed.
    pub(crate) fn codex_base(
        &self,
        s: &LibrarySession,
    ) -> Result<Option<(LibrarySession, u32)>, LibraryError> {
        let Some(agent) = self.agents.iter().find(|a| a.id() == s.agent) else {
            return Ok(None);
        };
        let Some((_, path, gone)) = self.file_of(&s.session_key)? else {
            return Ok(None);
        };
        if gone {
            return Ok(None);
        }
        let Some((parent_id, end)) = agent.sessions().history_base(&path) else {
            return Ok(None);
        };
        let parent_key = format!("{}:{parent_id}", s.agent);
        let Some(parent) = query::native_session(&self.read.lock(), &parent_key)? else {
            return Ok(None);
        };
        let Some((psid, _, _)) = self.file_of(&parent_key)? else {
            return Ok(None);
        };
        let n: u32 = self
            .read
            .lock()
            .prepare_cached("SELECT COUNT(*) FROM lib_turns WHERE session_id = ?1 AND off < ?2")?
            .query_row(params![psid, end as i64], |r| r.get(0))?;
        Ok(Some((parent, n)))
    }

    /// Turns `[start, end)` of `session`'s own file, and whether the file is gone.
    fn turns_of(
        &self,
        session: &LibrarySession,
        start: u32,
        end: u32,
    ) -> Result<(Vec<UniversalSnapshot>, bool), LibraryError> {
        let native_key = session.session_key.clone();
        let (sid, path, gone) = self
            .file_of(&native_key)?
            .ok_or_else(|| LibraryError::Unknown(native_key.clone()))?;
        let offsets: Vec<(u32, i64)> = {
            let conn = self.read.lock();
            let mut stmt = conn.prepare_cached(
                "SELECT n, off FROM lib_turns WHERE session_id = ?1 AND n BETWEEN ?2 AND ?3 ORDER BY n",
            )?;
            let rows = stmt.query_map(params![sid, start + 1, end + 1], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            rows.collect::<rusqlite::Result<_>>()?
        };
        let native_id = session.session_id.clone().unwrap_or_default();
        if gone || !path.is_file() {
            return Ok((self.excerpt_turns(sid, start, end, session)?, gone));
        }
        let reader = self.agent(&session.agent)?.sessions();
        let turns = if reader.rewrites() {
            let all = reader.open_page(&native_id, &path, 0, None)?;
            all.into_iter()
                .skip(start as usize)
                .take((end - start) as usize)
                .collect()
        } else {
            let from = offsets
                .iter()
                .find(|(n, _)| *n == start + 1)
                .map(|o| o.1 as u64);
            let until = offsets
                .iter()
                .find(|(n, _)| *n == end + 1)
                .map(|o| o.1 as u64);
            match from {
                // Without the next turn's offset the read runs to the end of the file,
                // which may already hold turns the index has not reached (the agent is
                // still writing them): the page is the turns the index counts.
                Some(from) => {
                    let mut page = reader.open_page(&native_id, &path, from, until)?;
                    page.truncate((end - start) as usize);
                    page
                }
                None => Vec::new(),
            }
        };
        Ok((turns, gone))
    }

    /// What the index kept of turns whose file is gone: the excerpts.
    pub(crate) fn excerpt_turns(
        &self,
        sid: i64,
        start: u32,
        end: u32,
        session: &LibrarySession,
    ) -> Result<Vec<UniversalSnapshot>, LibraryError> {
        let conn = self.read.lock();
        let mut stmt = conn.prepare_cached(
            "SELECT d.turn, d.kind, d.at, d.text FROM lib_docs d
             WHERE d.session_id = ?1 AND d.turn BETWEEN ?2 AND ?3 ORDER BY d.id",
        )?;
        let rows = stmt.query_map(params![sid, start + 1, end], |r| {
            Ok((
                r.get::<_, u32>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, i64>(2)?,
                r.get::<_, String>(3)?,
            ))
        })?;
        let mut out: Vec<UniversalSnapshot> = Vec::new();
        for row in rows {
            let (turn, kind, at, text) = row?;
            if kind == "prompt" || out.is_empty() {
                out.push(UniversalSnapshot {
                    phase: weft_protocol::Phase::Done,
                    agent: session.agent.clone(),
                    session_id: session.session_id.clone(),
                    started_at: Some(at),
                    updated_at: at,
                    incomplete: true,
                    notices: vec![format!(
                        "turn {turn}: the agent's file is gone; these are the excerpts Weft kept"
                    )],
                    ..Default::default()
                });
            }
            if let Some(t) = out.last_mut() {
                match kind.as_str() {
                    "prompt" => t.prompt = text,
                    _ => {
                        if !t.text.is_empty() {
                            t.text.push_str("\n\n");
                        }
                        t.text.push_str(&text);
                    }
                }
                t.updated_at = at;
            }
        }
        Ok(out)
    }
}
