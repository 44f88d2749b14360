//! The store as it is on disk: the harness reads SQLite itself (read-only), so what it
//! checks is what a later process would find, not what the daemon says it has.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension};
use serde_json::Value;

/// One turn as stored.
#[derive(Debug, Clone)]
pub struct StoredTurn {
    /// `running`, `done` or `incomplete`.
    pub status: String,
    /// Its snapshot (the final one once finished).
    pub snapshot: Value,
    /// The text deltas of its stored events, joined.
    pub events_text: String,
    /// How many events it has.
    pub events: usize,
}

/// The turn `task_id` in the store of `home`, if it is there.
pub fn turn(home: &Path, task_id: &str) -> Result<Option<StoredTurn>, String> {
    let db = home.join("weft.db");
    let conn = Connection::open_with_flags(
        &db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(|e| format!("open {}: {e}", db.display()))?;
    conn.busy_timeout(Duration::from_secs(10))
        .map_err(|e| e.to_string())?;
    let row: Option<(String, String)> = conn
        .query_row(
            "SELECT status, snapshot FROM turns WHERE task_id = ?1",
            [task_id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()
        .map_err(|e| e.to_string())?;
    let Some((status, snapshot)) = row else {
        return Ok(None);
    };
    let mut stmt = conn
        .prepare("SELECT event FROM events WHERE task_id = ?1 ORDER BY n")
        .map_err(|e| e.to_string())?;
    let events: Vec<String> = stmt
        .query_map([task_id], |r| r.get(0))
        .map_err(|e| e.to_string())?
        .collect::<Result<_, _>>()
        .map_err(|e| e.to_string())?;
    let mut events_text = String::new();
    let mut count = 0;
    for e in &events {
        // A row is one event, or a run of a turn's consecutive events as an array.
        let v: Value = serde_json::from_str(e).unwrap_or_default();
        let run = match v {
            Value::Array(items) => items,
            one => vec![one],
        };
        for v in run {
            count += 1;
            if v["type"] == "text" {
                events_text.push_str(v["delta"].as_str().unwrap_or_default());
            }
        }
    }
    Ok(Some(StoredTurn {
        status,
        snapshot: serde_json::from_str(&snapshot).unwrap_or_default(),
        events_text,
        events: count,
    }))
}

/// Whether every piece of `pieces` appears in `text`, in order (a skipped bad line may
/// leave a hole between two of them, never a reordering).
pub fn contains_in_order(text: &str, pieces: &[String]) -> Result<(), String> {
    let mut at = 0;
    for (i, p) in pieces.iter().enumerate() {
        match text[at..].find(p.as_str()) {
            Some(found) => at += found + p.len(),
            None => return Err(format!("piece {i} {p:?} missing")),
        }
    }
    Ok(())
}
