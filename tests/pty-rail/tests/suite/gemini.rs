//! The Gemini CLI's own TUI through the kernel: the ready screen, a typed prompt gets
//! the scripted reply (followed live in the snapshot from the chat file), then the
//! structured rail continues the same session (under the id the terminal was started
//! with) with its history, and a re-opened terminal resumes it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use weft_protocol::{OpenTerminalRequest, Phase, PromptRequest};
use weft_pty_rail_tests::*;
use weft_testkit::gemini::{when, Script, Turn};
use weft_testkit::GeminiServer;

/// A main-loop request (no response schema: not the model router's classifier) whose
/// latest user text has `needle`.
fn main_turn_asking(needle: &'static str) -> weft_testkit::gemini::Matcher {
    when::custom(move |r| r.response_schema().is_none() && r.last_user_text().contains(needle))
}

#[tokio::test]
async fn the_gemini_terminal_runs_and_hands_the_session_back() {
    let Some(_) = require(
        weft_gemini::acp_spec().find_binary(&|n| std::env::var(n).ok()),
        "gemini",
    ) else {
        return;
    };
    let script = Script::new()
        .rule(
            main_turn_asking("HELLO from the gemini tui"),
            Turn::text_reply("GEMINI-TUI-REPLY"),
        )
        .rule(
            main_turn_asking("AFTER the terminal"),
            Turn::text_reply("GEMINI-STRUCTURED-REPLY"),
        )
        .rule(
            main_turn_asking("AGAIN"),
            Turn::text_reply("GEMINI-SECOND-TERMINAL"),
        );
    let server = GeminiServer::start(script).await.unwrap();
    let home = tempfile::tempdir().unwrap();
    let gemini_dir = home.path().join(".gemini");
    std::fs::create_dir_all(&gemini_dir).unwrap();
    std::fs::write(
        gemini_dir.join("settings.json"),
        json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false},
        })
        .to_string(),
    )
    .unwrap();
    let work = tempfile::tempdir().unwrap();
    let workdir = work.path().canonicalize().unwrap();
    let env = vec![
        ("HOME".to_string(), home.path().display().to_string()),
        ("GEMINI_API_KEY".into(), "test-key".into()),
        ("GOOGLE_GEMINI_BASE_URL".into(), server.base_url()),
        ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
    ];
    let driver = Arc::new(weft_gemini::GeminiDriver::new());
    let loom = loom(&home.path().join(".weft"), driver.clone(), env).unwrap();

    let opened = loom
        .open_terminal(OpenTerminalRequest {
            agent: Some("gemini".into()),
            workdir: Some(workdir.display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    let key = opened.session_key.clone();
    let sid = opened.spec.session_id.clone().expect("a new session id");
    let bridge = spawn(&opened).unwrap();
    wait_screen(&bridge, "the ready prompt", |s| {
        s.contains("Type your message")
    })
    .await;
    // It resets its terminal modes once more after drawing the prompt (pending keys
    // are discarded): let it settle first.
    settle(&bridge, Duration::from_secs(1)).await;
    submit(&bridge, "HELLO from the gemini tui").await;
    wait_screen(&bridge, "the scripted reply", |s| {
        s.contains("GEMINI-TUI-REPLY")
    })
    .await;

    // The snapshot follows the chat file live.
    let snap = wait_snapshot(&loom, &key, "the terminal's turn", |s| {
        s.text.contains("GEMINI-TUI-REPLY")
    })
    .await;
    assert_eq!(snap.phase, Phase::Streaming);
    assert!(snap
        .notices
        .iter()
        .any(|n| n == "typed in the terminal: HELLO from the gemini tui"));

    let pid = bridge.pid().unwrap();
    drop(bridge);
    assert!(gone(pid));
    loom.close_terminal(&key).await.unwrap();
    let accepted = loom
        .prompt(PromptRequest {
            session_key: Some(key.clone()),
            prompt: "AFTER the terminal: what did you say?".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let snap = wait_snapshot(&loom, &key, "the structured turn", |s| {
        s.task_id.as_deref() == Some(accepted.task_id.as_str()) && s.phase == Phase::Done
    })
    .await;
    assert_eq!(snap.text, "GEMINI-STRUCTURED-REPLY", "{snap:#?}");
    assert_eq!(snap.session_id.as_deref(), Some(sid.as_str()));
    let after = server
        .generate_requests()
        .into_iter()
        .rev()
        .find(|r| r.last_user_text().contains("AFTER the terminal"))
        .unwrap();
    assert!(after.all_text().contains("HELLO from the gemini tui"));
    assert!(after.all_text().contains("GEMINI-TUI-REPLY"));

    // As if the session had begun in an earlier minute: gemini 0.61.0's `--resume` then
    // leaves a file with nothing to resume beside it, and its next start would delete the
    // session's real file with it.
    let chats = || -> Vec<std::path::PathBuf> {
        let mut v: Vec<_> = weft_gemini::sessions::session_files(&gemini_dir)
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| {
                p.to_string_lossy()
                    .ends_with(&format!("-{}.jsonl", &sid[..8]))
            })
            .collect();
        v.sort();
        v
    };
    let files = chats();
    assert_eq!(files.len(), 1, "{files:?}");
    let old = files[0].with_file_name(format!("session-2026-01-01T00-00-{}.jsonl", &sid[..8]));
    std::fs::rename(&files[0], &old).unwrap();

    // Opened again, the terminal resumes the session by its id, history and all.
    let again = loom
        .open_terminal(OpenTerminalRequest {
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert!(again
        .spec
        .args
        .windows(2)
        .any(|w| w == ["--resume", sid.as_str()]));
    let bridge = spawn(&again).unwrap();
    wait_screen(&bridge, "the ready prompt", |s| {
        s.contains("Type your message")
    })
    .await;
    // It resets its terminal modes once more after drawing the prompt (pending keys
    // are discarded): let it settle first.
    settle(&bridge, Duration::from_secs(1)).await;
    submit(&bridge, "AGAIN in the terminal").await;
    wait_screen(&bridge, "the second reply", |s| {
        s.contains("GEMINI-SECOND-TERMINAL")
    })
    .await;
    let last = server
        .generate_requests()
        .into_iter()
        .rev()
        .find(|r| r.last_user_text().contains("AGAIN in the terminal"))
        .unwrap();
    assert!(last.all_text().contains("GEMINI-STRUCTURED-REPLY"));
    // Only what is new reaches the snapshot.
    let snap = wait_snapshot(&loom, &key, "the second terminal's turn", |s| {
        s.text.contains("GEMINI-SECOND-TERMINAL")
    })
    .await;
    assert_eq!(snap.text, "GEMINI-SECOND-TERMINAL");
    drop(bridge);
    loom.close_terminal(&key).await.unwrap();
    // Once the terminal has closed, only the session's own file is left.
    let deadline = std::time::Instant::now() + Duration::from_secs(15);
    while chats() != [old.clone()] {
        assert!(
            std::time::Instant::now() < deadline,
            "the terminal's resume left: {:?}",
            chats()
        );
        tokio::time::sleep(Duration::from_millis(100)).await;
    }

    loom.shutdown().await;
    assert!(driver.live_pids().is_empty());
}
