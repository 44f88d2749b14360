//! codex's own TUI through the kernel: the ready screen, a typed prompt runs a command
//! and the reply renders, the snapshot follows the rollout live (and learns the new
//! thread's id), then the structured rail resumes the same thread with its history.

use std::sync::Arc;
use std::time::Duration;

use weft_codex::{CodexDriver, Config};
use weft_protocol::{OpenTerminalRequest, Phase, PromptRequest, ToolStatus};
use weft_pty_rail_tests::*;
use weft_testkit::openai::{when, Script, Turn};
use weft_testkit::ResponsesServer;

/// The environment both codex terminal tests run codex in: its own home, the scripted
/// server as its provider, no sandbox or approvals of its own.
pub(super) fn codex_env(home: &std::path::Path, server: &ResponsesServer) -> Vec<(String, String)> {
    vec![
        ("CODEX_HOME".to_string(), home.display().to_string()),
        // codex runs commands in login shells: none of the user's profile.
        ("HOME".into(), home.display().to_string()),
        ("WEFT_CODEX_BASE_URL".into(), server.v1_url()),
        (
            "WEFT_CODEX_API_KEY_ENV".into(),
            "WEFT_TEST_OPENAI_KEY".into(),
        ),
        ("WEFT_TEST_OPENAI_KEY".into(), "test-key".into()),
        ("WEFT_CODEX_MAX_RETRIES".into(), "0".into()),
        // A CODEX_HOME under /tmp cannot host the sandbox's helper.
        ("WEFT_CODEX_SANDBOX".into(), "danger-full-access".into()),
        ("WEFT_CODEX_APPROVAL_POLICY".into(), "never".into()),
        ("WEFT_CODEX_CONFIG".into(), "model=\"mock-model\"".into()),
    ]
}

#[tokio::test]
async fn the_codex_terminal_runs_is_followed_and_hands_the_thread_back() {
    let Some(_) = require(
        weft_codex::spawn::find_binary(&Config::from_env(), &|n| std::env::var(n).ok()),
        "codex",
    ) else {
        return;
    };
    // Rules go in order: the history of the last request holds the command's output.
    let script = Script::new()
        .rule(
            when::user_text_contains("AFTER the terminal"),
            Turn::text_reply("CODEX-STRUCTURED-REPLY"),
        )
        .rule(
            when::user_text_contains("AGAIN"),
            Turn::text_reply("CODEX-SECOND-TERMINAL"),
        )
        .rule(
            when::custom(|r| {
                r.last_user_text().contains("RUN_TOOL") && r.last_tool_output().is_none()
            }),
            Turn::new().shell("call_tui1", "echo hi-from-codex-tui"),
        )
        .rule(
            when::tool_output_for("call_tui1"),
            Turn::text_reply("CODEX-TOOL-SAID hi-from-codex-tui"),
        );
    let server = ResponsesServer::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let workdir = work.path().canonicalize().unwrap();
    let env = codex_env(home.path(), &server);
    let driver = Arc::new(CodexDriver::with_config(Config {
        stop_grace: Duration::from_secs(5),
        ..Config::default()
    }));
    let loom = loom(&home.path().join(".weft"), driver.clone(), env).unwrap();

    let opened = loom
        .open_terminal(OpenTerminalRequest {
            agent: Some("codex".into()),
            workdir: Some(workdir.display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    let key = opened.session_key.clone();
    let bridge = spawn(&opened).unwrap();
    wait_screen(&bridge, "the ready prompt", |s| {
        s.contains("OpenAI Codex") && s.contains("for shortcuts")
    })
    .await;
    submit(&bridge, "RUN_TOOL from the codex tui").await;
    wait_screen(&bridge, "the reply after the command", |s| {
        s.contains("CODEX-TOOL-SAID hi-from-codex-tui")
    })
    .await;

    // The snapshot follows the rollout, and the new thread's id is recorded.
    let snap = wait_snapshot(&loom, &key, "the terminal's turn", |s| {
        s.text.contains("CODEX-TOOL-SAID") && s.session_id.is_some()
    })
    .await;
    assert_eq!(snap.phase, Phase::Streaming);
    let call = &snap.tool_calls[0];
    assert_eq!(call.summary, "$ echo hi-from-codex-tui");
    assert_eq!(call.status, ToolStatus::Done);
    assert!(snap
        .notices
        .iter()
        .any(|n| n == "typed in the terminal: RUN_TOOL from the codex tui"));
    let thread = snap.session_id.clone().unwrap();

    // The pane closes (its process group goes); the structured rail resumes the thread.
    let pid = bridge.pid().unwrap();
    drop(bridge);
    assert!(gone(pid));
    loom.close_terminal(&key).await.unwrap();
    let accepted = loom
        .prompt(PromptRequest {
            session_key: Some(key.clone()),
            prompt: "AFTER the terminal: what did it say?".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let snap = wait_snapshot(&loom, &key, "the structured turn", |s| {
        s.task_id.as_deref() == Some(accepted.task_id.as_str()) && s.phase == Phase::Done
    })
    .await;
    assert_eq!(snap.text, "CODEX-STRUCTURED-REPLY", "{snap:#?}");
    assert_eq!(snap.session_id.as_deref(), Some(thread.as_str()));
    let after = server
        .responses_requests()
        .into_iter()
        .rev()
        .find(|r| r.last_user_text().contains("AFTER the terminal"))
        .unwrap();
    assert!(after.all_text().contains("RUN_TOOL from the codex tui"));
    assert!(after.all_text().contains("hi-from-codex-tui"));

    // Opened again, the terminal resumes the thread; the rollout's earlier records are
    // history, so the snapshot shows only what is new.
    let again = loom
        .open_terminal(OpenTerminalRequest {
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(again.spec.args[..2], ["resume".to_string(), thread.clone()]);
    let bridge = spawn(&again).unwrap();
    wait_screen(&bridge, "the resumed thread", |s| {
        s.contains("CODEX-STRUCTURED-REPLY") && s.contains("for shortcuts")
    })
    .await;
    submit(&bridge, "AGAIN in the terminal").await;
    let snap = wait_snapshot(&loom, &key, "the second terminal's turn", |s| {
        s.text.contains("CODEX-SECOND-TERMINAL")
    })
    .await;
    assert_eq!(snap.text, "CODEX-SECOND-TERMINAL");
    assert_eq!(snap.session_id.as_deref(), Some(thread.as_str()));
    drop(bridge);
    loom.close_terminal(&key).await.unwrap();

    loom.shutdown().await;
    assert!(driver.live_pids().is_empty());
}
