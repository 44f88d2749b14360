//! The driver against a scripted ACP agent (`tests/fixtures/fake_agent.js`): the whole
//! protocol path, bad input, crashes and stop, without a model.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use weft_acp::{AcpDriver, AcpSpec};
use weft_kernel::AgentDriver;
use weft_protocol::{permission, InteractionKind, InteractionResponse, StepStatus, ToolStatus};

use super::support::*;

pub fn fake_spec() -> Option<AcpSpec> {
    let script = format!(
        "{}/tests/fixtures/fake_agent.js",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut spec = AcpSpec::new("fake", "node", &[]);
    spec.args = vec![script];
    spec.stop_grace = Duration::from_millis(800);
    match spec.find_binary(&|n| std::env::var(n).ok()) {
        Ok(_) => Some(spec),
        Err(why) => {
            if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
                panic!("CI=true and node is missing: {why}");
            }
            eprintln!("SKIPPED (no node): {why}");
            None
        }
    }
}

fn fake() -> Option<AcpDriver> {
    fake_spec().map(AcpDriver::new)
}

#[tokio::test]
async fn a_turn_streams_text_reasoning_usage_and_keeps_the_process() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    let sink = TestSink::new();
    let (r, snap) = run(&d, h.input("fake:1", "hi", vec![]), &sink).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.text, "Hello from the fake agent: hi");
    assert_eq!(snap.reasoning, "thinking");
    let u = snap.usage.clone().unwrap();
    assert_eq!(
        (u.input_tokens, u.output_tokens, u.cached_input_tokens),
        (Some(1234), Some(56), Some(7))
    );
    assert_eq!(
        (u.context_used_tokens, u.context_percent, u.cost_usd),
        (Some(500), Some(50.0), Some(0.25))
    );
    assert_eq!(snap.model.as_deref(), Some("fake-1"));
    let sid = r.session_id.clone().unwrap();
    let pid = d.live_pids();
    assert_eq!(pid.len(), 1);
    assert_eq!(d.available_commands("fake:1"), vec!["init"]);
    // The second turn reuses the process and the session.
    let sink = TestSink::new();
    let (r2, snap2) = run(&d, h.input("fake:1", "again", vec![]), &sink).await;
    assert!(r2.ok);
    assert_eq!(r2.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(d.live_pids(), pid);
    assert!(snap2.text.ends_with("again"));
    // Models and modes come from session/new.
    let ids: Vec<String> = d.models().await.into_iter().map(|m| m.id).collect();
    assert_eq!(ids, vec!["fake-1", "fake-2", "mode:ask", "mode:auto"]);
    d.close_session("fake:1").await;
    assert!(d.live_pids().is_empty());
}

#[tokio::test]
async fn malformed_lines_and_unknown_notifications_are_ignored() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    let sink = TestSink::new();
    let (r, snap) = run(&d, h.input("fake:g", "garbage", vec![]), &sink).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.text, "still here");
    // The connection survived: the next prompt works.
    let (r, snap) = run(&d, h.input("fake:g", "hi", vec![]), &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    assert!(snap.text.starts_with("Hello"));
    d.shutdown().await;
}

#[tokio::test]
async fn a_request_we_cannot_answer_gets_an_error_not_silence() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    let (r, snap) = run(
        &d,
        h.input("fake:u", "ask-unknown", vec![]),
        &TestSink::new(),
    )
    .await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.text, "answered: error -32601");
    d.shutdown().await;
}

#[tokio::test]
async fn a_child_that_dies_mid_turn_is_a_clear_error_and_the_next_prompt_works() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    let (r, snap) = run(&d, h.input("fake:d", "die", vec![]), &TestSink::new()).await;
    assert!(!r.ok);
    let err = snap.error.clone().unwrap();
    assert!(err.contains("exited mid-turn"), "{err}");
    assert!(err.contains("exit status 3"), "{err}");
    assert!(err.contains("dying on purpose"), "{err}");
    assert!(snap.incomplete);
    assert_eq!(snap.text, "partial ");
    assert!(d.live_pids().is_empty());
    // A new process resumes the session with session/load (the fake advertises it);
    // its history replay is not mixed into the new turn.
    let sink = TestSink::new();
    let mut input = h.input("fake:d", "hi", vec![]);
    input.session_id = r.session_id.clone();
    let (r2, snap2) = run(&d, input, &sink).await;
    assert!(r2.ok, "{r2:?}");
    assert_eq!(r2.session_id, r.session_id);
    assert_eq!(snap2.text, "Hello from the fake agent: hi");
    d.shutdown().await;
}

