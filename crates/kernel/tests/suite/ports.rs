//! The ports' defaults, and `run_turn` without a hub.

use std::sync::Arc;

use weft_kernel::ports::AutoCancel;
use weft_kernel::{run_turn, AgentTurnInput, Loom, LoomIO, TurnCallbacks};
use weft_protocol::{InteractionResponse, Phase, PromptRequest};

use super::support::*;

#[tokio::test]
async fn auto_cancel_answers_interactions_at_once_and_says_so() {
    let loom = Loom::builder(std::env::temp_dir())
        .driver(Arc::new(ScriptDriver::default()))
        .default_agent("script")
        .interaction_handler(Arc::new(AutoCancel))
        .in_memory()
        .open()
        .unwrap_or_else(|e| panic!("{e}"));
    let t = loom
        .prompt(PromptRequest {
            prompt: "ask".into(),
            workdir: Some(std::env::temp_dir().to_string_lossy().into_owned()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = wait_for(&loom, &t.session_key, "done", done_with(&t.task_id)).await;
    assert_eq!(at.snapshot.text, "cancelled");
    assert!(at
        .snapshot
        .notices
        .iter()
        .any(|n| n.contains("answered automatically")));
    assert!(loom.list_tools().await.is_empty());
    assert!(loom.list_skills(None).await.is_empty());
    assert!(loom
        .list_effort("script")
        .await
        .unwrap_or_default()
        .is_empty());
}

#[tokio::test]
async fn run_turn_runs_one_turn_with_callbacks() {
    let seen = Arc::new(parking_lot::Mutex::new(Vec::new()));
    let log = seen.clone();
    let callbacks = TurnCallbacks {
        on_event: Box::new(move |ev, _| log.lock().push(format!("{ev:?}"))),
        on_interaction: Box::new(|_| InteractionResponse::select("yes")),
        ..Default::default()
    };
    let input = AgentTurnInput {
        prompt: "ask".into(),
        task_id: "t1".into(),
        workdir: std::env::temp_dir(),
        ..Default::default()
    };
    let (result, snap) = run_turn(Arc::new(ScriptDriver::default()), input, callbacks).await;
    assert!(result.ok);
    assert_eq!(snap.text, "answer=yes");
    assert_eq!(snap.phase, Phase::Done);
    assert_eq!(snap.agent, "script");
    assert_eq!(snap.session_id.as_deref(), Some("native-t1"));
    assert!(seen.lock().len() >= 2);
}

#[test]
fn state_dirs_follow_weft_home() {
    let dir = weft_kernel::state::workspace_state_dir(std::path::Path::new("/w"));
    assert_eq!(dir, std::path::Path::new("/w/.weft"));
    // WEFT_HOME wins over HOME (read, not set: tests share the process environment).
    let global = weft_kernel::state::global_state_dir();
    match std::env::var_os("WEFT_HOME").filter(|v| !v.is_empty()) {
        Some(home) => assert_eq!(global, std::path::PathBuf::from(home)),
        None => assert!(global.ends_with(".weft")),
    }
}

#[tokio::test]
async fn agent_info_is_probed_once_then_cached() {
    let driver = Arc::new(ScriptDriver::default());
    let loom = loom_with(driver.clone());
    let first = loom.list_agent_info().await;
    let second = loom.list_agent_info().await;
    assert_eq!(first, second);
    assert_eq!(first[0].id, "script");
    assert_eq!(
        driver.info_calls.load(std::sync::atomic::Ordering::SeqCst),
        1
    );
}
