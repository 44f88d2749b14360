//! Full-text search over prompts and replies.

use weft_store::{SNIPPET_CLOSE, SNIPPET_OPEN};

use super::common::*;

#[test]
fn search_finds_prompts_and_replies() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    turn(
        &store,
        "echo:a",
        "t1",
        "refactor the parser module",
        "I split it in two.",
    );
    turn(
        &store,
        "echo:b",
        "t2",
        "write a haiku",
        "autumn moonlight, a worm digs silently",
    );
    turn(&store, "echo:b", "t3", "unrelated", "nothing here");

    let hits = store.search("parser", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(
        (hits[0].session_key.as_str(), hits[0].task_id.as_str()),
        ("echo:a", "t1")
    );
    assert!(
        hits[0]
            .snippet
            .contains(&format!("{SNIPPET_OPEN}parser{SNIPPET_CLOSE}")),
        "{}",
        hits[0].snippet
    );

    let hits = store.search("moonlight", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].task_id, "t2");

    // Every word must match; the last one as a prefix.
    assert_eq!(store.search("autumn moon", 10).unwrap().len(), 1);
    assert!(store.search("autumn parser", 10).unwrap().is_empty());
    assert!(store.search("zebra", 10).unwrap().is_empty());
}

#[test]
fn a_running_turn_is_found_by_its_prompt_and_a_finished_one_by_its_reply() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store
        .begin_turn("echo:a", "t1", &start("t1", "migrate the database"))
        .unwrap();
    assert_eq!(store.search("database", 5).unwrap().len(), 1);
    store
        .finish_turn("t1", &done("t1", "migrate the database", "added a column"))
        .unwrap();
    assert_eq!(store.search("database", 5).unwrap().len(), 1);
    assert_eq!(store.search("column", 5).unwrap().len(), 1);
}

#[test]
fn search_respects_the_limit() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    for i in 0..20 {
        turn(&store, "echo:a", &format!("t{i}"), "common word", "reply");
    }
    assert_eq!(store.search("common", 5).unwrap().len(), 5);
    assert_eq!(store.search("common", 100).unwrap().len(), 20);
    assert!(store.search("common", 0).unwrap().is_empty());
}

#[test]
fn query_syntax_in_user_input_is_searched_for_not_parsed() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    turn(
        &store,
        "echo:a",
        "t1",
        "what does NEAR(a b) do",
        "x-ray \"quoted\" col:umn",
    );
    for query in [
        "",
        "   ",
        "\"",
        "\"unbalanced",
        "x-ray",
        "NEAR(a",
        "col:umn",
        "AND OR NOT",
        "*",
        "-",
        "(",
    ] {
        store
            .search(query, 10)
            .unwrap_or_else(|e| panic!("query {query:?}: {e}"));
    }
    assert_eq!(store.search("x-ray", 10).unwrap().len(), 1);
    assert_eq!(store.search("\"quoted\"", 10).unwrap().len(), 1);
}
