//! Helpers shared by the suites.

use std::path::{Path, PathBuf};

use tempfile::TempDir;
use weft_protocol::{DriverEvent, Phase, UniversalSnapshot};
use weft_store::{SessionRecord, SqliteStore};

/// A fresh folder and the path of a database inside it (not yet created).
pub fn temp_db() -> (TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("state").join("weft.db");
    (dir, path)
}

pub fn open(path: &Path) -> SqliteStore {
    SqliteStore::open(path).unwrap()
}

/// A second, raw connection: what another reader of the file sees.
pub fn raw(path: &Path) -> rusqlite::Connection {
    rusqlite::Connection::open(path).unwrap()
}

pub fn count(path: &Path, sql: &str) -> i64 {
    raw(path).query_row(sql, [], |r| r.get(0)).unwrap()
}

pub fn record(key: &str, workdir: &str, updated_at: i64) -> SessionRecord {
    SessionRecord {
        session_key: key.into(),
        agent: key.split(':').next().unwrap_or_default().into(),
        session_id: None,
        workdir: workdir.into(),
        title: format!("title of {key}"),
        model: Some("m1".into()),
        effort: None,
        created_at: 1_000,
        updated_at,
        account: None,
        fork: None,
        switch: None,
    }
}

/// The snapshot a turn starts with.
pub fn start(task_id: &str, prompt: &str) -> UniversalSnapshot {
    UniversalSnapshot {
        phase: Phase::Streaming,
        task_id: Some(task_id.into()),
        agent: "echo".into(),
        prompt: prompt.into(),
        started_at: Some(5_000),
        updated_at: 5_000,
        ..Default::default()
    }
}

/// The snapshot a turn ends with.
pub fn done(task_id: &str, prompt: &str, text: &str) -> UniversalSnapshot {
    UniversalSnapshot {
        phase: Phase::Done,
        text: text.into(),
        updated_at: 6_000,
        ..start(task_id, prompt)
    }
}

pub fn text(delta: &str) -> DriverEvent {
    DriverEvent::Text {
        delta: delta.into(),
    }
}

/// Begins and finishes a whole turn.
pub fn turn(store: &SqliteStore, key: &str, task_id: &str, prompt: &str, reply: &str) {
    store
        .begin_turn(key, task_id, &start(task_id, prompt))
        .unwrap();
    store.append_event(task_id, &text(reply)).unwrap();
    store
        .finish_turn(task_id, &done(task_id, prompt, reply))
        .unwrap();
}
