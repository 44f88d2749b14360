//! The PTY rail with the real `claude` TUI: opened through the kernel, driven in a
//! `PtyBridge` and read back from its screen, followed live in the session's snapshot,
//! then closed so the queued structured prompt resumes the same conversation.
//!
//! One test on purpose: the CLI takes seconds to start, and every step builds on the
//! one before (the suite's time budget is shared by every crate).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::json;
use weft_claude::ClaudeDriver;
use weft_kernel::ports::Accounts;
use weft_kernel::{AgentTurnInput, Loom};
use weft_protocol::{OpenTerminalRequest, Phase, PromptRequest, ToolStatus, UniversalSnapshot};
use weft_pty::{PtyBridge, PtySize, PtySpec};
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::*;

const WAIT: Duration = Duration::from_secs(60);

/// The test's spawn environment for every turn (the account/endpoint port).
struct FixedEnv(Vec<(String, String)>);

impl Accounts for FixedEnv {
    fn resolve(&self, _input: &AgentTurnInput) -> Result<weft_kernel::ports::SpawnAccount, String> {
        Ok(weft_kernel::ports::SpawnAccount {
            env: self.0.clone(),
            ..Default::default()
        })
    }
}

/// What the interactive CLI needs to start without asking anything, in the test's own
/// HOME: onboarding done, the folder trusted, the test key approved, Bash allowed.
fn seed_interactive_home(home: &Path, workdir: &Path) {
    let state = json!({
        "hasCompletedOnboarding": true,
        "customApiKeyResponses": {"approved": ["sk-test"], "rejected": []},
        "projects": {workdir.display().to_string(): {"hasTrustDialogAccepted": true}},
    });
    std::fs::write(home.join(".claude.json"), state.to_string()).unwrap();
    std::fs::create_dir_all(home.join(".claude")).unwrap();
    std::fs::write(
        home.join(".claude/settings.json"),
        json!({"permissions": {"allow": ["Bash"]}}).to_string(),
    )
    .unwrap();
}

/// A main-loop request (one that offers tools) whose latest user text has `needle`.
fn main_loop_asking(needle: &'static str) -> weft_testkit::anthropic::Matcher {
    when::custom(move |r| !r.tool_names().is_empty() && r.last_user_text().contains(needle))
}

