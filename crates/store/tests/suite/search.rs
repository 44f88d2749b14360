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

#[test]
fn a_finished_turn_is_in_both_text_indexes_once_its_finish_is_flushed() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    // Longer than the library's trigram index keeps, in characters not bytes.
    let reply = format!("wombat {}", "é".repeat(70_000));
    turn(&store, "echo:a", "t1", "count the marsupials", &reply);
    assert_eq!(store.search("wombat", 5).unwrap().len(), 1);
    drop(store);
    let conn = raw(&path);
    let (chars, starts): (i64, bool) = conn
        .query_row(
            "SELECT length(f.text), f.text LIKE 'count the marsupials' || char(10) || 'wombat é%'
             FROM lib_fts f JOIN turns t ON f.rowid = -t.id WHERE t.task_id = 't1'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert!(starts);
    assert_eq!(chars, "count the marsupials".len() as i64 + 1 + 65_536);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM fts_pending"), 0);
}

#[test]
fn a_turn_finished_but_not_indexed_when_its_process_stopped_is_indexed_at_the_next_open() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    turn(
        &store,
        "echo:a",
        "t1",
        "migrate the database",
        "added a zebra column",
    );
    drop(store);
    // As a process that died between the finishing transaction and the index's: the
    // indexes hold the turn as it began, and the mark says so.
    raw(&path)
        .execute_batch(
            "DELETE FROM turns_fts;
             INSERT INTO turns_fts (rowid, prompt, text)
                 SELECT id, prompt, '' FROM turns WHERE task_id = 't1';
             DELETE FROM lib_fts WHERE rowid < 0;
             INSERT INTO lib_fts (rowid, text)
                 SELECT -id, prompt || char(10) FROM turns WHERE task_id = 't1';
             INSERT INTO fts_pending (turn_id) SELECT id FROM turns WHERE task_id = 't1';",
        )
        .unwrap();
    let store = open(&path);
    let hits = store.search("zebra", 5).unwrap();
    assert_eq!(hits.len(), 1, "the reply is searchable again");
    assert_eq!(hits[0].task_id, "t1");
    drop(store);
    assert_eq!(count(&path, "SELECT COUNT(*) FROM fts_pending"), 0);
    assert_eq!(
        count(
            &path,
            "SELECT COUNT(*) FROM lib_fts WHERE rowid < 0 AND text LIKE '%zebra column'"
        ),
        1
    );
}
