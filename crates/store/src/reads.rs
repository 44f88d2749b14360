//! Queries, run on the read connection (after a flush: see [`crate::SqliteStore`]).

use rusqlite::{params, Connection, OptionalExtension, Row};
use weft_protocol::{Phase, SessionInfo, UniversalSnapshot};

use crate::{
    fts, InteractionOutcome, SearchHit, SessionRecord, StoreError, SNIPPET_CLOSE, SNIPPET_OPEN,
};

const SESSION_COLUMNS: &str =
    "s.session_key, s.agent, s.session_id, s.workdir, s.title, s.model, s.effort, s.created_at, s.updated_at, s.account, s.fork, s.switch";

fn session_from_row(r: &Row<'_>) -> rusqlite::Result<SessionRecord> {
    Ok(SessionRecord {
        session_key: r.get(0)?,
        agent: r.get(1)?,
        session_id: r.get(2)?,
        workdir: r.get(3)?,
        title: r.get(4)?,
        model: r.get(5)?,
        effort: r.get(6)?,
        created_at: r.get(7)?,
        updated_at: r.get(8)?,
        account: r.get(9)?,
        // A value this build cannot read is no fork (the session starts afresh).
        fork: r
            .get::<_, Option<String>>(10)?
            .and_then(|j| serde_json::from_str(&j).ok()),
        // Likewise a pending switch (the session stays on the agent it is on).
        switch: r
            .get::<_, Option<String>>(11)?
            .and_then(|j| serde_json::from_str(&j).ok()),
    })
}

/// The phase a turn's status stands for: a turn still `running` is streaming; a
/// finished one, complete or not, is done.
fn phase_of(status: Option<&str>) -> Phase {
    match status {
        None => Phase::Idle,
        Some("running") => Phase::Streaming,
        Some(_) => Phase::Done,
    }
}

pub(crate) fn get_session(
    conn: &Connection,
    session_key: &str,
) -> Result<Option<SessionRecord>, StoreError> {
    let sql = format!("SELECT {SESSION_COLUMNS} FROM sessions s WHERE s.session_key = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([session_key], session_from_row)
        .optional()?)
}

pub(crate) fn list_sessions(
    conn: &Connection,
    workdir: Option<&str>,
) -> Result<Vec<SessionInfo>, StoreError> {
    let sql = format!(
        "SELECT {SESSION_COLUMNS},
             (SELECT COUNT(*) FROM turns t WHERE t.session_key = s.session_key),
             (SELECT t.status FROM turns t WHERE t.session_key = s.session_key
                  ORDER BY t.n DESC LIMIT 1)
         FROM sessions s
         WHERE ?1 IS NULL OR s.workdir = ?1
         ORDER BY s.updated_at DESC, s.session_key"
    );
    let mut statement = conn.prepare_cached(&sql)?;
    let rows = statement.query_map([workdir], |r| {
        let record = session_from_row(r)?;
        let turns: i64 = r.get(12)?;
        let status: Option<String> = r.get(13)?;
        Ok(record.info(
            phase_of(status.as_deref()),
            u32::try_from(turns).unwrap_or(u32::MAX),
        ))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Finished turns (done or incomplete, including those rebuilt after a crash), oldest
/// first. The turn running now is not history: its live snapshot is the runner's.
pub(crate) fn history(
    conn: &Connection,
    session_key: &str,
) -> Result<Vec<UniversalSnapshot>, StoreError> {
    history_page(conn, session_key, None, None)
}

/// The newest `limit` finished turns before turn `before`, oldest first.
pub(crate) fn history_page(
    conn: &Connection,
    session_key: &str,
    limit: Option<u32>,
    before: Option<&str>,
) -> Result<Vec<UniversalSnapshot>, StoreError> {
    let mut statement = conn.prepare_cached(
        "SELECT task_id, snapshot FROM (
             SELECT task_id, snapshot, n FROM turns
             WHERE session_key = ?1 AND status != 'running'
               AND (?2 IS NULL OR n < (SELECT n FROM turns WHERE task_id = ?2))
             ORDER BY n DESC LIMIT ?3
         ) ORDER BY n",
    )?;
    let limit = limit.map_or(-1, i64::from);
    let mut rows = statement.query(params![session_key, before, limit])?;
    let mut out = Vec::new();
    while let Some(row) = rows.next()? {
        let task_id: String = row.get(0)?;
        let json: String = row.get(1)?;
        match serde_json::from_str(&json) {
            Ok(snapshot) => out.push(snapshot),
            Err(e) => tracing::warn!(
                session_key,
                task_id,
                "session store: skipped a turn whose snapshot does not parse: {e}"
            ),
        }
    }
    Ok(out)
}

pub(crate) fn search(
    conn: &Connection,
    query: &str,
    limit: usize,
) -> Result<Vec<SearchHit>, StoreError> {
    let Some(expression) = fts::match_expression(query) else {
        return Ok(Vec::new());
    };
    if limit == 0 {
        return Ok(Vec::new());
    }
    let mut statement = conn.prepare_cached(
        "SELECT t.session_key, t.task_id, snippet(turns_fts, -1, ?2, ?3, '…', 16)
         FROM turns_fts JOIN turns t ON t.id = turns_fts.rowid
         WHERE turns_fts MATCH ?1
         ORDER BY rank
         LIMIT ?4",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = statement.query_map(
        params![expression, SNIPPET_OPEN, SNIPPET_CLOSE, limit],
        |r| {
            Ok(SearchHit {
                session_key: r.get(0)?,
                task_id: r.get(1)?,
                snippet: r.get(2)?,
            })
        },
    )?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

pub(crate) fn interaction_outcome(
    conn: &Connection,
    prompt_id: &str,
) -> Result<Option<InteractionOutcome>, StoreError> {
    Ok(conn
        .prepare_cached(
            "SELECT outcome, detail, outcome_by FROM interactions
             WHERE prompt_id = ?1 AND outcome IS NOT NULL",
        )?
        .query_row([prompt_id], |r| {
            Ok(InteractionOutcome {
                outcome: r.get(0)?,
                detail: r.get(1)?,
                by: r.get(2)?,
            })
        })
        .optional()?)
}

pub(crate) fn processes(conn: &Connection) -> Result<Vec<(u32, u64)>, StoreError> {
    let mut statement = conn.prepare_cached("SELECT pid, start_ticks FROM agent_processes")?;
    let rows = statement.query_map([], |r| {
        let pid: u32 = r.get(0)?;
        let ticks: i64 = r.get(1)?;
        Ok((pid, u64::try_from(ticks).unwrap_or(0)))
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}
