//! Bad input, against a fake `codex app-server` that misbehaves on purpose
//! (tests/fixtures/fake-codex.sh): malformed JSON-RPC, unknown notifications, a
//! request Weft cannot answer, a huge line, a child that dies on start, mid-request
//! and mid-turn.

use std::path::{Path, PathBuf};
use std::time::Duration;

use weft_codex::{CodexDriver, Config};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;

use super::support::{eventually, fast_config, gone, new_sink, run_turn};

fn fake() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/fake-codex.sh")
}

fn driver() -> CodexDriver {
    CodexDriver::with_config(Config {
        bin: Some(fake()),
        max_line: 16 * 1024,
        ..fast_config()
    })
}

fn input(work: &Path, mode: &str, session_id: Option<String>) -> AgentTurnInput {
    AgentTurnInput {
        session_key: format!("codex:{mode}"),
        task_id: "t".into(),
        prompt: "hello".into(),
        workdir: work.to_path_buf(),
        session_id,
        env: vec![("FAKE_CODEX_MODE".into(), mode.into())],
        ..Default::default()
    }
}

#[tokio::test]
async fn a_crash_on_start_is_a_clear_error() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let (result, snap) =
        run_turn(&d, input(work.path(), "crash_on_start", None), &new_sink()).await;
    assert!(!result.ok);
    let error = result.error.unwrap();
    assert!(error.contains("`initialize`"), "{error}");
    assert!(error.contains("exit code 3"), "{error}");
    assert!(error.contains("cannot load config (simulated)"), "{error}");
    assert!(snap.incomplete);
    assert!(d.live_pids().is_empty());
}

#[tokio::test]
async fn a_child_exiting_mid_request_is_a_clear_error() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let (result, _) = run_turn(&d, input(work.path(), "exit_in_request", None), &new_sink()).await;
    let error = result.error.unwrap();
    assert!(error.contains("could not start a codex thread"), "{error}");
    assert!(error.contains("thread/start"), "{error}");
    assert!(error.contains("lost the thread store"), "{error}");
}

#[tokio::test]
async fn a_crash_mid_turn_keeps_the_text_and_the_next_prompt_resumes() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let sink = new_sink();
    let (result, snap) = run_turn(&d, input(work.path(), "crash_mid", None), &sink).await;
    assert!(!result.ok);
    assert_eq!(result.session_id.as_deref(), Some("fake-thread-1"));
    let error = result.error.clone().unwrap();
    assert!(error.contains("exited mid-turn"), "{error}");
    assert!(error.contains("panicked at the model stream"), "{error}");
    assert_eq!(snap.text, "partial words");
    assert!(snap.incomplete);
    assert!(d.live_pids().is_empty(), "the dead process is not kept");
    // The next prompt starts a new process that resumes the thread.
    let sink = new_sink();
    let (next, snap) = run_turn(
        &d,
        input(work.path(), "crash_mid", result.session_id),
        &sink,
    )
    .await;
    assert!(next.ok, "{next:?}");
    assert_eq!(snap.text, "normal reply 1");
    assert_eq!(next.session_id.as_deref(), Some("fake-thread-1"));
    d.shutdown().await;
}

#[tokio::test]
async fn malformed_lines_unknown_notifications_and_unanswerable_requests() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let sink = new_sink();
    // The fake goes on only once its unanswerable request is answered (with an error).
    let (result, snap) = run_turn(&d, input(work.path(), "malformed", None), &sink).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "went on after the refused request");
    let bad: Vec<&String> = snap
        .notices
        .iter()
        .filter(|n| n.contains("not JSON-RPC"))
        .collect();
    assert_eq!(
        bad.len(),
        1,
        "one notice for the bad lines: {:?}",
        snap.notices
    );
    assert!(bad[0].contains("this is not json"), "{bad:?}");
    assert!(snap.usage.is_some());
    // The process is kept for the next turn, which works.
    let pids = d.live_pids();
    assert_eq!(pids.len(), 1);
    let (next, snap) = run_turn(&d, input(work.path(), "malformed", None), &new_sink()).await;
    assert!(next.ok);
    assert_eq!(snap.text, "normal reply 2");
    d.shutdown().await;
    assert!(eventually(Duration::from_secs(5), || gone(pids[0])).await);
}

#[tokio::test]
async fn a_line_over_the_cap_is_skipped_and_reported() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let (result, snap) = run_turn(&d, input(work.path(), "huge", None), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "went on after the huge line");
    assert!(
        snap.notices.iter().any(|n| n.contains("over the limit")),
        "{:?}",
        snap.notices
    );
    d.shutdown().await;
}

#[tokio::test]
async fn closing_a_session_ends_its_process_group() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let (result, _) = run_turn(&d, input(work.path(), "", None), &new_sink()).await;
    assert!(result.ok);
    let pids = d.live_pids();
    assert_eq!(pids.len(), 1);
    d.close_session("codex:").await;
    assert!(d.live_pids().is_empty());
    assert!(eventually(Duration::from_secs(5), || gone(pids[0])).await);
}

#[tokio::test]
async fn a_dropped_turn_kills_its_process_group() {
    let work = tempfile::tempdir().unwrap();
    let d = std::sync::Arc::new(driver());
    let sink = new_sink();
    let mark = format!("dropped-{}", std::process::id());
    let mut inp = input(work.path(), "stall", None);
    inp.env.push(("WEFT_CONFORMANCE_MARK".into(), mark.clone()));
    let ctx = weft_kernel::driver::DriverContext::new(
        tokio_util::sync::CancellationToken::new(),
        sink.clone(),
    );
    let run = {
        let d = d.clone();
        tokio::spawn(async move { d.run(inp, ctx).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(20), |s| s.text == "stalling")
            .await
    );
    let pids = weft_testkit::conformance::marked_pids(&mark);
    assert!(!pids.is_empty());
    run.abort();
    let _ = run.await;
    assert!(
        eventually(Duration::from_secs(5), || {
            weft_testkit::conformance::marked_pids(&mark).is_empty()
        })
        .await,
        "left behind: {pids:?}"
    );
}

#[tokio::test]
async fn a_steer_refused_as_the_turn_ends_follows_in_the_same_turn() {
    let work = tempfile::tempdir().unwrap();
    let d = std::sync::Arc::new(driver());
    let sink = new_sink();
    let ctx = weft_kernel::driver::DriverContext::new(
        tokio_util::sync::CancellationToken::new(),
        sink.clone(),
    );
    let run = {
        let d = d.clone();
        let inp = input(work.path(), "steer_late", None);
        tokio::spawn(async move { d.run(inp, ctx).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(20), |s| s.text == "working")
            .await
    );
    assert!(sink.steer("also mind the gap"));
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap()
        .unwrap();
    assert!(result.ok, "{result:?}");
    let snap = sink.snapshot();
    assert_eq!(snap.text, "working\n\nfollow-up got: also mind the gap");
    assert!(
        snap.notices.iter().any(|n| n.contains("follow-up")),
        "{:?}",
        snap.notices
    );
    d.shutdown().await;
}

#[tokio::test]
async fn a_thread_codex_never_saved_is_replaced_by_a_new_one() {
    let work = tempfile::tempdir().unwrap();
    let d = driver();
    let inp = input(work.path(), "lost_thread", Some("gone-thread".into()));
    let (result, snap) = run_turn(&d, inp, &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(result.session_id.as_deref(), Some("fake-thread-1"));
    assert_eq!(snap.text, "normal reply 1");
    assert!(
        snap.notices
            .iter()
            .any(|n| n.contains("no record of thread gone-thread")),
        "{:?}",
        snap.notices
    );
    d.shutdown().await;
}
