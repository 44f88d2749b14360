//! An idle session's agent process is closed after a while; the next prompt resumes.

use std::sync::Arc;
use std::time::Duration;

use weft_kernel::Loom;

use super::support::*;

const IDLE: Duration = Duration::from_millis(500);

fn loom_closing_after(driver: Arc<ScriptDriver>, idle: Option<Duration>) -> Arc<Loom> {
    open(
        script_loom(std::env::temp_dir(), driver)
            .in_memory()
            .idle_close(idle),
    )
}

async fn closed_count(driver: &ScriptDriver, at_least: usize) -> usize {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while driver.closed.lock().len() < at_least && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    driver.closed.lock().len()
}

#[tokio::test]
async fn an_idle_session_closes_its_agent_process_once_and_the_next_prompt_resumes() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_closing_after(driver.clone(), Some(IDLE));
    let key = finish(&loom, prompt("one", None)).await.0.session_key;
    // A turn started within the idle time: the first turn's clock no longer counts.
    let (_, first) = finish(&loom, prompt("two", Some(&key))).await;
    assert!(driver.closed.lock().is_empty(), "closed while in use");

    assert_eq!(closed_count(&driver, 1).await, 1, "closed once idle");
    assert_eq!(driver.closed.lock()[0], key);
    tokio::time::sleep(IDLE * 2).await;
    assert_eq!(
        driver.closed.lock().len(),
        1,
        "closed again with nothing run"
    );

    // The next prompt runs as usual, in the same agent session.
    let (_, after) = finish(&loom, prompt("three", Some(&key))).await;
    assert_eq!(after.snapshot.text, "reply to three");
    assert_eq!(after.snapshot.session_id, first.snapshot.session_id);
    assert_eq!(closed_count(&driver, 2).await, 2, "idle again after it");
}

#[tokio::test]
async fn without_an_idle_time_agent_processes_stay_until_shutdown() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_closing_after(driver.clone(), None);
    finish(&loom, prompt("one", None)).await;
    tokio::time::sleep(IDLE * 2).await;
    assert!(driver.closed.lock().is_empty());
}
