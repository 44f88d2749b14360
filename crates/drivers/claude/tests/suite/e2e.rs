//! The real `claude` binary against the scripted server, through the driver directly.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_claude::ClaudeDriver;
use weft_kernel::driver::{AgentDriver, DriverContext};
use weft_protocol::{
    permission, ArtifactKind, InteractionKind, InteractionResponse, QuestionType, ToolKind,
    ToolStatus,
};
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::*;

#[tokio::test]
async fn text_reply_with_usage_and_session() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(
        Script::new().turn(
            Turn::new()
                .thinking("Considering the greeting.")
                .text_chunks(&["Hello ", "from the ", "script."])
                .usage(1200, 40)
                .cache(300, 0),
        ),
    )
    .await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    let (result, snap) = run_turn(&driver, env.input("t1", "say hello"), &sink).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "Hello from the script.");
    assert_eq!(snap.reasoning, "Considering the greeting.");
    let sid = snap.session_id.clone().unwrap();
    assert_eq!(result.session_id.as_deref(), Some(sid.as_str()));
    let usage = snap.usage.unwrap();
    assert_eq!(usage.output_tokens, Some(40));
    assert_eq!(usage.cached_input_tokens, Some(300));
    assert!(usage.context_percent.unwrap() > 0.0);
    assert!(usage.cost_usd.unwrap() > 0.0);
    let reqs = env.server.messages_requests();
    assert!(reqs[0].last_user_text().contains("say hello"));
    driver.shutdown().await;
}

#[tokio::test]
async fn bash_runs_and_write_makes_an_artifact_after_permission() {
    let Some(_) = claude_bin() else { return };
    let env_work = tempfile::tempdir().unwrap();
    let target = env_work.path().canonicalize().unwrap().join("made.txt");
    let script = Script::new()
        .turn(Turn::new().text("Running it.").tool_use(
            "toolu_b1",
            "Bash",
            json!({"command": "echo bash-was-here > ran.txt && cat ran.txt", "description": "write ran.txt"}),
        ))
        .turn_when(
            when::tool_result_for("toolu_b1"),
            Turn::new().tool_use(
                "toolu_w1",
                "Write",
                json!({"file_path": target.display().to_string(), "content": "made by the script\n"}),
            ),
        )
        .turn_when(when::tool_result_for("toolu_w1"), Turn::text_reply("All done."));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let mut input = env.input("t2", "do the work");
    input.workdir = env_work.path().canonicalize().unwrap();
    let (result, snap) = run_turn(&driver, input, &sink).await;
    assert!(result.ok, "{result:?}");
    let ran = std::fs::read_to_string(env_work.path().join("ran.txt")).unwrap();
    assert_eq!(ran.trim(), "bash-was-here");
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "made by the script\n"
    );
    let bash = snap.tool_calls.iter().find(|c| c.id == "toolu_b1").unwrap();
    assert_eq!(bash.kind, ToolKind::Shell);
    assert_eq!(bash.status, ToolStatus::Done);
    assert_eq!(bash.result.as_deref().map(str::trim), Some("bash-was-here"));
    let write = snap.tool_calls.iter().find(|c| c.id == "toolu_w1").unwrap();
    assert_eq!(write.status, ToolStatus::Done);
    assert_eq!(snap.artifacts.len(), 1);
    assert_eq!(
        snap.artifacts[0].path.as_deref(),
        Some(target.to_str().unwrap())
    );
    assert_eq!(snap.artifacts[0].kind, ArtifactKind::Document);
    assert!(snap.text.ends_with("All done."));
    assert!(sink
        .asked
        .lock()
        .iter()
        .all(|i| i.kind == InteractionKind::Permission));
    driver.shutdown().await;
}

#[tokio::test]
async fn permission_denied_reaches_the_model() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_d1",
            "Bash",
            json!({"command": "touch should-not-exist.txt", "description": "touch a file"}),
        ))
        .turn_when(
            when::tool_result_for("toolu_d1"),
            Turn::text_reply("Understood, not touching it."),
        );
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::DENY)));
    let (result, snap) = run_turn(&driver, env.input("t3", "touch it"), &sink).await;
    assert!(result.ok, "{result:?}");
    assert!(!env.workdir().join("should-not-exist.txt").exists());
    let call = snap.tool_calls.iter().find(|c| c.id == "toolu_d1").unwrap();
    assert_eq!(call.status, ToolStatus::Failed);
    let asked = sink.asked.lock().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].tool_name.as_deref(), Some("Bash"));
    let reqs = env.server.messages_requests();
    assert_eq!(
        reqs.last().unwrap().tool_result_is_error("toolu_d1"),
        Some(true)
    );
    assert!(snap.notices.iter().any(|n| n.starts_with("denied")));
    assert_eq!(snap.text, "Understood, not touching it.");
    driver.shutdown().await;
}

