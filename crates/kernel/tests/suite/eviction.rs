//! Runners nothing holds are dropped and rebuilt from the store when next needed,
//! without the session's patch numbers going backwards.

use std::sync::Arc;

use weft_kernel::Loom;

use super::support::*;

#[tokio::test]
async fn an_idle_unwatched_runner_is_evicted_and_rebuilt_with_its_seq_going_on() {
    let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let driver = Arc::new(ScriptDriver::default());
    // No idle-close timer: it holds the runner while it waits (see the second test).
    let loom = Loom::builder(state.path())
        .driver(driver)
        .default_agent("script")
        .idle_close(None)
        .store(
            weft_store_port::open(&state.path().join("weft.db")).unwrap_or_else(|e| panic!("{e}")),
        )
        .open()
        .unwrap_or_else(|e| panic!("{e}"));
    let one = loom
        .prompt(prompt("one", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = one.session_key.clone();
    let before = wait_for(&loom, &key, "one done", done_with(&one.task_id)).await;

    // A subscriber holds the runner.
    let sub = loom.subscribe(&key).await.unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(loom.evict_idle(), 0, "a watched session is kept");
    drop(sub);
    // Idle and unwatched: dropped.
    assert_eq!(loom.evict_idle(), 1);
    assert_eq!(loom.evict_idle(), 0);

    // Rebuilt on the next verb: the last turn as it ended, the seq where it was.
    let again = loom
        .get_snapshot(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(again.seq, before.seq);
    assert_eq!(again.snapshot.text, before.snapshot.text);
    let two = loom
        .prompt(prompt("two", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let after = wait_for(&loom, &key, "two done", done_with(&two.task_id)).await;
    assert!(after.seq > before.seq, "{} then {}", before.seq, after.seq);
    let history = loom
        .get_history(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(history.len(), 2);
}

#[tokio::test]
async fn a_session_waiting_to_close_its_idle_agent_is_kept_until_then() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = Loom::builder(std::env::temp_dir())
        .driver(driver)
        .default_agent("script")
        .in_memory()
        .idle_close(Some(std::time::Duration::from_millis(300)))
        .open()
        .unwrap_or_else(|e| panic!("{e}"));
    let one = loom
        .prompt(prompt("one", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    wait_for(&loom, &one.session_key, "done", done_with(&one.task_id)).await;
    assert_eq!(loom.evict_idle(), 0, "the idle-close timer still holds it");
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    assert_eq!(loom.evict_idle(), 1);
}

#[tokio::test]
async fn a_running_or_asking_session_is_never_evicted() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let held = loom
        .prompt(prompt("hold:x", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    wait_for(&loom, &held.session_key, "running", running(&held.task_id)).await;
    assert_eq!(loom.evict_idle(), 0);
    driver.release("x");
    wait_for(&loom, &held.session_key, "done", done_with(&held.task_id)).await;
}