/// A session loaded ahead of its turn (the warm pool) whose agent replays the history
/// after `session/load`'s reply: the replay is history, not text for the next turn nor
/// "the agent wrote after the last turn had ended".
#[tokio::test]
async fn a_replay_that_trails_session_load_shows_nowhere_in_the_next_turn() {
    let Some(mut spec) = fake_spec() else { return };
    spec.env.push(("FAKE_AGENT_LATE_REPLAY".into(), "1".into()));
    let d = AcpDriver::new(spec);
    let h = Home::new();
    let (r, _) = run(&d, h.input("fake:r", "hi", vec![]), &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    d.close_session("fake:r").await;
    let mut input = h.input("fake:r", "again", vec![]);
    input.session_id = r.session_id.clone();
    assert!(d.prewarm(input.clone()).await.unwrap().is_some());
    // The replay comes 50 ms after the reply: let it arrive before the prompt.
    tokio::time::sleep(Duration::from_millis(400)).await;
    let (r2, snap) = run(&d, input, &TestSink::new()).await;
    assert!(r2.ok, "{r2:?}");
    assert_eq!(snap.text, "Hello from the fake agent: again");
    assert!(
        !snap.notices.iter().any(|n| n.contains("an old reply")),
        "{:?}",
        snap.notices
    );
    d.shutdown().await;
}

#[tokio::test]
async fn a_crash_on_start_says_what_the_agent_said() {
    let Some(mut spec) = fake_spec() else { return };
    spec.env.push(("FAKE_AGENT_START".into(), "crash".into()));
    let d = AcpDriver::new(spec);
    let h = Home::new();
    let (r, snap) = run(&d, h.input("fake:c", "hi", vec![]), &TestSink::new()).await;
    assert!(!r.ok);
    let err = snap.error.unwrap();
    assert!(err.contains("no config file"), "{err}");
    assert!(err.contains("exit status 2"), "{err}");
}

#[tokio::test]
async fn stop_cancels_and_the_session_goes_on() {
    let Some(d) = fake() else { return };
    let d = Arc::new(d);
    let h = Home::new();
    let sink = TestSink::new();
    let cancel = CancellationToken::new();
    let turn = {
        let (d, sink, cancel, input) = (
            d.clone(),
            sink.clone(),
            cancel.clone(),
            h.input("fake:s", "slow", vec![]),
        );
        tokio::spawn(async move { run_with(d.as_ref(), input, &sink, cancel).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(20), |s| s.text.contains("w1"))
            .await
    );
    cancel.cancel();
    let (r, snap) = turn.await.unwrap();
    assert!(!r.ok);
    assert!(snap.incomplete);
    assert_eq!(snap.error, None);
    assert!(snap.text.starts_with("working w0 w1"));
    let pids = d.live_pids();
    assert_eq!(pids.len(), 1, "a clean cancel keeps the process");
    let (r, _) = run(
        d.as_ref(),
        h.input("fake:s", "hi", vec![]),
        &TestSink::new(),
    )
    .await;
    assert!(r.ok);
    assert_eq!(d.live_pids(), pids);
    d.shutdown().await;
}

#[tokio::test]
async fn an_agent_that_ignores_cancel_is_killed() {
    let Some(d) = fake() else { return };
    let d = Arc::new(d);
    let h = Home::new();
    let sink = TestSink::new();
    let cancel = CancellationToken::new();
    let turn = {
        let (d, sink, cancel, input) = (
            d.clone(),
            sink.clone(),
            cancel.clone(),
            h.input("fake:k", "stubborn", vec![]),
        );
        tokio::spawn(async move { run_with(d.as_ref(), input, &sink, cancel).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(20), |s| s.text.contains("w0"))
            .await
    );
    cancel.cancel();
    let (r, snap) = turn.await.unwrap();
    assert!(!r.ok && snap.incomplete);
    assert!(d.live_pids().is_empty(), "a stubborn agent is killed");
}

#[tokio::test]
async fn permission_offers_the_agents_options_and_sends_the_choice() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    for (answer, expect_text, status) in [
        (
            InteractionResponse::select(permission::ALLOW),
            "after: yes",
            ToolStatus::Done,
        ),
        (
            InteractionResponse::select("yes-always"),
            "after: yes-always",
            ToolStatus::Done,
        ),
        (
            InteractionResponse::select(permission::DENY),
            "after: no",
            ToolStatus::Failed,
        ),
        (
            InteractionResponse::cancel(),
            "after: cancelled",
            ToolStatus::Failed,
        ),
    ] {
        let sink = TestSink::new();
        let a = answer.clone();
        sink.answer_with(move |_| Some(a.clone()));
        let (r, snap) = run(&d, h.input("fake:p", "permission", vec![]), &sink).await;
        assert!(r.ok, "{r:?}");
        assert_eq!(snap.text, expect_text);
        assert_eq!(snap.tool_calls[0].status, status, "{answer:?}");
        let asked = sink.asked.lock()[0].clone();
        assert_eq!(asked.kind, InteractionKind::Permission);
        assert_eq!(
            asked.tool_input,
            Some(serde_json::json!({"command": "rm -rf build"}))
        );
        let choices: Vec<(String, String)> = asked.questions[0]
            .choices
            .iter()
            .map(|c| (c.label.clone(), c.value.clone()))
            .collect();
        assert_eq!(
            choices,
            vec![
                ("Always allow rm".to_string(), "allowSession".to_string()),
                ("Allow".to_string(), "allow".to_string()),
                ("Reject".to_string(), "deny".to_string()),
            ]
        );
    }
    d.shutdown().await;
}

#[tokio::test]
async fn elicitation_is_a_question_and_the_answer_goes_back() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    let sink = TestSink::new();
    sink.answer_with(|i| {
        assert_eq!(i.kind, InteractionKind::UserInput);
        assert_eq!(i.questions.len(), 1);
        Some(InteractionResponse::select("blue"))
    });
    let (r, snap) = run(&d, h.input("fake:e", "elicit", vec![]), &sink).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(
        snap.text,
        r#"elicited: {"action":"accept","content":{"color":"blue"}}"#
    );
    d.shutdown().await;
}

#[tokio::test]
async fn plan_and_mode_updates() {
    let Some(d) = fake() else { return };
    let h = Home::new();
    let (r, snap) = run(&d, h.input("fake:pl", "plan", vec![]), &TestSink::new()).await;
    assert!(r.ok);
    let steps: Vec<(String, StepStatus)> = snap
        .plan
        .unwrap()
        .steps
        .into_iter()
        .map(|s| (s.text, s.status))
        .collect();
    assert_eq!(
        steps,
        vec![
            ("Read the code".to_string(), StepStatus::Completed),
            ("Write the fix".to_string(), StepStatus::InProgress)
        ]
    );
    assert_eq!(snap.notices, vec!["The agent switched to mode `auto`"]);
    d.shutdown().await;
}

#[tokio::test]
async fn a_missing_binary_is_reported_and_fails_the_turn() {
    let mut spec = AcpSpec::new("ghost", "weft-no-such-acp-agent", &[]);
    spec.bin_env.clear();
    let d = AcpDriver::new(spec);
    let info = d.info().await;
    assert!(!info.installed);
    assert!(info.problem.unwrap().contains("weft-no-such-acp-agent"));
    let h = Home::new();
    let (r, snap) = run(&d, h.input("ghost:1", "hi", vec![]), &TestSink::new()).await;
    assert!(!r.ok);
    assert!(snap.error.unwrap().contains("was not found"));
}

#[tokio::test]
async fn user_agents_from_agents_json_are_registered() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(
        dir.path().join("agents.json"),
        r#"{"agents":[{"id":"mine","name":"Mine","command":"node","args":["x.js"]},
                      {"id":"kimi","command":"/opt/kimi/bin/kimi","args":["acp"]}]}"#,
    )
    .unwrap();
    let ids: Vec<String> = weft_acp::drivers(dir.path())
        .iter()
        .map(|d| d.id().to_string())
        .collect();
    assert_eq!(
        ids,
        vec![
            "hermes",
            "claude-acp",
            "gemini-acp",
            "qwen",
            "copilot",
            "codex-acp",
            "auggie",
            "amp",
            "mine",
            "kimi"
        ]
    );
}
