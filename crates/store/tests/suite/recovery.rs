//! Turns left running: rebuilt on open. Corrupt rows: skipped.

use weft_protocol::{
    DriverEvent, Interaction, Phase, ToolCall, ToolStatus, UniversalSnapshot, Usage,
};
use weft_store::{INTERRUPTED_ERROR, INTERRUPTED_NOTICE};

use super::common::*;

const CRASH_CHILD: &str = "WEFT_STORE_CRASH_CHILD";

/// Not a test on its own: the child process of
/// `a_killed_process_loses_nothing_it_committed`. It writes a turn's events, flushes,
/// says so, and waits to be killed.
#[test]
fn crash_child() {
    let Ok(db) = std::env::var(CRASH_CHILD) else {
        return;
    };
    let store = open(std::path::Path::new(&db));
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    for i in 0..1_000 {
        store.append_event("t1", &text(&format!("{i} "))).unwrap();
    }
    store.flush().unwrap();
    println!("flushed");
    loop {
        std::thread::sleep(std::time::Duration::from_secs(1));
    }
}

#[test]
fn a_killed_process_loses_nothing_it_committed() {
    use std::io::BufRead;
    let (_dir, path) = temp_db();
    let mut child = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::recovery::crash_child",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CRASH_CHILD, &path)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stdout = child.stdout.take().unwrap();
    let flushed = std::io::BufReader::new(stdout)
        .lines()
        .map_while(Result::ok)
        .any(|line| line.contains("flushed"));
    child.kill().unwrap();
    child.wait().unwrap();
    assert!(flushed, "the child never flushed");

    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 1);
    let want: String = (0..1_000).map(|i| format!("{i} ")).collect();
    assert_eq!(history[0].text, want);
    assert!(history[0].incomplete);
    assert_eq!(history[0].error.as_deref(), Some(INTERRUPTED_ERROR));
}

#[test]
fn a_crash_mid_turn_keeps_the_partial_text_and_marks_the_turn_incomplete() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.upsert_session(&record("echo:a", "/w", 10)).unwrap();
        turn(&store, "echo:a", "t1", "first", "done before");
        let begun = UniversalSnapshot {
            interactions: vec![Interaction {
                verdict: None,
                prompt_id: "q1".into(),
                title: "may I?".into(),
                ..Default::default()
            }],
            ..start("t2", "second")
        };
        store.begin_turn("echo:a", "t2", &begun).unwrap();
        for word in ["Hello", ", ", "wor", "ld"] {
            store.append_event("t2", &text(word)).unwrap();
        }
        store
            .append_event(
                "t2",
                &DriverEvent::Tool {
                    call: ToolCall {
                        id: "c1".into(),
                        name: "Bash".into(),
                        summary: "ls".into(),
                        status: ToolStatus::Running,
                        ..Default::default()
                    },
                },
            )
            .unwrap();
        store
            .append_event(
                "t2",
                &DriverEvent::Usage {
                    usage: Usage {
                        output_tokens: Some(7),
                        ..Default::default()
                    },
                },
            )
            .unwrap();
        // Dropped without finish_turn: the process "dies" here.
    }
    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 2);
    assert_eq!(history[0].text, "done before");
    let t = &history[1];
    assert_eq!(t.task_id.as_deref(), Some("t2"));
    assert_eq!(t.prompt, "second");
    assert_eq!(t.text, "Hello, world");
    assert_eq!(t.phase, Phase::Done);
    assert!(t.incomplete);
    assert_eq!(t.error.as_deref(), Some(INTERRUPTED_ERROR));
    assert_eq!(t.notices, [INTERRUPTED_NOTICE]);
    assert!(t.interactions.is_empty());
    assert_eq!(t.tool_calls.len(), 1);
    assert_eq!(t.activity, "ls");
    assert_eq!(t.usage.as_ref().and_then(|u| u.output_tokens), Some(7));
    assert!(t.updated_at >= 5_000);

    let listed = store.list_sessions(None).unwrap();
    assert_eq!((listed[0].phase, listed[0].turns), (Phase::Done, 2));
    // Recovered turns are searchable by their partial text.
    let hits = store.search("world", 10).unwrap();
    assert_eq!(hits.len(), 1);
    assert_eq!(hits[0].task_id, "t2");
    drop(store);

    // Recovery happens once; the events are kept.
    let store = open(&path);
    assert_eq!(store.history("echo:a").unwrap()[1], *t);
    assert_eq!(
        count(
            &path,
            &format!(
                "SELECT {} FROM events WHERE task_id = 't2'",
                weft_store::EVENT_COUNT_SQL
            )
        ),
        6
    );
    assert_eq!(
        count(
            &path,
            "SELECT COUNT(*) FROM turns WHERE status = 'incomplete'"
        ),
        1
    );
}