#[tokio::test]
async fn ask_user_question_is_answered() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_q1",
            "AskUserQuestion",
            json!({"questions": [{"question": "Which color?", "header": "Color",
                "options": [{"label": "Red", "description": "warm"}, {"label": "Blue", "description": "cool"}],
                "multiSelect": false}]}),
        ))
        .turn_when(when::tool_result_for("toolu_q1"), Turn::text_reply("Blue it is."));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|i| {
        (i.kind == InteractionKind::UserInput).then(|| InteractionResponse::select("Blue"))
    });
    let (result, snap) = run_turn(&driver, env.input("t4", "pick a color"), &sink).await;
    assert!(result.ok, "{result:?}");
    let asked = sink.asked.lock().clone();
    assert_eq!(asked[0].questions[0].kind, QuestionType::Select);
    assert_eq!(asked[0].questions[0].text, "Which color?");
    let reqs = env.server.messages_requests();
    let answer = reqs.last().unwrap().last_tool_result("toolu_q1").unwrap();
    assert!(answer.contains("\"Which color?\"=\"Blue\""), "{answer}");
    assert_eq!(snap.text, "Blue it is.");
    driver.shutdown().await;
}

/// A `multiSelect` question takes several picks, and any question free text ("Other"):
/// the real Claude gets the picks and the text as its own dialog sends them.
#[tokio::test]
async fn ask_user_question_takes_several_picks_and_other_text() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_q2",
            "AskUserQuestion",
            json!({"questions": [
                {"question": "Which toppings?", "header": "Toppings", "multiSelect": true,
                 "options": [{"label": "Cheese", "description": "c"},
                             {"label": "Olives", "description": "o"},
                             {"label": "Basil", "description": "b"}]},
                {"question": "Which size?", "header": "Size", "multiSelect": false,
                 "options": [{"label": "Small", "description": "s"},
                             {"label": "Large", "description": "l"}]}]}),
        ))
        .turn_when(
            when::tool_result_for("toolu_q2"),
            Turn::text_reply("Ordered."),
        );
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|i| {
        (i.kind == InteractionKind::UserInput).then(|| {
            let mut r = InteractionResponse::select("Cheese");
            r.value = None;
            r.action = weft_protocol::InteractAction::Text;
            r.selected
                .insert("q0".into(), vec!["Cheese".into(), "Basil".into()]);
            r.texts.insert("q1".into(), "Family size".into());
            r
        })
    });
    let (result, snap) = run_turn(&driver, env.input("t4b", "order a pizza"), &sink).await;
    assert!(result.ok, "{result:?}");
    let asked = sink.asked.lock().clone();
    let qs = &asked[0].questions;
    assert!(qs[0].multiple && qs[0].free_text, "{qs:?}");
    assert!(!qs[1].multiple && qs[1].free_text, "{qs:?}");
    let reqs = env.server.messages_requests();
    let answer = reqs.last().unwrap().last_tool_result("toolu_q2").unwrap();
    assert!(
        answer.contains("\"Which toppings?\"=\"Cheese, Basil\""),
        "{answer}"
    );
    assert!(
        answer.contains("\"Which size?\"=\"Family size\""),
        "{answer}"
    );
    assert_eq!(snap.text, "Ordered.");
    driver.shutdown().await;
}