async fn wait_screen(bridge: &PtyBridge, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + WAIT;
    loop {
        let text = bridge.screen_text();
        if pred(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{text}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn wait_snapshot(
    loom: &Loom,
    key: &str,
    what: &str,
    pred: impl Fn(&UniversalSnapshot) -> bool,
) -> UniversalSnapshot {
    let deadline = Instant::now() + WAIT;
    loop {
        let snap = loom.get_snapshot(key).await.unwrap().snapshot;
        if pred(&snap) {
            return snap;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; snapshot:\n{snap:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// Types `text` into the prompt box, waits for it to show, then submits it (a write
/// with the Enter in it would read as a paste). An Enter a still-settling TUI dropped
/// (the screen unchanged a moment later) is pressed again; on an empty prompt it does
/// nothing.
async fn submit(bridge: &PtyBridge, text: &str) {
    bridge.write(text.as_bytes()).unwrap();
    let typed = wait_screen(bridge, "the typed prompt", |s| s.contains(text)).await;
    for _ in 0..3 {
        bridge.write(b"\r").unwrap();
        let deadline = Instant::now() + Duration::from_secs(2);
        while Instant::now() < deadline {
            if bridge.screen_text() != typed {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

#[tokio::test]
async fn the_claude_terminal_runs_is_followed_and_hands_the_session_back() {
    let Some(_) = claude_bin() else { return };
    let words: Vec<String> = (0..80).map(|i| format!("w{i} ")).collect();
    let script = Script::new()
        .rule(
            main_loop_asking("RUN_TOOL"),
            Turn::new().text("Calling Bash.").tool_use(
                "toolu_tui1",
                "Bash",
                json!({"command": "echo hi-from-tool", "description": "say hi"}),
            ),
        )
        .rule(
            when::tool_result_for("toolu_tui1"),
            Turn::text_reply("TOOL-SAID hi-from-tool"),
        )
        .rule(
            main_loop_asking("SLOW"),
            Turn::new()
                .text_chunks(&words.iter().map(String::as_str).collect::<Vec<_>>())
                .delta_delay(Duration::from_millis(150)),
        )
        .rule(
            main_loop_asking("AFTER the terminal"),
            Turn::text_reply("STRUCTURED-REPLY"),
        )
        .rule(
            main_loop_asking("AGAIN"),
            Turn::text_reply("SECOND-TERMINAL-REPLY"),
        );
    let env = ClaudeEnv::start(script).await;
    let workdir = env.workdir();
    seed_interactive_home(env.home.path(), &workdir);
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let loom = Loom::builder(env.home.path().join(".weft"))
        .driver(driver.clone())
        .accounts(Arc::new(FixedEnv(env.env())))
        .in_memory()
        .open()
        .unwrap();

    // A new session's terminal runs under an id the driver chose, recorded at once.
    let opened = loom
        .open_terminal(OpenTerminalRequest {
            agent: Some("claude".into()),
            workdir: Some(workdir.display().to_string()),
            ..Default::default()
        })
        .await
        .unwrap();
    let key = opened.session_key.clone();
    let sid = opened.spec.session_id.clone().expect("a new session id");
    assert!(opened
        .spec
        .args
        .windows(2)
        .any(|w| w == ["--session-id", sid.as_str()]));
    let bridge = PtyBridge::spawn(
        &PtySpec {
            program: opened.spec.program.clone(),
            args: opened.spec.args.clone(),
            base_env: None,
            env: opened.spec.env.clone(),
            cwd: opened.spec.cwd.clone(),
            ..PtySpec::default()
        },
        PtySize {
            rows: 40,
            cols: 120,
        },
    )
    .unwrap();

    // The ready prompt renders; a typed prompt runs Bash and the reply renders.
    wait_screen(&bridge, "the ready prompt", |s| {
        s.contains("Claude Code") && s.contains("for shortcuts")
    })
    .await;
    submit(&bridge, "RUN_TOOL from the tui").await;
    let screen = wait_screen(&bridge, "the reply after the tool", |s| {
        s.contains("TOOL-SAID hi-from-tool")
    })
    .await;
    assert!(screen.contains("Bash(echo hi-from-tool)"), "{screen}");

    // While it is open, the session's snapshot follows the terminal live...
    let snap = wait_snapshot(&loom, &key, "the terminal's turn", |s| {
        s.text.contains("TOOL-SAID hi-from-tool")
            && s.tool_calls.iter().any(|c| c.status == ToolStatus::Done)
    })
    .await;
    assert_eq!(snap.phase, Phase::Streaming);
    assert_eq!(snap.session_id.as_deref(), Some(sid.as_str()));
    assert!(snap
        .usage
        .as_ref()
        .is_some_and(|u| u.output_tokens.is_some()));
    let call = &snap.tool_calls[0];
    assert_eq!(call.name, "Bash");
    assert_eq!(call.result.as_deref().map(str::trim), Some("hi-from-tool"));
    assert!(
        snap.notices
            .iter()
            .any(|n| n == "typed in the terminal: RUN_TOOL from the tui"),
        "{:?}",
        snap.notices
    );
    // ...and a structured prompt queues behind it (one writer per session).
    loom.prompt(PromptRequest {
        session_key: Some(key.clone()),
        prompt: "AFTER the terminal: what did the tool say?".into(),
        ..Default::default()
    })
    .await
    .unwrap();
    wait_snapshot(&loom, &key, "the queued prompt", |s| s.queued.len() == 1).await;

    // Resize reflows: the prompt box's rules redraw at the new width.
    bridge.resize(PtySize { rows: 30, cols: 80 }).unwrap();
    wait_screen(&bridge, "the redraw at 80 columns", |s| {
        s.lines().any(|l| l.trim_end() == "─".repeat(80))
    })
    .await;

    // Esc interrupts a streaming reply.
    submit(&bridge, "SLOW words please").await;
    wait_screen(&bridge, "the streaming reply", |s| {
        s.contains("esc to interrupt") && s.contains("w1 ")
    })
    .await;
    bridge.write(b"\x1b").unwrap();
    wait_screen(&bridge, "the interrupt", |s| s.contains("Interrupted")).await;

    // The user leaves the TUI with `/exit`; the surface closes the terminal. Not with
    // Ctrl-C twice: claude takes the second press as an exit only within 800 ms of its
    // hint, and a loaded machine drew the hint, read it and answered later than that
    // (claude then stayed, showing nothing).
    submit(&bridge, "/exit").await;
    let exit = tokio::time::timeout(WAIT, bridge.wait()).await;
    assert!(
        exit.is_ok(),
        "claude did not exit:\n{}",
        bridge.screen_text()
    );
    loom.close_terminal(&key).await.unwrap();

    // The queued prompt now runs on the structured rail, in the same conversation.
    let snap = wait_snapshot(&loom, &key, "the structured turn", |s| {
        s.phase == Phase::Done && s.prompt.starts_with("AFTER")
    })
    .await;
    assert_eq!(snap.text, "STRUCTURED-REPLY", "{snap:#?}");
    assert_eq!(snap.session_id.as_deref(), Some(sid.as_str()));
    let after = env
        .server
        .messages_requests()
        .into_iter()
        .rev()
        .find(|r| r.last_user_text().contains("AFTER the terminal"))
        .unwrap();
    let history = after.all_text();
    assert!(history.contains("RUN_TOOL from the tui"), "{history}");
    assert!(history.contains("hi-from-tool"), "{history}");
    let turns = loom.get_history(&key).await.unwrap();
    assert_eq!(turns.len(), 2);
    assert!(turns[0].text.contains("TOOL-SAID hi-from-tool"));
    assert!(!turns[0].incomplete, "{:#?}", turns[0]);

    let pid = bridge.pid().unwrap();
    drop(bridge);
    assert!(gone(pid));

    // Opened again, the terminal resumes the conversation; what the file held before
    // is history, so the snapshot shows only what is new.
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
    assert_eq!(again.spec.session_id, None);
    let bridge = PtyBridge::spawn(
        &PtySpec {
            program: again.spec.program.clone(),
            args: again.spec.args.clone(),
            base_env: None,
            env: again.spec.env.clone(),
            cwd: again.spec.cwd.clone(),
            ..PtySpec::default()
        },
        PtySize {
            rows: 40,
            cols: 120,
        },
    )
    .unwrap();
    wait_screen(&bridge, "the resumed conversation", |s| {
        s.contains("STRUCTURED-REPLY") && s.contains("for shortcuts")
    })
    .await;
    submit(&bridge, "AGAIN in the terminal").await;
    wait_screen(&bridge, "the second terminal's reply", |s| {
        s.contains("SECOND-TERMINAL-REPLY")
    })
    .await;
    let snap = wait_snapshot(&loom, &key, "the second terminal's turn", |s| {
        s.text.contains("SECOND-TERMINAL-REPLY")
    })
    .await;
    assert_eq!(snap.text, "SECOND-TERMINAL-REPLY");
    // The pane closes: its process group goes with it.
    let pid = bridge.pid().unwrap();
    drop(bridge);
    assert!(gone(pid));
    loom.close_terminal(&key).await.unwrap();
    wait_snapshot(&loom, &key, "the terminal turn's end", |s| {
        s.phase == Phase::Done
    })
    .await;

    loom.shutdown().await;
    assert!(driver.live_pids().is_empty());
}

/// The follower without a CLI: a session file that does not exist when the terminal
/// opens is picked up when it appears, appended records show as they land, and
/// closing the terminal ends the follower at once.
#[tokio::test]
async fn the_follower_picks_up_a_session_file_that_appears_later() {
    use std::io::Write;
    use tokio_util::sync::CancellationToken;
    use weft_kernel::{AgentDriver, DriverContext};

    let home = tempfile::tempdir().unwrap();
    let work = tempfile::tempdir().unwrap();
    let workdir = work.path().canonicalize().unwrap();
    let input = AgentTurnInput {
        session_key: "claude:follow".into(),
        workdir: workdir.clone(),
        session_id: Some("sid-later".into()),
        env: vec![(
            "CLAUDE_CONFIG_DIR".into(),
            home.path().join("cfg").display().to_string(),
        )],
        ..Default::default()
    };
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    let cancel = CancellationToken::new();
    let ctx = DriverContext::new(cancel.clone(), sink.clone());
    let following = tokio::spawn(async move { driver.follow_tui(input, ctx).await });

    tokio::time::sleep(Duration::from_millis(300)).await;
    let dir = home
        .path()
        .join("cfg/projects")
        .join(weft_claude::recover::encode_cwd(&workdir));
    std::fs::create_dir_all(&dir).unwrap();
    let mut file = std::fs::File::create(dir.join("sid-later.jsonl")).unwrap();
    let record = |id: &str, text: &str| {
        let at = "2999-01-01T00:00:00.000Z";
        format!(
            "{}\n",
            json!({"type":"assistant","timestamp":at,"message":{"id":id,"model":"claude-x",
                   "content":[{"type":"text","text":text}]}})
        )
    };
    file.write_all(record("m1", "first").as_bytes()).unwrap();
    assert!(
        sink.wait_for(WAIT, |s| s.text == "first").await,
        "{:#?}",
        sink.snapshot()
    );
    // Half a record waits for its newline.
    let second = record("m2", "second");
    let (a, b) = second.split_at(20);
    file.write_all(a.as_bytes()).unwrap();
    file.flush().unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(sink.snapshot().text, "first");
    file.write_all(b.as_bytes()).unwrap();
    assert!(
        sink.wait_for(WAIT, |s| s.text == "first\n\nsecond").await,
        "{:#?}",
        sink.snapshot()
    );

    cancel.cancel();
    let result = tokio::time::timeout(Duration::from_secs(5), following)
        .await
        .expect("the follower ends when the terminal closes")
        .unwrap();
    assert!(result.ok);
    assert_eq!(result.session_id.as_deref(), Some("sid-later"));
}
