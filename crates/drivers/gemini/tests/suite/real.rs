//! The real `gemini` against the scripted Gemini server: ACP turns, tool output read
//! back from the session file, permissions, resume in a new process over ACP
//! (`session/load`) and over headless stream-json, stop, and the CLI's own session list.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_agent_spec::sessions::{summary, NativeSessions};
use weft_kernel::AgentDriver;
use weft_protocol::{permission, InteractionKind, InteractionResponse, ToolKind, ToolStatus};
use weft_testkit::gemini::{when, Script, Turn};
use weft_testkit::GeminiServer;

use super::support::*;

fn tool_script(command: &str) -> Script {
    Script::new()
        .rule(
            when::function_response_for("run_shell_command"),
            Turn::text_reply("The tool has finished."),
        )
        .turn(
            Turn::new()
                .text("Calling the tool.")
                .function_call("run_shell_command", json!({"command": command})),
        )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_tool_turn_gets_its_output_from_the_session_file() {
    let Some(_) = gemini_bin() else { return };
    let server = GeminiServer::start(tool_script("echo weft-gemini-tool"))
        .await
        .unwrap();
    let h = Home::new(json!({"tools": {"allowed": ["run_shell_command"]}}));
    let d = driver();
    let sink = TestSink::new();
    let (r, snap) = run(
        &d,
        h.input("gemini:t", "Run it.", &server.base_url()),
        &sink,
    )
    .await;
    assert!(r.ok, "{r:?} {snap:#?}");
    let call = &snap.tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.kind, call.status),
        ("run_shell_command", ToolKind::Shell, ToolStatus::Done)
    );
    assert!(
        call.result
            .as_deref()
            .unwrap_or_default()
            .contains("weft-gemini-tool"),
        "{call:#?}"
    );
    assert!(snap.text.contains("The tool has finished."));
    // The session library's reader knows the session, titled by the prompt.
    let dir = weft_gemini::sessions::gemini_dir(&h.env("x")).unwrap();
    let reader = weft_gemini::native_sessions::GeminiSessions;
    let listed: Vec<_> = weft_gemini::sessions::session_files(&dir)
        .into_iter()
        .filter(|(p, _)| reader.owns(&dir, p))
        .filter_map(|(p, _)| summary(&reader, &dir, &p))
        .filter(|m| m.turns > 0)
        .collect();
    assert_eq!(listed.len(), 1, "{listed:#?}");
    assert_eq!(listed[0].native_id, r.session_id.clone());
    assert_eq!(listed[0].title().0, "Run it.");
    assert_eq!(
        listed[0].workdir.as_deref(),
        Some(h.workdir().to_str().unwrap())
    );
    d.shutdown().await;
    assert!(d.live_pids().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn permission_denied_then_allowed() {
    let Some(_) = gemini_bin() else { return };
    let script = tool_script("touch probe.txt").turn(
        Turn::new()
            .text("Calling the tool.")
            .function_call("run_shell_command", json!({"command": "touch probe.txt"})),
    );
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new(json!({}));
    let d = driver();
    for (answer, made, status) in [
        (permission::DENY, false, ToolStatus::Failed),
        (permission::ALLOW, true, ToolStatus::Done),
    ] {
        let sink = TestSink::new();
        sink.answer_with(move |_| Some(InteractionResponse::select(answer)));
        let (r, snap) = run(
            &d,
            h.input("gemini:p", "Touch it.", &server.base_url()),
            &sink,
        )
        .await;
        assert!(r.ok, "{r:?} {snap:#?}");
        let asked = sink.asked.lock()[0].clone();
        assert_eq!(asked.kind, InteractionKind::Permission);
        let values: Vec<&str> = asked.questions[0]
            .choices
            .iter()
            .map(|c| c.value.as_str())
            .collect();
        assert_eq!(values, vec!["allowSession", "allow", "deny"], "{asked:#?}");
        assert_eq!(h.workdir().join("probe.txt").exists(), made, "{answer}");
        assert_eq!(snap.tool_calls[0].status, status, "{snap:#?}");
    }
    d.shutdown().await;
}

/// A session continued in a new process is loaded over ACP: the same session, its
/// memory, and the permission prompts. The session's file is put under this minute's
/// name first, as when its last process started in this minute (a quick follow-up, a
/// fork): gemini 0.61.0's load then wiped it and failed, until the driver moved it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_in_a_new_process_loads_over_acp_with_its_memory_and_prompts() {
    let Some(_) = gemini_bin() else { return };
    let script = Script::new()
        .rule(
            when::function_response_for("run_shell_command"),
            Turn::text_reply("The tool has finished."),
        )
        .turn(Turn::text_reply("Noted."))
        .turn(
            Turn::new()
                .text("Calling the tool.")
                .function_call("run_shell_command", json!({"command": "touch probe.txt"})),
        );
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new(json!({}));
    let d = driver();
    let (r1, _) = run(
        &d,
        h.input("gemini:l", "Remember the word otter.", &server.base_url()),
        &TestSink::new(),
    )
    .await;
    assert!(r1.ok, "{r1:?}");
    d.shutdown().await;
    let id = r1.session_id.clone().unwrap();
    let own = |p: &std::path::Path| {
        p.file_name().is_some_and(|n| {
            n.to_string_lossy()
                .ends_with(&format!("-{}.jsonl", &id[..8]))
        })
    };
    let files = || -> Vec<std::path::PathBuf> {
        weft_gemini::sessions::session_files(&h.home.path().join(".gemini"))
            .into_iter()
            .map(|(p, _)| p)
            .filter(|p| own(p))
            .collect()
    };
    let minute = jiff::Timestamp::now()
        .to_zoned(jiff::tz::TimeZone::UTC)
        .strftime("%Y-%m-%dT%H-%M")
        .to_string();
    let file = files().pop().expect("the session's file");
    std::fs::rename(
        &file,
        file.with_file_name(format!("session-{minute}-{}.jsonl", &id[..8])),
    )
    .unwrap();

    let d2 = driver();
    let sink = TestSink::new();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let mut input = h.input("gemini:l", "Touch it.", &server.base_url());
    input.session_id = Some(id.clone());
    let (r2, snap) = run(&d2, input, &sink).await;
    assert!(r2.ok, "{r2:?} {snap:#?}");
    assert_eq!(r2.session_id.as_deref(), Some(id.as_str()), "{snap:#?}");
    assert!(snap.degraded.is_empty(), "{:?}", snap.degraded);
    assert_eq!(sink.asked.lock()[0].kind, InteractionKind::Permission);
    assert!(h.workdir().join("probe.txt").exists());
    let asked = server
        .main_requests()
        .into_iter()
        .find(|r| r.last_user_text().contains("Touch it."))
        .expect("the resumed prompt's request");
    assert!(
        asked.all_text().contains("Remember the word otter."),
        "the resumed request lacks the first turn"
    );
    assert!(
        !d2.live_pids().is_empty(),
        "the session goes on in its ACP process"
    );
    d2.shutdown().await;
    // One file holds the session; the load's empty one is gone (the CLI's next start
    // would take it for a broken session and delete every file of the id).
    assert_eq!(files().len(), 1, "{:?}", files());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn resume_headless_in_a_new_process_keeps_the_session_without_prompts() {
    let Some(_) = gemini_bin() else { return };
    let script = Script::new()
        .turn(Turn::text_reply("Noted."))
        .default_reply(Turn::text_reply("The word was otter.").usage(300, 7));
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new(json!({}));
    let d = driver();
    let (r1, _) = run(
        &d,
        h.input("gemini:r", "Remember the word otter.", &server.base_url()),
        &TestSink::new(),
    )
    .await;
    assert!(r1.ok, "{r1:?}");
    d.shutdown().await;

    let d2 = driver();
    let mut input = h.input("gemini:r", "What was the word?", &server.base_url());
    input.session_id = r1.session_id.clone();
    input
        .env
        .push(("WEFT_GEMINI_RESUME".into(), "headless".into()));
    let (r2, snap) = run(&d2, input, &TestSink::new()).await;
    assert!(r2.ok, "{r2:?} {snap:#?}");
    assert_eq!(r2.session_id, r1.session_id);
    assert_eq!(snap.session_id, r1.session_id);
    assert!(snap.text.contains("The word was otter."), "{snap:#?}");
    assert!(
        snap.notices.iter().any(|n| n.contains("--resume")),
        "{:?}",
        snap.notices
    );
    // Headless is a lasting state of the session, not only a notice of this turn.
    let prompts = weft_protocol::degraded::capability::PROMPTS;
    let headless = snap.degraded.iter().find(|d| d.capability == prompts);
    assert!(
        headless.is_some_and(|d| d.reason.contains("headless")),
        "{:?}",
        snap.degraded
    );
    assert_eq!(
        snap.usage
            .as_ref()
            .and_then(|u| u.output_tokens)
            .map(|o| o >= 7),
        Some(true)
    );
    let last = server.main_requests().pop().unwrap();
    assert!(
        last.all_text().contains("Remember the word otter."),
        "the resumed request lacks the first turn"
    );
    assert!(
        d2.live_pids().is_empty(),
        "a headless turn leaves no process"
    );

    // A new session runs on the ACP rail again: the prompts are back.
    let sink = TestSink::new();
    sink.accumulate(|acc| {
        acc.apply(
            &weft_protocol::DriverEvent::Degraded {
                capability: prompts.into(),
                reason: headless.map(|d| d.reason.clone()),
            },
            0,
        )
    });
    let (r3, snap) = run(
        &d2,
        h.input("gemini:r", "A new start.", &server.base_url()),
        &sink,
    )
    .await;
    d2.shutdown().await;
    assert!(r3.ok, "{r3:?}");
    assert!(snap.degraded.is_empty(), "{:?}", snap.degraded);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_then_continue() {
    let Some(_) = gemini_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().text("Thinking about it").then_hang())
        .default_reply(Turn::text_reply("Continuing."));
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new(json!({}));
    let d = Arc::new(driver());
    let sink = TestSink::new();
    let cancel = CancellationToken::new();
    let turn = {
        let (d, sink, cancel) = (d.clone(), sink.clone(), cancel.clone());
        let input = h.input("gemini:s", "Think long.", &server.base_url());
        tokio::spawn(async move { run_with(d.as_ref(), input, &sink, cancel).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(60), |s| s.text.contains("Thinking"))
            .await
    );
    cancel.cancel();
    let (r, snap) = turn.await.unwrap();
    assert!(!r.ok && snap.incomplete, "{snap:#?}");
    assert!(snap.text.contains("Thinking about it"));
    let mut input = h.input("gemini:s", "Go on.", &server.base_url());
    input.session_id = r.session_id.clone();
    let (r2, snap2) = run(d.as_ref(), input, &TestSink::new()).await;
    assert!(r2.ok, "{r2:?} {snap2:#?}");
    assert!(snap2.text.contains("Continuing."));
    d.shutdown().await;
}

/// Every chat file of `id` under the home, by name.
fn chat_files(h: &Home, id: &str) -> Vec<std::path::PathBuf> {
    let short = &id[..8];
    let mut out: Vec<_> = weft_gemini::sessions::session_files(&h.home.path().join(".gemini"))
        .into_iter()
        .map(|(p, _)| p)
        .filter(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().ends_with(&format!("-{short}.jsonl")))
        })
        .collect();
    out.sort();
    out
}