#[tokio::test]
async fn stop_during_streaming_then_next_prompt_in_the_same_process() {
    let Some(_) = claude_bin() else { return };
    let words: Vec<String> = (0..60).map(|i| format!("w{i} ")).collect();
    let chunks: Vec<&str> = words.iter().map(String::as_str).collect();
    let script = Script::new()
        .turn(
            Turn::new()
                .delta_delay(Duration::from_millis(200))
                .text_chunks(&chunks),
        )
        .turn(Turn::text_reply("after the stop"));
    let env = ClaudeEnv::start(script).await;
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let sink = new_sink();
    let cancel = CancellationToken::new();
    let ctx = DriverContext::new(cancel.clone(), sink.clone());
    let d = driver.clone();
    let input = env.input("t5", "stream slowly");
    let run = tokio::spawn(async move { d.run(input, ctx).await });
    assert!(
        sink.wait_for(Duration::from_secs(60), |s| s.text.contains("w2 "))
            .await
    );
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap()
        .unwrap();
    assert!(!result.ok);
    assert!(result.error.is_none(), "{result:?}");
    let snap = finish(&sink, &result, true);
    assert!(snap.incomplete);
    assert!(snap.text.starts_with("w0 w1 w2 "));
    assert!(!snap.text.contains("w59"));
    let pids = driver.live_pids();
    assert_eq!(pids.len(), 1, "the process stays for the next prompt");
    let sink2 = new_sink();
    let (result, snap) = run_turn(&driver, env.input("t5", "again"), &sink2).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "after the stop");
    assert_eq!(driver.live_pids(), pids, "same process");
    driver.shutdown().await;
    assert!(driver.live_pids().is_empty());
    for pid in pids {
        assert!(eventually(Duration::from_secs(5), || gone(pid)).await);
    }
}

#[tokio::test]
async fn steer_during_a_running_tool_is_injected() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().text("Sleeping.").tool_use(
            "toolu_s1",
            "Bash",
            json!({"command": "sleep 3; echo slept", "description": "slow sleep"}),
        ))
        .rule(
            when::any_text_contains("STEER-NOW"),
            Turn::text_reply("Saw the steer."),
        );
    let env = ClaudeEnv::start(script).await;
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let d = driver.clone();
    let input = env.input("t6", "run the slow tool");
    let run = tokio::spawn(async move { d.run(input, ctx).await });
    assert!(
        sink.wait_for(Duration::from_secs(60), |s| s
            .tool_calls
            .iter()
            .any(|c| c.id == "toolu_s1"))
            .await
    );
    assert!(sink.steer("STEER-NOW: also say hi"));
    let result = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .unwrap()
        .unwrap();
    let snap = finish(&sink, &result, false);
    assert!(result.ok, "{result:?} {:?}", snap.notices);
    assert!(snap.text.ends_with("Saw the steer."), "{}", snap.text);
    assert!(
        snap.notices.iter().any(|n| n.contains("injected")),
        "{:?}",
        snap.notices
    );
    let reqs = env.server.messages_requests();
    assert!(reqs.iter().any(
        |r| r.system_entries().iter().any(|s| s.contains("STEER-NOW"))
            || r.all_text().contains("STEER-NOW")
    ));
    driver.shutdown().await;
}

#[tokio::test]
async fn resume_in_a_new_process_sends_the_earlier_conversation() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::text_reply("First answer: 42."))
        .turn(Turn::text_reply("Second answer."));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let (r1, _) = run_turn(&driver, env.input("t7", "remember the number"), &new_sink()).await;
    assert!(r1.ok);
    let sid = r1.session_id.unwrap();
    driver.shutdown().await;
    let driver2 = ClaudeDriver::with_config(fast_config());
    let mut input = env.input("t7", "what was it?");
    input.session_id = Some(sid.clone());
    let (r2, snap) = run_turn(&driver2, input, &new_sink()).await;
    assert!(r2.ok, "{r2:?}");
    assert_eq!(r2.session_id.as_deref(), Some(sid.as_str()));
    assert_eq!(snap.text, "Second answer.");
    let last = env.server.messages_requests().pop().unwrap();
    let all = last.all_text();
    assert!(
        all.contains("remember the number") && all.contains("First answer: 42."),
        "{all}"
    );
    driver2.shutdown().await;
}

#[tokio::test]
async fn subagent_and_its_nested_tools() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .rule(
            when::user_text_contains("SUBTASK"),
            Turn::new().tool_use(
                "toolu_n1",
                "Bash",
                json!({"command": "echo nested-hi", "description": "nested echo"}),
            ),
        )
        .rule(
            when::tool_result_for("toolu_n1"),
            Turn::text_reply("Subagent report: nested-hi"),
        )
        .rule(
            when::tool_result_for("toolu_a1"),
            Turn::text_reply("The subagent finished."),
        )
        .turn(Turn::new().text("Delegating.").tool_use(
            "toolu_a1",
            "Agent",
            json!({"description": "inspect things", "prompt": "SUBTASK echo", "subagent_type": "general-purpose"}),
        ));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let (result, snap) = run_turn(&driver, env.input("t8", "delegate"), &sink).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.sub_agents.len(), 1);
    let agent = &snap.sub_agents[0];
    assert_eq!(agent.id, "toolu_a1");
    assert_eq!(agent.name, "general-purpose");
    assert_eq!(agent.status, ToolStatus::Done);
    assert!(agent.result.as_deref().unwrap().contains("Subagent report"));
    let nested = snap.tool_calls.iter().find(|c| c.id == "toolu_n1").unwrap();
    assert_eq!(nested.parent_id.as_deref(), Some("toolu_a1"));
    assert_eq!(snap.text, "Delegating.\n\nThe subagent finished.");
    assert!(!snap.text.contains("Subagent report"));
    driver.shutdown().await;
}

