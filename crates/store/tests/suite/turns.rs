//! Turns and history.

use weft_protocol::{Phase, UniversalSnapshot};

use super::common::*;

#[test]
fn history_is_the_final_snapshots_oldest_first_per_session() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    for i in 0..5 {
        turn(
            &store,
            "echo:a",
            &format!("a{i}"),
            &format!("prompt {i}"),
            &format!("reply {i}"),
        );
        turn(&store, "echo:b", &format!("b{i}"), "other", "other");
    }
    let history = store.history("echo:a").unwrap();
    let got: Vec<(&str, &str)> = history
        .iter()
        .map(|s| (s.prompt.as_str(), s.text.as_str()))
        .collect();
    let want: Vec<(String, String)> = (0..5)
        .map(|i| (format!("prompt {i}"), format!("reply {i}")))
        .collect();
    let want: Vec<(&str, &str)> = want.iter().map(|(p, t)| (p.as_str(), t.as_str())).collect();
    assert_eq!(got, want);
    assert!(history
        .iter()
        .all(|s| s.phase == Phase::Done && !s.incomplete));
    assert_eq!(history[0], done("a0", "prompt 0", "reply 0"));
    assert!(store.history("echo:nobody").unwrap().is_empty());
}

#[test]
fn the_running_turn_is_not_history_until_it_finishes() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    turn(&store, "echo:a", "t1", "first", "one");
    store
        .begin_turn("echo:a", "t2", &start("t2", "second"))
        .unwrap();
    store.append_event("t2", &text("partial")).unwrap();
    assert_eq!(store.history("echo:a").unwrap().len(), 1);
    store
        .finish_turn("t2", &done("t2", "second", "partial"))
        .unwrap();
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[1].text, "partial");
}

#[test]
fn a_turn_finished_incomplete_is_stored_as_incomplete() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    let stopped = UniversalSnapshot {
        incomplete: true,
        notices: vec!["stopped by the user".into()],
        ..done("t1", "p", "half")
    };
    store.finish_turn("t1", &stopped).unwrap();
    assert_eq!(store.history("echo:a").unwrap(), [stopped]);
    store.flush().unwrap();
    let status: String = raw(&path)
        .query_row("SELECT status FROM turns WHERE task_id = 't1'", [], |r| {
            r.get(0)
        })
        .unwrap();
    assert_eq!(status, "incomplete");
}

#[test]
fn turns_are_numbered_within_their_session() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    turn(&store, "echo:a", "a1", "p", "r");
    turn(&store, "echo:b", "b1", "p", "r");
    turn(&store, "echo:a", "a2", "p", "r");
    store.flush().unwrap();
    let conn = raw(&path);
    let mut statement = conn
        .prepare("SELECT task_id, n FROM turns ORDER BY task_id")
        .unwrap();
    let rows: Vec<(String, i64)> = statement
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    assert_eq!(rows, [("a1".into(), 1), ("a2".into(), 2), ("b1".into(), 1)]);
}

#[test]
fn beginning_a_task_again_restarts_it() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    store.append_event("t1", &text("first attempt ")).unwrap();
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    store.append_event("t1", &text("second")).unwrap();
    drop(store);
    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].text, "second");
}

#[test]
fn finishing_a_turn_never_begun_is_ignored() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store
        .finish_turn("ghost", &done("ghost", "p", "r"))
        .unwrap();
    store.flush().unwrap();
    assert_eq!(count(&path, "SELECT COUNT(*) FROM turns"), 0);
}
