//! Weft's own sessions as every list and per-turn search shows them: the store's
//! records with the user's marks applied. The marks (a title of their own, pinned,
//! archived, deleted) live in `lib_marks`, which only the library writes; reading them
//! here is what keeps the app's sidebar, `weft sessions` and the Library view telling
//! the same story about a session.

use std::collections::HashMap;

use weft_protocol::{SearchHit, SessionInfo};

use crate::{Library, LibraryError};

/// One session's marks.
#[derive(Default)]
struct Marks {
    title: Option<String>,
    pinned: bool,
    archived: bool,
    /// Deleted: off every list.
    hidden: bool,
}

impl Library {
    /// Weft's sessions (in `workdir` when given), pinned first, then newest first, each
    /// under the title the user gave it and marked pinned or archived; archived ones
    /// only with `archived`, deleted ones never.
    pub fn managed_sessions(
        &self,
        workdir: Option<&str>,
        archived: bool,
    ) -> Result<Vec<SessionInfo>, LibraryError> {
        let Some(store) = &self.store else {
            return Ok(Vec::new());
        };
        let mut sessions = store.list_sessions(workdir)?;
        let marks = self.marks()?;
        sessions.retain(|s| {
            marks
                .get(&s.session_key)
                .is_none_or(|m| !m.hidden && (archived || !m.archived))
        });
        for s in &mut sessions {
            if let Some(m) = marks.get(&s.session_key) {
                if let Some(title) = &m.title {
                    s.title.clone_from(title);
                }
                s.pinned = m.pinned;
                s.archived = m.archived;
            }
        }
        // Stable: the store's newest-first order holds within pinned and unpinned.
        sessions.sort_by_key(|s| !s.pinned);
        Ok(sessions)
    }

    /// Weft's finished turns whose prompt or reply match `query`, best first, at most
    /// `limit`; a deleted session's turns are not found (an archived one's are: that
    /// is how an archived session is found again).
    pub fn search_turns(&self, query: &str, limit: usize) -> Result<Vec<SearchHit>, LibraryError> {
        let Some(store) = &self.store else {
            return Ok(Vec::new());
        };
        let hidden: Vec<String> = self
            .read
            .lock()
            .prepare_cached("SELECT session_key FROM lib_marks WHERE hidden = 1")?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        // Ask for as many more as could be dropped, so `limit` still comes back.
        let mut hits = store.search(query, limit.saturating_add(hidden.len()))?;
        hits.retain(|h| !hidden.contains(&h.session_key));
        hits.truncate(limit);
        Ok(hits)
    }

    fn marks(&self) -> Result<HashMap<String, Marks>, LibraryError> {
        let conn = self.read.lock();
        let mut st = conn.prepare_cached(
            "SELECT session_key, title, COALESCE(pinned, 0), COALESCE(archived, 0), COALESCE(hidden, 0)
             FROM lib_marks",
        )?;
        let rows = st.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                Marks {
                    title: r.get(1)?,
                    pinned: r.get(2)?,
                    archived: r.get(3)?,
                    hidden: r.get(4)?,
                },
            ))
        })?;
        Ok(rows.collect::<Result<_, _>>()?)
    }
}