/// gemini 0.61.0 writes a header-only `session-<this minute>-<id8>.jsonl` before it
/// resumes a session begun in an earlier minute, and its cleanup at the next start
/// deletes every file of a short id that has such a file — the real one too. The
/// driver removes the stub after the resumed turn, so the session survives the next
/// gemini run in the project.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_resumed_in_a_later_minute_survives_the_next_gemini_start() {
    let Some(_) = gemini_bin() else { return };
    let script = Script::new()
        .rule(
            when::user_text_contains("Which bird"),
            Turn::text_reply("The bird was kestrel."),
        )
        .default_reply(Turn::text_reply("Noted."));
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new(json!({}));
    let d = driver();
    let (r1, _) = run(
        &d,
        h.input("gemini:m", "Remember the bird kestrel.", &server.base_url()),
        &TestSink::new(),
    )
    .await;
    assert!(r1.ok, "{r1:?}");
    d.shutdown().await;
    let id = r1.session_id.clone().unwrap();
    let files = chat_files(&h, &id);
    assert_eq!(files.len(), 1, "{files:?}");
    // As if it had begun a day ago: gemini's own name, an earlier minute.
    let old = files[0].with_file_name(format!("session-2026-01-01T00-00-{}.jsonl", &id[..8]));
    std::fs::rename(&files[0], &old).unwrap();

    let d2 = driver();
    let mut input = h.input("gemini:m", "Which bird?", &server.base_url());
    input.session_id = Some(id.clone());
    let (r2, snap) = run(&d2, input, &TestSink::new()).await;
    assert!(r2.ok && snap.text.contains("kestrel"), "{r2:?} {snap:#?}");
    let asked = server.main_requests().pop().unwrap();
    assert!(asked.all_text().contains("Remember the bird kestrel."));
    let files = chat_files(&h, &id);
    let texts: Vec<String> = files
        .iter()
        .map(|f| std::fs::read_to_string(f).unwrap_or_default())
        .collect();
    assert_eq!(
        files,
        vec![old.clone()],
        "the resume's stub stays: {texts:#?}"
    );

    // Another session in the project: gemini's cleanup runs as it starts.
    let (r3, _) = run(
        &d2,
        h.input("gemini:n", "Something else.", &server.base_url()),
        &TestSink::new(),
    )
    .await;
    assert!(r3.ok, "{r3:?}");
    d2.shutdown().await;
    assert!(
        old.exists(),
        "gemini's cleanup deleted the resumed session's file"
    );
}
