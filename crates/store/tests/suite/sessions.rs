//! Session records: upsert, get, list.

use weft_protocol::Phase;

use super::common::*;

#[test]
fn get_returns_the_latest_upsert_and_none_for_unknown_keys() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    assert_eq!(store.get_session("echo:none").unwrap(), None);
    let mut r = record("echo:a", "/w", 10);
    store.upsert_session(&r).unwrap();
    r.title = "renamed".into();
    r.session_id = Some("agent-own-id".into());
    r.effort = Some("high".into());
    r.updated_at = 20;
    store.upsert_session(&r).unwrap();
    assert_eq!(store.get_session("echo:a").unwrap(), Some(r));
}

#[test]
fn sessions_are_listed_newest_first_and_filtered_by_workdir() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store
        .upsert_session(&record("echo:old", "/one", 100))
        .unwrap();
    store
        .upsert_session(&record("echo:new", "/two", 300))
        .unwrap();
    store
        .upsert_session(&record("echo:mid", "/one", 200))
        .unwrap();

    let keys = |workdir| -> Vec<String> {
        store
            .list_sessions(workdir)
            .unwrap()
            .into_iter()
            .map(|s| s.session_key)
            .collect()
    };
    assert_eq!(keys(None), ["echo:new", "echo:mid", "echo:old"]);
    assert_eq!(keys(Some("/one")), ["echo:mid", "echo:old"]);
    assert_eq!(keys(Some("/two")), ["echo:new"]);
    assert!(keys(Some("/nowhere")).is_empty());

    // An update moves a session to the top.
    store
        .upsert_session(&record("echo:old", "/one", 400))
        .unwrap();
    assert_eq!(keys(None), ["echo:old", "echo:new", "echo:mid"]);
}

#[test]
fn listed_sessions_carry_their_latest_phase_and_turn_count() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.upsert_session(&record("echo:idle", "/w", 1)).unwrap();
    store.upsert_session(&record("echo:busy", "/w", 2)).unwrap();
    store.upsert_session(&record("echo:done", "/w", 3)).unwrap();
    turn(&store, "echo:busy", "b1", "one", "1");
    store
        .begin_turn("echo:busy", "b2", &start("b2", "two"))
        .unwrap();
    turn(&store, "echo:done", "d1", "one", "1");
    turn(&store, "echo:done", "d2", "two", "2");
    turn(&store, "echo:done", "d3", "three", "3");

    let list = store.list_sessions(None).unwrap();
    let got: Vec<(&str, Phase, u32)> = list
        .iter()
        .map(|s| (s.session_key.as_str(), s.phase, s.turns))
        .collect();
    assert_eq!(
        got,
        [
            ("echo:done", Phase::Done, 3),
            ("echo:busy", Phase::Streaming, 2),
            ("echo:idle", Phase::Idle, 0),
        ]
    );
    let done = &list[0];
    assert_eq!(done.title, "title of echo:done");
    assert_eq!(done.agent, "echo");
    assert_eq!(done.model.as_deref(), Some("m1"));
    assert_eq!((done.created_at, done.updated_at), (1_000, 3));
}
