//! Runners nothing holds are dropped and rebuilt from the store when next needed,
//! without the session's patch numbers going backwards.

use std::sync::Arc;

use super::support::*;

#[tokio::test]
async fn an_idle_unwatched_runner_is_evicted_and_rebuilt_with_its_seq_going_on() {
    let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let driver = Arc::new(ScriptDriver::default());
    // No idle-close timer: it holds the runner while it waits (see the second test).
    let loom = open(script_loom(state.path(), driver).idle_close(None).store(
        weft_store_port::open(&state.path().join("weft.db")).unwrap_or_else(|e| panic!("{e}")),
    ));
    let (one, before) = finish(&loom, prompt("one", None)).await;
    let key = one.session_key;

    // A subscriber holds the runner.
    let sub = loom.subscribe(&key).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loom.evict_idle(), 0, "a watched session is kept");
    drop(sub);
    // Idle and unwatched: dropped.
    assert_eq!(loom.evict_idle(), 1);
    assert_eq!(loom.evict_idle(), 0);

    // Rebuilt on the next verb: the last turn as it ended, the seq where it was.
    let again = snapshot(&loom, &key).await;
    assert_eq!(again.seq, before.seq);
    assert_eq!(again.snapshot.text, before.snapshot.text);
    let (_, after) = finish(&loom, prompt("two", Some(&key))).await;
    assert!(after.seq > before.seq, "{} then {}", before.seq, after.seq);
    assert_eq!(history(&loom, &key).await.len(), 2);
}

#[tokio::test]
async fn a_session_waiting_to_close_its_idle_agent_is_kept_until_then() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = open(
        script_loom(std::env::temp_dir(), driver)
            .in_memory()
            .idle_close(Some(std::time::Duration::from_millis(300))),
    );
    finish(&loom, prompt("one", None)).await;
    assert_eq!(loom.evict_idle(), 0, "the idle-close timer still holds it");
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert_eq!(loom.evict_idle(), 1);
}

#[tokio::test]
async fn a_running_or_asking_session_is_never_evicted() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let held = hold(&loom, "x", None).await;
    assert_eq!(loom.evict_idle(), 0);
    driver.release("x");
    wait_for(&loom, &held.session_key, "done", done_with(&held.task_id)).await;
}
