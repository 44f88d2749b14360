//! The writer: order, batching, volume, flush, drop.

use std::time::Instant;

use weft_protocol::DriverEvent;
use weft_store::{StoreError, BATCH_OPS};

use super::common::*;

/// Every event of a turn with its number, rows of several events taken apart.
fn stored_events(path: &std::path::Path, task_id: &str) -> Vec<(i64, DriverEvent)> {
    let conn = raw(path);
    let mut statement = conn
        .prepare("SELECT n, event FROM events WHERE task_id = ?1 ORDER BY n")
        .unwrap();
    let rows: Vec<(i64, String)> = statement
        .query_map([task_id], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    let mut out = Vec::new();
    for (n, json) in rows {
        for (i, e) in weft_store::row_events(&json).into_iter().enumerate() {
            out.push((n + i as i64, e.unwrap()));
        }
    }
    out
}

fn events_of(path: &std::path::Path, filter: &str) -> i64 {
    count(
        path,
        &format!(
            "SELECT {} FROM events {filter}",
            weft_store::EVENT_COUNT_SQL
        ),
    )
}

#[test]
fn events_land_in_order_across_batches_and_flushes() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    let total = BATCH_OPS * 3 + 17;
    for i in 0..total {
        store.append_event("t1", &text(&format!("{i},"))).unwrap();
        if i % 1000 == 999 {
            store.flush().unwrap();
        }
    }
    store.flush().unwrap();
    let events = stored_events(&path, "t1");
    assert_eq!(events.len(), total);
    for (i, (n, event)) in events.iter().enumerate() {
        assert_eq!(*n, i as i64);
        assert_eq!(*event, text(&format!("{i},")));
    }
}

#[test]
fn interleaved_turns_keep_their_own_order() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "a", &start("a", "p")).unwrap();
    store.begin_turn("echo:b", "b", &start("b", "p")).unwrap();
    for i in 0..500 {
        store.append_event("a", &text(&format!("a{i}"))).unwrap();
        store.append_event("b", &text(&format!("b{i}"))).unwrap();
    }
    store.flush().unwrap();
    for task in ["a", "b"] {
        let events = stored_events(&path, task);
        let want: Vec<(i64, DriverEvent)> =
            (0..500).map(|i| (i, text(&format!("{task}{i}")))).collect();
        assert_eq!(events, want);
    }
}

#[test]
fn a_hundred_thousand_events_all_land() {
    const N: usize = 100_000;
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    let event = text("a token of streamed text ");
    let began = Instant::now();
    for _ in 0..N {
        store.append_event("t1", &event).unwrap();
    }
    let queued = began.elapsed();
    store.flush().unwrap();
    let written = began.elapsed();
    eprintln!(
        "{N} append_event calls: queued in {queued:?} ({:.0}/s), on disk after {written:?} ({:.0}/s)",
        N as f64 / queued.as_secs_f64(),
        N as f64 / written.as_secs_f64(),
    );
    assert_eq!(events_of(&path, "WHERE task_id = 't1'"), N as i64);
    let numbers: Vec<i64> = stored_events(&path, "t1").iter().map(|(n, _)| *n).collect();
    assert_eq!(numbers, (0..N as i64).collect::<Vec<_>>());
}

#[test]
fn flush_makes_every_earlier_write_visible_to_other_connections() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    for i in 0..100 {
        store.append_event("t1", &text(&i.to_string())).unwrap();
    }
    store.flush().unwrap();
    assert_eq!(count(&path, "SELECT COUNT(*) FROM sessions"), 1);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM turns"), 1);
    assert_eq!(events_of(&path, ""), 100);
    // A flush with nothing queued returns too.
    store.flush().unwrap();
}

#[test]
fn reads_see_every_write_made_before_them_without_an_explicit_flush() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    for i in 0..200 {
        let key = format!("echo:{i}");
        store.upsert_session(&record(&key, "/w", i)).unwrap();
        assert!(store.get_session(&key).unwrap().is_some());
        turn(&store, &key, &format!("t{i}"), "p", "r");
        assert_eq!(store.history(&key).unwrap().len(), 1);
    }
    assert_eq!(store.list_sessions(None).unwrap().len(), 200);
}

