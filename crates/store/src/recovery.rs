//! Rebuilding turns that were still running when Weft stopped.
//!
//! A `running` turn at open time belongs to a process that is gone (or a store dropped
//! without `finish_turn`). Its start snapshot and every committed event are on disk, so
//! it is rebuilt exactly as the kernel built it live — the same
//! [`weft_protocol::Accumulator`] folding the same events in the same order — then ended
//! as done-but-incomplete, its pending questions dropped (nobody is left to answer
//! them). Its events are kept.

use rusqlite::{params, Connection, TransactionBehavior};
use weft_protocol::{Accumulator, UniversalSnapshot};

use crate::{fts, now_ms, owner, AGENT_GONE, INTERRUPTED_ERROR, INTERRUPTED_NOTICE};

struct Stranded {
    id: i64,
    task_id: String,
    prompt: String,
    snapshot: String,
    updated_at: i64,
    owner: Option<String>,
}

/// Ends every turn left `running` by a process that is gone, in one transaction;
/// returns how many there were.
pub(crate) fn recover(conn: &mut Connection) -> rusqlite::Result<usize> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let stranded: Vec<Stranded> = tx
        .prepare(
            "SELECT id, task_id, prompt, snapshot, updated_at, owner FROM turns
             WHERE status = 'running' ORDER BY id",
        )?
        .query_map([], |r| {
            Ok(Stranded {
                id: r.get(0)?,
                task_id: r.get(1)?,
                prompt: r.get(2)?,
                snapshot: r.get(3)?,
                updated_at: r.get(4)?,
                owner: r.get(5)?,
            })
        })?
        .collect::<rusqlite::Result<Vec<_>>>()?
        .into_iter()
        // Another live process is streaming into it: not ours to end.
        .filter(|t| !owner::is_other_live_process(t.owner.as_deref()))
        .collect();
    for turn in &stranded {
        let mut snapshot = rebuild(&tx, turn)?;
        for title in expire_pending(&tx, &turn.task_id)? {
            snapshot
                .notices
                .push(format!("\"{title}\" expired: {AGENT_GONE}"));
        }
        let json = match serde_json::to_string(&snapshot) {
            Ok(json) => json,
            Err(e) => {
                tracing::warn!(
                    task_id = turn.task_id,
                    "session store: cannot encode a rebuilt turn: {e}"
                );
                continue;
            }
        };
        tx.execute(
            "UPDATE turns SET status = 'incomplete', snapshot = ?2, updated_at = ?3 WHERE id = ?1",
            params![turn.id, json, snapshot.updated_at],
        )?;
        fts::index_turn(&tx, turn.id, &snapshot.prompt, &snapshot.text)?;
        tracing::info!(
            task_id = turn.task_id,
            "session store: rebuilt a turn left running when Weft stopped"
        );
    }
    tx.commit()?;
    Ok(stranded.len())
}

/// Questions still pending in a turn whose process is gone expire (never "denied":
/// nobody answered); returns their titles.
fn expire_pending(conn: &Connection, task_id: &str) -> rusqlite::Result<Vec<String>> {
    let pending: Vec<(String, String)> = conn
        .prepare(
            "SELECT prompt_id, interaction FROM interactions
             WHERE task_id = ?1 AND outcome IS NULL ORDER BY created_at",
        )?
        .query_map([task_id], |r| Ok((r.get(0)?, r.get(1)?)))?
        .collect::<rusqlite::Result<_>>()?;
    let mut titles = Vec::new();
    for (prompt_id, json) in pending {
        conn.execute(
            "UPDATE interactions SET outcome = 'expired', detail = ?2, outcome_at = ?3
             WHERE prompt_id = ?1",
            params![prompt_id, AGENT_GONE, now_ms()],
        )?;
        let title = serde_json::from_str::<weft_protocol::Interaction>(&json)
            .map(|i| i.title)
            .unwrap_or(prompt_id);
        titles.push(title);
    }
    Ok(titles)
}

fn rebuild(conn: &Connection, turn: &Stranded) -> rusqlite::Result<UniversalSnapshot> {
    let start = match serde_json::from_str::<UniversalSnapshot>(&turn.snapshot) {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(
                task_id = turn.task_id,
                "session store: a turn's start snapshot does not parse ({e}); rebuilding from its events alone"
            );
            UniversalSnapshot {
                task_id: Some(turn.task_id.clone()),
                prompt: turn.prompt.clone(),
                ..Default::default()
            }
        }
    };
    let mut acc = Accumulator::new(start);
    let mut last = turn.updated_at;
    let mut statement =
        conn.prepare("SELECT n, at, event FROM events WHERE task_id = ?1 ORDER BY n")?;
    let mut rows = statement.query([&turn.task_id])?;
    while let Some(row) = rows.next()? {
        let n: i64 = row.get(0)?;
        let at: i64 = row.get(1)?;
        let json: String = row.get(2)?;
        last = last.max(at);
        for (i, event) in crate::row_events(&json).into_iter().enumerate() {
            match event {
                Ok(event) => {
                    acc.apply(&event, at);
                }
                Err(e) => tracing::warn!(
                    task_id = turn.task_id,
                    n = n + i as i64,
                    "session store: skipped an event that does not parse: {e}"
                ),
            }
        }
    }
    acc.finish(Some(INTERRUPTED_ERROR.to_string()), true, last);
    let mut snapshot = acc.into_snapshot();
    snapshot.notices.push(INTERRUPTED_NOTICE.to_string());
    Ok(snapshot)
}
