//! The real CLI's turn boundaries: background work, a queued steer, a stalled model,
//! and no orphans when a turn's future is dropped; plus native sessions on disk.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_agent_spec::sessions::{summary, NativeSessions};
use weft_claude::{recover, ClaudeDriver, Config};
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext};
use weft_protocol::{permission, InteractionResponse};
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::*;

#[tokio::test]
async fn background_shell_keeps_the_turn_open_until_the_agent_reports() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().text("Starting it.").tool_use(
            "toolu_bg",
            "Bash",
            json!({"command": "sleep 2; echo bg-finished", "description": "background sleeper",
                   "run_in_background": true}),
        ))
        .turn_when(
            when::tool_result_for("toolu_bg"),
            Turn::text_reply("Started; I will report."),
        )
        .rule(
            when::user_text_contains("task-notification"),
            Turn::text_reply("The background job finished."),
        );
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let (result, snap) = run_turn(&driver, env.input("bg", "start a background job"), &sink).await;
    assert!(result.ok, "{result:?}");
    assert!(
        snap.text.ends_with("The background job finished."),
        "the wake-up report belongs to the turn: {}",
        snap.text
    );
    assert!(snap.text.contains("Started; I will report."));
    let call = snap.tool_calls.iter().find(|c| c.id == "toolu_bg").unwrap();
    assert!(call
        .result
        .as_deref()
        .unwrap()
        .contains("running in background"));
    assert!(!snap.activity.contains("waiting"), "{}", snap.activity);
    driver.shutdown().await;
}

#[tokio::test]
async fn steer_while_streaming_text_is_queued_by_the_cli() {
    let Some(_) = claude_bin() else { return };
    let words: Vec<String> = (0..12).map(|i| format!("w{i} ")).collect();
    let chunks: Vec<&str> = words.iter().map(String::as_str).collect();
    let script = Script::new()
        .rule(
            when::user_text_contains("STEER-QUEUED"),
            Turn::text_reply("Answer to the steer."),
        )
        .turn(
            Turn::new()
                .delta_delay(Duration::from_millis(150))
                .text_chunks(&chunks),
        );
    let env = ClaudeEnv::start(script).await;
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let sink = new_sink();
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let d = driver.clone();
    let input = env.input("steerq", "stream a while");
    let run = tokio::spawn(async move { d.run(input, ctx).await });
    assert!(
        sink.wait_for(Duration::from_secs(60), |s| s.text.contains("w1 "))
            .await
    );
    assert!(sink.steer("STEER-QUEUED please"));
    let result = tokio::time::timeout(Duration::from_secs(60), run)
        .await
        .unwrap()
        .unwrap();
    let snap = finish(&sink, &result, false);
    assert!(result.ok, "{result:?}");
    assert!(snap.text.starts_with("w0 w1 "), "{}", snap.text);
    assert!(snap.text.ends_with("Answer to the steer."), "{}", snap.text);
    assert!(
        snap.notices.iter().any(|n| n.contains("queued")),
        "{:?}",
        snap.notices
    );
    driver.shutdown().await;
}

#[tokio::test]
async fn a_stalled_model_settles_the_turn_without_killing() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().text("thinking out loud").then_hang())
        .turn(Turn::text_reply("back again"));
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(Config {
        stall: Duration::from_secs(3),
        ..fast_config()
    });
    let (result, snap) = run_turn(&driver, env.input("stall", "hang"), &new_sink()).await;
    assert!(!result.ok);
    assert!(snap.error.unwrap().contains("stalled"));
    assert_eq!(snap.text, "thinking out loud");
    assert_eq!(driver.live_pids().len(), 1, "the CLI is not killed");
    let (result, snap) = run_turn(&driver, env.input("stall", "again"), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "back again");
    driver.shutdown().await;
}

/// Pids of processes whose environment carries `mark`.
fn marked_pids(mark: &str) -> Vec<u32> {
    let needle = format!("WEFT_TEST_MARK={mark}");
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| {
            std::fs::read(format!("/proc/{pid}/environ"))
                .map(|env| env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes()))
                .unwrap_or(false)
        })
        .filter(|pid| !gone(*pid))
        .collect()
}

fn describe(pid: u32) -> String {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
    let cmd = std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default();
    let cmd = String::from_utf8_lossy(&cmd).replace('\0', " ");
    format!("{stat} | {cmd}")
}