#[test]
fn flushes_from_many_threads_each_see_their_own_writes() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    std::thread::scope(|scope| {
        for t in 0..4 {
            let store = &store;
            scope.spawn(move || {
                let task = format!("t{t}");
                store
                    .begin_turn(&format!("echo:{t}"), &task, &start(&task, "p"))
                    .unwrap();
                for i in 0..2_000 {
                    store.append_event(&task, &text(&i.to_string())).unwrap();
                }
                store.flush().unwrap();
                let n = events_of(store.path(), &format!("WHERE task_id = '{task}'"));
                assert_eq!(n, 2_000);
            });
        }
    });
}

#[test]
fn dropping_the_store_writes_everything_it_was_given() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
        store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
        for i in 0..20_000 {
            store.append_event("t1", &text(&i.to_string())).unwrap();
        }
        store.finish_turn("t1", &done("t1", "p", "r")).unwrap();
    }
    assert_eq!(events_of(&path, ""), 20_000);
    assert_eq!(
        count(&path, "SELECT COUNT(*) FROM turns WHERE status = 'done'"),
        1
    );
}

#[test]
fn events_of_a_turn_begun_by_an_earlier_process_continue_its_numbering() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
        store.append_event("t1", &text("a")).unwrap();
        store.finish_turn("t1", &done("t1", "p", "a")).unwrap();
    }
    let store = open(&path);
    store.append_event("t1", &text("b")).unwrap();
    store.flush().unwrap();
    assert_eq!(stored_events(&path, "t1"), [(0, text("a")), (1, text("b"))]);
}

#[test]
fn a_failed_write_is_reported_by_the_next_flush_only() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    turn(&store, "echo:a", "t1", "p", "r");
    store.flush().unwrap();
    raw(&path).execute_batch("DROP TABLE events").unwrap();
    store.append_event("t1", &text("lost")).unwrap();
    // Reads still work and leave the failure for flush to report.
    assert_eq!(store.history("echo:a").unwrap().len(), 1);
    match store.flush() {
        Err(StoreError::Write(message)) => assert!(message.contains("events"), "{message}"),
        other => panic!("expected a write error, got {other:?}"),
    }
    store.flush().unwrap();
    // The writer kept going.
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    assert!(store.get_session("echo:a").unwrap().is_some());
}

#[test]
fn committed_is_a_barrier_other_readers_see_past_and_leaves_failures_to_flush() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    for i in 0..100 {
        store.append_event("t1", &text(&format!("{i},"))).unwrap();
    }
    // What the daemon waits on before a client may see these events.
    store.committed().unwrap();
    assert_eq!(stored_events(&path, "t1").len(), 100);
    // A write that fails (its table gone) is not committed's to report...
    raw(&path).execute_batch("DROP TABLE events").unwrap();
    store.append_event("t1", &text("lost")).unwrap();
    store.committed().unwrap();
    // ...but the next flush's.
    assert!(matches!(store.flush(), Err(StoreError::Write(_))));
    store.flush().unwrap();
}

#[test]
fn when_committed_is_called_once_every_earlier_write_is_committed() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    for round in 1..=3 {
        for i in 0..100 {
            store
                .append_event("t1", &text(&format!("{round}.{i},")))
                .unwrap();
        }
        // What the daemon's transports wait on, without holding a thread, before they
        // send a client the patches these events made.
        let seen = path.clone();
        let tx = tx.clone();
        store.when_committed(move || {
            let _ = tx.send(stored_events(&seen, "t1").len());
        });
    }
    let counts: Vec<usize> = (0..3).map(|_| rx.recv().unwrap()).collect();
    // Each sees at least what was queued before it (a later batch may already be in).
    for (round, seen) in counts.iter().enumerate() {
        assert!(*seen >= 100 * (round + 1), "{counts:?}");
    }
}

#[test]
fn a_turns_consecutive_events_share_rows_and_each_is_kept_and_rebuilt() {
    const N: usize = 10_000;
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
        store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
        for i in 0..N {
            store.append_event("t1", &text(&format!("{i} "))).unwrap();
        }
        store.flush().unwrap();
        // Runs of one turn's events are joined within a transaction: far fewer rows.
        let rows = count(&path, "SELECT COUNT(*) FROM events");
        assert!(rows < N as i64 / 10, "{rows} rows for {N} events");
        let events = stored_events(&path, "t1");
        assert_eq!(events.len(), N);
        for (i, (n, event)) in events.iter().enumerate() {
            assert_eq!((*n, event), (i as i64, &text(&format!("{i} "))));
        }
        // Dropped without finish_turn: the next open rebuilds the turn from its rows.
    }
    let store = open(&path);
    let t = &store.history("echo:a").unwrap()[0];
    let want: String = (0..N).map(|i| format!("{i} ")).collect();
    assert_eq!(t.text, want);
    assert!(t.incomplete);
    // A writer started after the crash numbers on after the last row's last event.
    store.append_event("t1", &text("late")).unwrap();
    store.flush().unwrap();
    let events = stored_events(&path, "t1");
    assert_eq!(events.last(), Some(&(N as i64, text("late"))));
}

