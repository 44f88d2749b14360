//! The SQLite store under the kernel: history survives a restart, and a crash mid-turn
//! keeps everything received.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use weft_kernel::Loom;
use weft_protocol::Phase;

use super::support::*;

/// Runs `body` on a loom over the store in `state`, in a runtime of its own: the caller
/// ends that runtime as the process would end, by a crash or a shutdown.
fn on_store<T, F: Future<Output = T>>(
    state: &Path,
    body: impl FnOnce(Arc<Loom>) -> F,
) -> (tokio::runtime::Runtime, T) {
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let out =
        rt.block_on(async { body(loom_in(Arc::new(ScriptDriver::default()), Some(state))).await });
    (rt, out)
}

#[test]
fn a_crash_mid_turn_keeps_the_partial_text_and_marks_the_turn_incomplete() {
    let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let (rt, key) = on_store(state.path(), |loom| async move {
        let key = finish(&loom, prompt("first", None)).await.0.session_key;
        let held = send(&loom, prompt("hold:never", Some(&key))).await;
        wait_for(&loom, &key, "partial text", |s| {
            s.task_id.as_deref() == Some(&held.task_id) && s.text == "started never"
        })
        .await;
        key
    });
    // The process dies: every task is dropped mid-turn, nothing finishes the turn.
    rt.shutdown_timeout(Duration::from_secs(1));

    on_store(state.path(), |loom| async move {
        let history = history(&loom, &key).await;
        assert_eq!(history.len(), 2, "{history:#?}");
        assert_eq!(history[0].text, "reply to first");
        assert!(!history[0].incomplete);
        let crashed = &history[1];
        assert_eq!(crashed.text, "started never");
        assert!(crashed.incomplete);
        assert_eq!(crashed.phase, Phase::Done);
        // The session goes on after the restart, resuming the agent's session id.
        let (_, at) = finish(&loom, prompt("again", Some(&key))).await;
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
    let (rt, key) = on_store(state.path(), |loom| async move {
        let key = hold(&loom, "forever", None).await.session_key;
        send(&loom, prompt("waiting one", Some(&key))).await;
        send(&loom, prompt("waiting two", Some(&key))).await;
        loom.shutdown().await;
        key
    });
    drop(rt);
    on_store(state.path(), |loom| async move {
        let history = history(&loom, &key).await;
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