#[tokio::test]
async fn dropping_a_running_turn_leaves_no_process_behind() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new().turn(Turn::new().tool_use(
        "toolu_long",
        "Bash",
        json!({"command": "sleep 60", "description": "long sleep"}),
    ));
    let env = ClaudeEnv::start(script).await;
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let mark = uuid::Uuid::new_v4().to_string();
    let mut input = env.input("orphans", "sleep long");
    input.env.push(("WEFT_TEST_MARK".into(), mark.clone()));
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let d = driver.clone();
    let run = tokio::spawn(async move { d.run(input, ctx).await });
    // The CLI and the shell it started for `sleep 60` both run.
    assert!(eventually(Duration::from_secs(60), || marked_pids(&mark).len() >= 2).await);
    run.abort();
    let _ = run.await;
    assert!(
        eventually(Duration::from_secs(10), || marked_pids(&mark).is_empty()).await,
        "left behind: {:?}",
        marked_pids(&mark)
            .iter()
            .map(|p| describe(*p))
            .collect::<Vec<_>>()
    );
}

#[tokio::test]
async fn closing_a_session_and_shutdown_end_the_process() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(Script::new()).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let (r, _) = run_turn(&driver, env.input("close-a", "hi"), &new_sink()).await;
    assert!(r.ok);
    let (r, _) = run_turn(&driver, env.input("close-b", "hi"), &new_sink()).await;
    assert!(r.ok);
    let pids = driver.live_pids();
    assert_eq!(pids.len(), 2);
    driver.close_session("claude:close-a").await;
    assert_eq!(driver.live_pids().len(), 1);
    driver.shutdown().await;
    assert!(driver.live_pids().is_empty());
    for pid in pids {
        assert!(eventually(Duration::from_secs(5), || gone(pid)).await);
    }
}

#[tokio::test]
async fn native_sessions_are_listed_from_the_cli_files() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(Script::new().turn(Turn::text_reply("noted"))).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let (r, _) = run_turn(
        &driver,
        env.input("native", "a prompt to list"),
        &new_sink(),
    )
    .await;
    assert!(r.ok);
    driver.shutdown().await;
    let sid = r.session_id.unwrap();
    let with_env = |env: Vec<(String, String)>| AgentTurnInput {
        env,
        ..Default::default()
    };
    let config = recover::config_dir(&with_env(vec![(
        "HOME".into(),
        env.home.path().display().to_string(),
    )]))
    .unwrap();
    assert_eq!(config, env.claude_dir());
    // The session library's reader finds the session in its file.
    let file = recover::session_file(&config, &env.workdir(), &sid).unwrap();
    let reader = weft_claude::native_sessions::ClaudeSessions;
    assert!(reader.owns(&config, &file));
    let listed = summary(&reader, &config, &file).unwrap();
    assert_eq!(listed.native_id.as_deref(), Some(sid.as_str()));
    assert_eq!(listed.title().0, "a prompt to list");
    assert_eq!(listed.messages, 2);
    assert_eq!(
        listed.workdir.as_deref(),
        Some(env.workdir().to_str().unwrap())
    );
    assert!(listed.updated_at > 0);
    // CLAUDE_CONFIG_DIR wins over HOME.
    let other = tempfile::tempdir().unwrap();
    let dir = recover::config_dir(&with_env(vec![
        ("HOME".into(), env.home.path().display().to_string()),
        (
            "CLAUDE_CONFIG_DIR".into(),
            other.path().display().to_string(),
        ),
    ]))
    .unwrap();
    assert_eq!(dir, other.path());
    assert!(recover::session_file(&dir, &env.workdir(), &sid).is_none());
}

#[tokio::test]
async fn a_2_mib_reply_arrives_whole() {
    let Some(_) = claude_bin() else { return };
    let big: String = (0..(2 << 20) / 16).map(|i| format!("{i:015} ")).collect();
    let env = ClaudeEnv::start(Script::new().turn(Turn::text_reply(&big))).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let (result, snap) = run_turn(&driver, env.input("big", "a long answer"), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    // Whole, whether it came on stdout or was recovered from the session file.
    assert_eq!(snap.text.len(), big.len());
    assert!(snap.text == big);
    driver.shutdown().await;
}
