//! Opening: folders, migrations, reopening, refusals.

use weft_store::schema::{current_version, MIGRATIONS};
use weft_store::{SqliteStore, StoreError};

use super::common::*;

#[test]
fn opening_creates_folders_and_migrates_an_empty_database() {
    let (_dir, path) = temp_db();
    assert!(!path.parent().unwrap().exists());
    let store = open(&path);
    assert!(path.exists());
    assert_eq!(store.path(), path.as_path());
    drop(store);

    let conn = raw(&path);
    let version: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .unwrap();
    assert_eq!(version, MIGRATIONS.len() as i64);
    assert_eq!(version, current_version());
    let mode: String = conn
        .query_row("PRAGMA journal_mode", [], |r| r.get(0))
        .unwrap();
    assert_eq!(mode, "wal");
    for table in ["sessions", "turns", "events", "turns_fts"] {
        let n: i64 = conn
            .query_row(
                "SELECT COUNT(*) FROM sqlite_master WHERE name = ?1",
                [table],
                |r| r.get(0),
            )
            .unwrap();
        assert_eq!(n, 1, "table {table}");
    }
}

#[test]
fn reopening_keeps_data_and_does_not_migrate_again() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.upsert_session(&record("echo:a", "/w", 10)).unwrap();
        turn(&store, "echo:a", "t1", "hello", "world");
    }
    for _ in 0..2 {
        let store = open(&path);
        assert_eq!(
            store.get_session("echo:a").unwrap(),
            Some(record("echo:a", "/w", 10))
        );
        let history = store.history("echo:a").unwrap();
        assert_eq!(history.len(), 1);
        assert_eq!(history[0].text, "world");
    }
    assert_eq!(count(&path, "PRAGMA user_version"), current_version());
}

#[test]
fn a_database_from_a_newer_weft_is_refused() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    raw(&path)
        .pragma_update(None, "user_version", current_version() + 1)
        .unwrap();
    match SqliteStore::open(&path) {
        Err(StoreError::TooNew { found, known, .. }) => {
            assert_eq!((found, known), (current_version() + 1, current_version()));
        }
        other => panic!("expected TooNew, got {other:?}"),
    }
}

#[test]
fn a_folder_that_cannot_be_created_is_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("a-file");
    std::fs::write(&file, "not a folder").unwrap();
    let path = file.join("sub").join("weft.db");
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::CreateDir { .. }), "{err:?}");
    let message = err.to_string();
    assert!(message.contains("cannot create the folder"), "{message}");
    assert!(message.contains("a-file"), "{message}");
}

#[test]
fn a_file_that_is_not_a_database_is_a_clear_error() {
    let (_dir, path) = temp_db();
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(&path, vec![b'x'; 4096]).unwrap();
    let err = SqliteStore::open(&path).unwrap_err();
    assert!(matches!(err, StoreError::Open { .. }), "{err:?}");
    assert!(err.to_string().contains("weft.db"), "{err}");
}

#[test]
fn the_store_can_be_shared_across_threads() {
    fn shareable<T: Send + Sync>() {}
    shareable::<SqliteStore>();
}
