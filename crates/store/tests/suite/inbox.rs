//! Interactions kept from the moment they are asked; history pages; the process ledger.

use weft_protocol::Interaction;
use weft_store::{AskedInteraction, AGENT_GONE};

use super::common::*;

fn asked(prompt_id: &str, task_id: &str, title: &str) -> AskedInteraction {
    AskedInteraction {
        prompt_id: prompt_id.into(),
        session_key: "echo:a".into(),
        task_id: task_id.into(),
        interaction: Interaction {
            verdict: None,
            prompt_id: prompt_id.into(),
            title: title.into(),
            ..Default::default()
        },
        created_at: 1,
        expires_at: None,
    }
}

#[test]
fn an_answer_is_kept_with_who_gave_it_and_only_the_first_counts() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
    store.ask_interaction(&asked("q1", "t1", "Pick")).unwrap();
    assert_eq!(store.interaction_outcome("q1").unwrap(), None, "pending");
    store
        .resolve_interaction("q1", "answered", Some("red"), Some("cli"))
        .unwrap();
    store
        .resolve_interaction("q1", "expired", None, None)
        .unwrap();
    let outcome = store.interaction_outcome("q1").unwrap().unwrap();
    assert_eq!(outcome.outcome, "answered");
    assert_eq!(outcome.detail.as_deref(), Some("red"));
    assert_eq!(outcome.by.as_deref(), Some("cli"));
}

#[test]
fn a_question_pending_when_the_process_died_expires_in_the_rebuilt_turn() {
    let (_dir, path) = temp_db();
    {
        let store = open(&path);
        store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
        store.begin_turn("echo:a", "t1", &start("t1", "p")).unwrap();
        store.append_event("t1", &text("partial ")).unwrap();
        store
            .ask_interaction(&asked("q1", "t1", "Allow it?"))
            .unwrap();
        store.flush().unwrap();
        // Dropped without finish_turn: as if the process died.
    }
    let store = open(&path);
    let history = store.history("echo:a").unwrap();
    assert_eq!(history.len(), 1);
    let turn = &history[0];
    assert!(turn.incomplete);
    assert_eq!(turn.text, "partial ");
    let expected = format!("\"Allow it?\" expired: {AGENT_GONE}");
    assert!(turn.notices.contains(&expected), "{:?}", turn.notices);
    let outcome = store.interaction_outcome("q1").unwrap().unwrap();
    assert_eq!(outcome.outcome, "expired");
    assert_eq!(outcome.detail.as_deref(), Some(AGENT_GONE));
}

#[test]
fn history_pages_from_the_newest_back() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.upsert_session(&record("echo:a", "/w", 1)).unwrap();
    for i in 1..=5 {
        turn(&store, "echo:a", &format!("t{i}"), &format!("p{i}"), "r");
    }
    let prompts = |v: Vec<weft_protocol::UniversalSnapshot>| -> Vec<String> {
        v.into_iter().map(|s| s.prompt).collect()
    };
    assert_eq!(
        prompts(store.history_page("echo:a", Some(2), None).unwrap()),
        ["p4", "p5"]
    );
    assert_eq!(
        prompts(store.history_page("echo:a", Some(2), Some("t4")).unwrap()),
        ["p2", "p3"]
    );
    assert_eq!(
        prompts(store.history_page("echo:a", None, Some("t2")).unwrap()),
        ["p1"]
    );
    assert_eq!(store.history("echo:a").unwrap().len(), 5);
}

#[test]
fn recorded_processes_are_taken_once() {
    let (_dir, path) = temp_db();
    let store = open(&path);
    store.record_process(4242, 77).unwrap();
    store.record_process(4243, 78).unwrap();
    store.forget_process(4243).unwrap();
    assert_eq!(store.take_processes().unwrap(), vec![(4242, 77)]);
    assert!(store.take_processes().unwrap().is_empty());
}