#[test]
fn a_turn_streamed_slower_than_the_writer_commits_is_committed_at_most_once_per_linger() {
    const N: usize = 200;
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    store.flush().unwrap();
    // An agent's tokens arrive a little apart, each alone in the queue when the writer
    // looks: without gathering, each would be a commit (and a row) of its own.
    let began = Instant::now();
    for i in 0..N {
        store.append_event("t1", &text(&format!("{i} "))).unwrap();
        std::thread::sleep(std::time::Duration::from_micros(100));
    }
    store.flush().unwrap();
    let elapsed = began.elapsed();
    // A run of one turn's events is one row per commit, and a streamed batch commits at
    // most once per LINGER (the first after a pause at once): however loaded the
    // machine, no more rows than that.
    let rows = count(&path, "SELECT COUNT(*) FROM events");
    let most = (elapsed.as_micros() / weft_store::LINGER.as_micros()) as i64 + 2;
    assert!(
        rows <= most,
        "{rows} rows for {N} events over {elapsed:?}: more than one commit per {:?}",
        weft_store::LINGER
    );
    let events = stored_events(&path, "t1");
    assert_eq!(events.len(), N);
    for (i, (n, event)) in events.iter().enumerate() {
        assert_eq!((*n, event), (i as i64, &text(&format!("{i} "))));
    }
}

/// Stands in for a full disk: every write of a session's record fails until dropped.
fn fill_disk_for_sessions(path: &std::path::Path) {
    raw(path)
        .execute_batch(
            "CREATE TRIGGER full_insert BEFORE INSERT ON sessions
                 BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;
             CREATE TRIGGER full_update BEFORE UPDATE ON sessions
                 BEGIN SELECT RAISE(FAIL, 'database or disk is full'); END;",
        )
        .unwrap();
}

fn free_disk_for_sessions(path: &std::path::Path) {
    raw(path)
        .execute_batch("DROP TRIGGER full_insert; DROP TRIGGER full_update;")
        .unwrap();
}

#[test]
fn a_turn_is_told_only_of_its_own_writes_that_failed() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    store.upsert_session(&record("echo:b", "/w", 1)).unwrap();
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    store.finish_turn("t1", &done("t1", "p", "a")).unwrap();
    store.turn_kept("t1").unwrap();
    // After t1 ended, a write of its session's record fails (the disk is full).
    fill_disk_for_sessions(&path);
    store.upsert_session(&record("echo:a", "/w", 2)).unwrap();
    store.committed().unwrap();
    free_disk_for_sessions(&path);
    // The next turn of that session keeps every write: it is told nothing.
    store.begin_turn("echo:a", "t2", &start("t2", "p")).unwrap();
    store.append_event("t2", &text("b")).unwrap();
    store.finish_turn("t2", &done("t2", "p", "b")).unwrap();
    store.turn_kept("t2").unwrap();
    // A turn whose session's record fails while it runs is told...
    store.begin_turn("echo:a", "t3", &start("t3", "p")).unwrap();
    store.begin_turn("echo:b", "u1", &start("u1", "p")).unwrap();
    fill_disk_for_sessions(&path);
    store.upsert_session(&record("echo:a", "/w", 3)).unwrap();
    store.committed().unwrap();
    free_disk_for_sessions(&path);
    store.finish_turn("t3", &done("t3", "p", "")).unwrap();
    store.finish_turn("u1", &done("u1", "p", "")).unwrap();
    match store.turn_kept("t3") {
        Err(StoreError::Write(message)) => assert!(message.contains("full"), "{message}"),
        other => panic!("expected a write error, got {other:?}"),
    }
    // ...once, and the turn running beside it in another session is not.
    store.turn_kept("t3").unwrap();
    store.turn_kept("u1").unwrap();
    // `flush` still reports the first failure of any write since the last one.
    match store.flush() {
        Err(StoreError::Write(message)) => assert!(message.contains("full"), "{message}"),
        other => panic!("expected a write error, got {other:?}"),
    }
    store.flush().unwrap();
}
