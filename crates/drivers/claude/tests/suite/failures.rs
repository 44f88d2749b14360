//! Failure modes the real CLI shows only sometimes, made certain with a stand-in
//! binary (`tests/fixtures/fake-claude.sh`): each ends with a clear error in the
//! snapshot, the turn incomplete, everything received kept, and the next prompt works.

use std::time::Duration;

use weft_claude::{ClaudeDriver, Config};
use weft_kernel::driver::{AgentDriver, AgentTurnInput};
use weft_protocol::UniversalSnapshot;

use super::support::*;

fn fake_driver() -> ClaudeDriver {
    ClaudeDriver::with_config(Config {
        bin: Some(fixture("fake-claude.sh")),
        ..fast_config()
    })
}

struct FakeEnv {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl FakeEnv {
    fn new() -> Self {
        Self {
            home: tempfile::tempdir().unwrap(),
            work: tempfile::tempdir().unwrap(),
        }
    }

    fn input(&self, mode: &str, prompt: &str) -> AgentTurnInput {
        AgentTurnInput {
            session_key: format!("claude:fake-{mode}"),
            task_id: "t".into(),
            prompt: prompt.into(),
            workdir: self.work.path().canonicalize().unwrap(),
            env: vec![
                ("HOME".into(), self.home.path().display().to_string()),
                ("FAKE_CLAUDE_MODE".into(), mode.into()),
            ],
            ..Default::default()
        }
    }
}

async fn first_then_next(mode: &str) -> (UniversalSnapshot, UniversalSnapshot) {
    let env = FakeEnv::new();
    let driver = fake_driver();
    let (r1, s1) = run_turn(&driver, env.input(mode, "first prompt"), &new_sink()).await;
    assert!(!r1.ok, "{mode}: the first turn must fail: {r1:?}");
    assert!(s1.incomplete && s1.error.is_some(), "{mode}: {s1:?}");
    let (r2, s2) = run_turn(&driver, env.input(mode, "second prompt"), &new_sink()).await;
    assert!(r2.ok, "{mode}: the next prompt must work: {r2:?}");
    assert!(s2.text.starts_with("normal reply"), "{mode}: {}", s2.text);
    driver.shutdown().await;
    (s1, s2)
}

#[tokio::test]
async fn missing_binary_is_a_clear_error() {
    let driver = ClaudeDriver::with_config(Config {
        bin: Some("/nonexistent/claude".into()),
        ..fast_config()
    });
    let env = FakeEnv::new();
    let (r, s) = run_turn(&driver, env.input("x", "hi"), &new_sink()).await;
    assert!(!r.ok);
    assert!(s.error.unwrap().contains("WEFT_CLAUDE_BIN"));
    let info = driver.info().await;
    assert!(!info.installed && info.problem.is_some());
}

#[tokio::test]
async fn crash_on_start_reports_stderr() {
    let env = FakeEnv::new();
    let driver = fake_driver();
    let (r, s) = run_turn(&driver, env.input("crash_on_start", "hi"), &new_sink()).await;
    assert!(!r.ok);
    let err = s.error.unwrap();
    assert!(err.contains("exited before it started"), "{err}");
    assert!(err.contains("exit status 3"), "{err}");
    assert!(err.contains("cannot read settings"), "{err}");
}

#[tokio::test]
async fn crash_mid_turn_keeps_text_and_recovers_the_rest() {
    let (s1, _) = first_then_next("crash_mid").await;
    assert_eq!(s1.text, "Hello world, this is the whole reply.");
    let err = s1.error.unwrap();
    assert!(
        err.contains("exited mid-turn") && err.contains("crashed mid-turn"),
        "{err}"
    );
    assert!(
        s1.notices.iter().any(|n| n.contains("recovered")),
        "{:?}",
        s1.notices
    );
}

#[tokio::test]
async fn a_line_cut_by_exit_is_recovered_from_the_session_file() {
    let (s1, _) = first_then_next("cut_line").await;
    assert_eq!(s1.text, "Part one. Part two, lost on stdout.");
    assert!(s1.notices.iter().any(|n| n.contains("middle of a line")));
    assert!(s1.notices.iter().any(|n| n.contains("recovered")));
}

#[tokio::test]
async fn malformed_line_is_skipped_with_an_error() {
    let (s1, _) = first_then_next("malformed").await;
    assert_eq!(s1.text, "before after");
    assert!(s1.error.unwrap().contains("malformed"));
}

#[tokio::test]
async fn a_16_mib_line_is_skipped_with_an_error() {
    let (s1, _) = first_then_next("huge").await;
    assert_eq!(s1.text, "small tail");
    let err = s1.error.unwrap();
    assert!(
        err.contains("16777") && err.contains("WEFT_CLAUDE_MAX_LINE_BYTES"),
        "{err}"
    );
}

#[tokio::test]
async fn invalid_utf8_is_replaced_and_reported() {
    let (s1, _) = first_then_next("bad_utf8").await;
    assert_eq!(s1.text, "good bad\u{fffd}\u{fffd} byte");
    assert!(s1.error.unwrap().contains("UTF-8"));
}

#[tokio::test]
async fn resume_noop_is_sent_again() {
    let env = FakeEnv::new();
    let driver = fake_driver();
    let (r, s) = run_turn(&driver, env.input("noop", "do it"), &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(s.text, "normal reply 3");
    assert_eq!(
        s.notices
            .iter()
            .filter(|n| n.contains("No response requested"))
            .count(),
        2
    );
    driver.shutdown().await;

    let driver = ClaudeDriver::with_config(Config {
        bin: Some(fixture("fake-claude.sh")),
        noop_retries: 1,
        ..fast_config()
    });
    let (r, s) = run_turn(&driver, env.input("noop", "do it"), &new_sink()).await;
    assert!(!r.ok);
    assert!(s.error.unwrap().contains("did not run the prompt"));
    driver.shutdown().await;
}

#[tokio::test]
async fn truncated_reply_asks_once_then_settles_as_truncated() {
    let env = FakeEnv::new();
    let driver = fake_driver();
    let sink = new_sink();
    let (r, s) = tokio::time::timeout(
        Duration::from_secs(30),
        run_turn(&driver, env.input("truncated", "read it"), &sink),
    )
    .await
    .unwrap();
    assert!(!r.ok);
    assert!(s.error.unwrap().contains("truncated"));
    assert!(s
        .notices
        .iter()
        .any(|n| n.contains("asked Claude Code to finish")));
    assert_eq!(s.tool_calls.len(), 2);
    driver.shutdown().await;
}