/// What a killed process leaves: rows written, the turn still `running`.
#[test]
fn a_turn_left_running_by_a_dead_process_is_rebuilt_from_its_events() {
    let (_dir, path) = temp_db();
    drop(open(&path));
    let start_json = serde_json::to_string(&start("t1", "p")).unwrap();
    let conn = raw(&path);
    conn.execute(
        "INSERT INTO turns (task_id, session_key, n, prompt, status, snapshot, started_at, updated_at)
         VALUES ('t1', 'echo:a', 1, 'p', 'running', ?1, 5000, 5000)",
        [&start_json],
    )
    .unwrap();
    let events = [
        serde_json::to_string(&text("kept ")).unwrap(),
        "{not json".to_string(),
        serde_json::to_string(&text("all")).unwrap(),
    ];
    for (n, event) in events.iter().enumerate() {
        conn.execute(
            "INSERT INTO events (task_id, n, at, event) VALUES ('t1', ?1, ?2, ?3)",
            rusqlite::params![n as i64, 7_000 + n as i64, event],
        )
        .unwrap();
    }
    drop(conn);

    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].text, "kept all");
    assert!(history[0].incomplete);
    assert_eq!(history[0].updated_at, 7_002);
}

#[test]
fn a_corrupt_start_snapshot_still_recovers_the_text() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store
            .begin_turn("echo:a", "t1", &start("t1", "the prompt"))
            .unwrap();
        store.append_event("t1", &text("words")).unwrap();
        store.flush().unwrap();
        raw(&path)
            .execute(
                "UPDATE turns SET snapshot = 'garbage' WHERE task_id = 't1'",
                [],
            )
            .unwrap();
    }
    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].prompt, "the prompt");
    assert_eq!(history[0].text, "words");
    assert!(history[0].incomplete);
}

#[test]
fn a_corrupt_snapshot_row_is_skipped_not_fatal() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    for i in 0..3 {
        turn(&store, "echo:a", &format!("t{i}"), "p", &format!("r{i}"));
    }
    store.flush().unwrap();
    raw(&path)
        .execute(
            "UPDATE turns SET snapshot = '{\"phase\": 42' WHERE task_id = 't1'",
            [],
        )
        .unwrap();
    let texts: Vec<String> = store
        .history("echo:a")
        .unwrap()
        .into_iter()
        .map(|s| s.text)
        .collect();
    assert_eq!(texts, ["r0", "r2"]);
}

#[test]
fn a_turn_another_live_process_is_running_is_left_alone() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    store
        .begin_turn("echo:a", "t-live", &start("t-live", "still going"))
        .unwrap();
    store
        .append_event(
            "t-live",
            &DriverEvent::Text {
                delta: "so far".into(),
            },
        )
        .unwrap();
    store.flush().unwrap();
    drop(store);
    // Hand the turn to a process that is alive and is not us: pid 1, with its real
    // start time (field 22 of /proc/1/stat).
    let stat = std::fs::read_to_string("/proc/1/stat").unwrap();
    let start_ticks = stat
        .rsplit_once(')')
        .unwrap()
        .1
        .split_whitespace()
        .nth(19)
        .unwrap()
        .to_string();
    raw(&path)
        .execute(
            "UPDATE turns SET owner = ?1 WHERE task_id = 't-live'",
            [format!("1:{start_ticks}")],
        )
        .unwrap();

    let store = open(&path);
    assert!(
        store.history("echo:a").unwrap().is_empty(),
        "a live turn is not history"
    );
    assert_eq!(
        count(&path, "SELECT COUNT(*) FROM turns WHERE status = 'running'"),
        1
    );
    drop(store);

    // Once its owner is gone (a start time that does not match), it is recovered.
    raw(&path)
        .execute(
            "UPDATE turns SET owner = '1:0x' WHERE task_id = 't-live'",
            [],
        )
        .unwrap();
    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 1);
    assert_eq!(history[0].text, "so far");
    assert!(history[0].incomplete);
}
