//! The SQLite store under the kernel: history survives a restart, and a crash mid-turn
//! keeps everything received.

use std::sync::Arc;
use std::time::Duration;

use weft_protocol::Phase;

use super::support::*;

#[test]
fn a_crash_mid_turn_keeps_the_partial_text_and_marks_the_turn_incomplete() {
    let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let key = rt.block_on(async {
        let loom = loom_in(Arc::new(ScriptDriver::default()), Some(state.path()));
        let done = loom
            .prompt(prompt("first", None))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let key = done.session_key.clone();
        wait_for(&loom, &key, "first done", done_with(&done.task_id)).await;
        let held = loom
            .prompt(prompt("hold:never", Some(&key)))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        wait_for(&loom, &key, "partial text", |s| {
            s.task_id.as_deref() == Some(&held.task_id) && s.text == "started never"
        })
        .await;
        key
    });
    // The process dies: every task is dropped mid-turn, nothing finishes the turn.
    rt.shutdown_timeout(Duration::from_secs(1));

    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let loom = loom_in(Arc::new(ScriptDriver::default()), Some(state.path()));
        let history = loom
            .get_history(&key)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(history.len(), 2, "{history:#?}");
        assert_eq!(history[0].text, "reply to first");
        assert!(!history[0].incomplete);
        let crashed = &history[1];
        assert_eq!(crashed.text, "started never");
        assert!(crashed.incomplete);
        assert_eq!(crashed.phase, Phase::Done);
        // The session goes on after the restart, resuming the agent's session id.
        let next = loom
            .prompt(prompt("again", Some(&key)))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let at = wait_for(&loom, &key, "again done", done_with(&next.task_id)).await;
        assert_eq!(at.snapshot.text, "reply to again");
        assert_eq!(at.snapshot.session_id, history[0].session_id);
        let sessions = loom
            .list_sessions(None)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(sessions.len(), 1);
        assert_eq!(sessions[0].turns, 3);
    });
}

#[test]
fn prompts_still_queued_at_shutdown_stay_in_the_history_as_not_run() {
    let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let key = rt.block_on(async {
        let loom = loom_in(Arc::new(ScriptDriver::default()), Some(state.path()));
        let held = loom
            .prompt(prompt("hold:forever", None))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let key = held.session_key.clone();
        wait_for(&loom, &key, "running", running(&held.task_id)).await;
        loom.prompt(prompt("waiting one", Some(&key)))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        loom.prompt(prompt("waiting two", Some(&key)))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        loom.shutdown().await;
        key
    });
    drop(rt);
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let loom = loom_in(Arc::new(ScriptDriver::default()), Some(state.path()));
        let history = loom
            .get_history(&key)
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let prompts: Vec<&str> = history.iter().map(|t| t.prompt.as_str()).collect();
        assert_eq!(prompts, ["hold:forever", "waiting one", "waiting two"]);
        assert!(history[0].incomplete, "stopped by the shutdown");
        assert!(history[1]
            .error
            .as_deref()
            .is_some_and(|e| e.contains("not run")));
        assert!(history[2].incomplete);
    });
}