#[tokio::test]
async fn server_crash_mid_stream_fails_the_turn_and_the_next_prompt_works() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().text("partial answer").then_drop())
        .turn(Turn::text_reply("recovered fine"));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    let (result, snap) = run_turn(&driver, env.input("t9", "go"), &sink).await;
    assert!(!result.ok, "{result:?}");
    assert!(snap.error.is_some());
    assert!(snap.incomplete);
    let (result, snap) = run_turn(&driver, env.input("t9", "again"), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "recovered fine");
    driver.shutdown().await;
}

#[tokio::test]
async fn a_pending_permission_is_cancelled_when_the_turn_is_stopped() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_p1",
            "Bash",
            json!({"command": "touch never.txt", "description": "touch a file"}),
        ))
        // The next prompt's message also carries the cancelled call's tool_result.
        .rule(
            when::user_text_contains("again"),
            Turn::text_reply("next turn fine"),
        )
        .rule(
            when::tool_result_for("toolu_p1"),
            Turn::text_reply("ok, not done"),
        );
    let env = ClaudeEnv::start(script).await;
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let sink = new_sink();
    sink.answer_with(|_| None); // hold every question
    let cancel = CancellationToken::new();
    let ctx = DriverContext::new(cancel.clone(), sink.clone());
    let d = driver.clone();
    let input = env.input("pending", "touch it");
    let run = tokio::spawn(async move { d.run(input, ctx).await });
    assert!(
        sink.wait_for_held(Duration::from_secs(60), |_, held| held == 1)
            .await
    );
    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(30), run)
        .await
        .unwrap()
        .unwrap();
    let snap = finish(&sink, &result, true);
    assert!(!result.ok && snap.incomplete);
    assert!(
        snap.notices.iter().any(|n| n.ends_with("cancelled")),
        "{:?}",
        snap.notices
    );
    assert!(!env.workdir().join("never.txt").exists());
    let (result, snap) = run_turn(&driver, env.input("pending", "again"), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert!(snap.text.ends_with("next turn fine"), "{}", snap.text);
    driver.shutdown().await;
}

/// A Claude Edit's normalized change: the same shape a Codex apply_patch of the same
/// edit gives (weft-codex's e2e `an_update_patch_is_the_same_change_shape_as_an_edit`).
#[tokio::test]
async fn an_edit_carries_its_change_as_a_unified_diff() {
    let Some(_) = claude_bin() else { return };
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let target = dir.join("notes.txt");
    std::fs::write(&target, "one\ntwo\nthree\n").unwrap();
    // Claude edits only a file it has read in the session.
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_r1",
            "Read",
            json!({"file_path": target.display().to_string()}),
        ))
        .turn_when(when::tool_result_for("toolu_r1"), Turn::new().tool_use(
            "toolu_e1",
            "Edit",
            json!({"file_path": target.display().to_string(), "old_string": "two", "new_string": "2"}),
        ))
        .turn_when(when::tool_result_for("toolu_e1"), Turn::text_reply("Edited."));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let mut input = env.input("t-edit", "edit the notes");
    input.workdir = dir.clone();
    let (result, snap) = run_turn(&driver, input, &sink).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\n2\nthree\n");
    let edit = snap.tool_calls.iter().find(|c| c.id == "toolu_e1").unwrap();
    assert_eq!(edit.status, ToolStatus::Done);
    let shown = target.display().to_string();
    let shown = shown.trim_start_matches('/');
    assert_eq!(
        edit.changes,
        vec![weft_protocol::FileChange {
            path: target.display().to_string(),
            kind: weft_protocol::ChangeKind::Modify,
            diff: format!(
                "--- a/{shown}\n+++ b/{shown}\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
            ),
        }]
    );
    driver.shutdown().await;
}
