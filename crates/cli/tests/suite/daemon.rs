//! One kernel per user: every `weft` command is a client of its home's daemon.

use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use weft_client::{Client, Event, Home};
use weft_protocol::verb;
use weft_protocol::{
    apply_in_place, Phase, PromptAccepted, PromptRequest, ServerMessage, SnapshotAt,
    UniversalSnapshot,
};

use super::support::{pid_alive, strings, wait_for, Env};

fn daemon_pid(env: &Env) -> u32 {
    let (code, status, stderr) = env.json(&["daemon", "status", "--json"]);
    assert_eq!(code, 0, "{stderr}");
    status["pid"].as_u64().unwrap_or_default() as u32
}

fn key_of(v: &Value) -> String {
    v["sessionKey"].as_str().unwrap_or_default().to_string()
}

/// A client on the daemon's socket, as the app's transport is.
async fn app_client(env: &Env) -> (Client, tokio::sync::mpsc::Receiver<Event>) {
    let hello = super::support::app_hello();
    Client::connect(&Home::at(env.home.path()), hello)
        .await
        .unwrap_or_else(|e| panic!("{e}"))
}

/// Follows one session's snapshot from a subscription until `done` holds.
async fn follow(
    client: &Client,
    events: &mut tokio::sync::mpsc::Receiver<Event>,
    key: &str,
    mut done: impl FnMut(&UniversalSnapshot) -> bool,
) -> UniversalSnapshot {
    let at: SnapshotAt = client
        .send(verb::Subscribe {
            session_key: key.to_string(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut snap, mut seq) = (at.snapshot, at.seq);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !done(&snap) {
        let ev = tokio::time::timeout_at(deadline, events.recv())
            .await
            .unwrap_or_else(|_| panic!("timed out; the snapshot is {snap:?}"));
        if let Some(Event::Message(ServerMessage::Patch(ev))) = ev {
            if ev.session_key == key && ev.first_seq() == seq + 1 {
                apply_in_place(&mut snap, &ev.patch);
                seq = ev.seq;
            }
        }
    }
    snap
}

#[test]
fn a_second_daemon_says_who_holds_the_home_and_exits_2() {
    let env = Env::new();
    assert_eq!(env.weft(&["run", "hello"]).status.code(), Some(0));
    let pid = daemon_pid(&env);
    let out = env.weft(&["daemon", "run"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains(&format!("pid {pid}")), "{stderr}");
    assert_eq!(daemon_pid(&env), pid, "the first one still serves");
}

#[test]
fn a_daemon_started_on_demand_holds_none_of_its_clients_pipes() {
    let env = Env::new();
    // `output()` reads stdout and stderr to their end: it returns only because the
    // daemon this run started did not keep them.
    let out = env.weft(&["run", "hello"]);
    assert_eq!(out.status.code(), Some(0));
    let pid = daemon_pid(&env);
    for fd in 0..3 {
        let target = std::fs::read_link(format!("/proc/{pid}/fd/{fd}"))
            .unwrap_or_else(|e| panic!("fd {fd}: {e}"));
        assert_eq!(target, std::path::Path::new("/dev/null"), "fd {fd}");
    }
    use std::os::unix::fs::PermissionsExt;
    let mode = |p: &std::path::Path| {
        std::fs::metadata(p)
            .map(|m| m.permissions().mode() & 0o777)
            .unwrap_or(0)
    };
    let home = env.home.path();
    assert_eq!(mode(home), 0o700);
    assert_eq!(mode(&home.join("daemon.sock")), 0o600);
    assert_eq!(mode(&home.join("weft.db")), 0o600);
    assert_eq!(mode(&home.join("logs/daemon.log")), 0o600);
}

#[tokio::test]
async fn two_clients_on_one_session_run_their_turns_in_order_in_one_daemon() {
    let env = Env::new();
    let (first, _) = {
        let (code, v, stderr) = env.json(&["run", "--json", "start"]);
        assert_eq!(code, 0, "{stderr}");
        (v, ())
    };
    let key = key_of(&first);
    let (app, mut events) = app_client(&env).await;
    // The app's turn is slow; `weft run --session` sends its own meanwhile.
    let accepted: PromptAccepted = app
        .send(PromptRequest {
            prompt: "slow from the app".into(),
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    follow(&app, &mut events, &key, |s| {
        s.task_id.as_deref() == Some(accepted.task_id.as_str()) && s.phase == Phase::Streaming
    })
    .await;
    let cli = env
        .cmd(&["run", "--json", "--session", &key, "from the terminal"])
        .stdout(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    let out = tokio::task::spawn_blocking(move || cli.wait_with_output())
        .await
        .unwrap_or_else(|e| panic!("{e}"))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0));
    let (_, history, _) = env.json(&["history", &key, "--json"]);
    let turns = history.as_array().cloned().unwrap_or_default();
    let prompts: Vec<&str> = turns.iter().filter_map(|t| t["prompt"].as_str()).collect();
    assert_eq!(prompts, ["start", "slow from the app", "from the terminal"]);
    let app_turn = &turns[1];
    let cli_turn = &turns[2];
    assert_eq!(app_turn["incomplete"], false);
    assert!(
        cli_turn["startedAt"].as_i64() >= app_turn["updatedAt"].as_i64(),
        "the terminal's turn started before the app's ended"
    );
    // One agent session throughout: each turn resumed the same echo session.
    let ids: Vec<&str> = turns
        .iter()
        .filter_map(|t| t["sessionId"].as_str())
        .collect();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|id| *id == ids[0]), "{ids:?}");
}

#[tokio::test]
async fn a_question_asked_under_detach_is_answered_from_another_terminal() {
    let env = Env::new();
    let (code, detached, stderr) = env.json(&["run", "--detach", "a question"]);
    assert_eq!(code, 0, "{stderr}");
    let key = key_of(&detached);
    let (app, mut events) = app_client(&env).await;
    let asked = follow(&app, &mut events, &key, |s| !s.interactions.is_empty()).await;
    let prompt_id = asked.interactions[0].prompt_id.clone();

    let (_, inbox, _) = env.json(&["inbox", "--json"]);
    assert_eq!(inbox[0]["promptId"], prompt_id.as_str(), "{inbox}");
    assert_eq!(inbox[0]["sessionKey"], key.as_str());
    assert_eq!(inbox[0]["kind"], "user-input");
    assert!(inbox[0]["createdAt"].as_i64().is_some());
    assert!(inbox[0]["expiresAt"].is_null());

    env.ok(&["answer", &prompt_id, "--select", "green"]);
    // The subscribed client sees the dialog close, and who answered it.
    let closed = follow(&app, &mut events, &key, |s| s.interactions.is_empty()).await;
    assert!(closed.interactions.is_empty());
    let (code, last, _) = env.json(&["wait", &key, "--json"]);
    assert_eq!(code, 0);
    assert!(
        last["text"]
            .as_str()
            .is_some_and(|t| t.contains("You picked green")),
        "{last}"
    );
    assert!(
        last["notices"]
            .to_string()
            .contains("answered green (from cli)"),
        "{last}"
    );
    // Answered once; a second answer is refused clearly.
    let again = env.weft(&["answer", &prompt_id, "--cancel"]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("weft inbox"));
    let (_, inbox, _) = env.json(&["inbox", "--json"]);
    assert_eq!(inbox, serde_json::json!([]));
}

/// `weft answer` for a prompt of two questions, one taking several choices and free
/// text: `--select QID=VALUE` more than once and `--text QID=TEXT`, combined.
#[tokio::test]
async fn several_questions_are_answered_with_repeated_select_and_text() {
    let env = Env::new();
    let (code, detached, stderr) = env.json(&["run", "--detach", "a survey"]);
    assert_eq!(code, 0, "{stderr}");
    let key = key_of(&detached);
    let (app, mut events) = app_client(&env).await;
    let asked = follow(&app, &mut events, &key, |s| !s.interactions.is_empty()).await;
    let prompt_id = asked.interactions[0].prompt_id.clone();
    let (_, inbox, _) = env.json(&["inbox", "--json"]);
    assert_eq!(inbox[0]["questions"][0]["multiple"], true, "{inbox}");
    assert_eq!(inbox[0]["questions"][1]["freeText"], true, "{inbox}");
    let shown = env.weft(&["inbox"]);
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(
        shown.contains("toppings= Which toppings?") && shown.contains("takes several --select"),
        "{shown}"
    );

    // A question named wrongly, or left unnamed, is refused before anything is sent.
    let unnamed = env.weft(&["answer", &prompt_id, "--select", "cheese"]);
    assert_eq!(unnamed.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&unnamed.stderr).contains("toppings, size"));
    let one = env.weft(&[
        "answer",
        &prompt_id,
        "--select",
        "size=small",
        "--select",
        "size=large",
    ]);
    assert!(String::from_utf8_lossy(&one.stderr).contains("takes one choice"));

    env.ok(&[
        "answer",
        &prompt_id,
        "--select",
        "toppings=cheese",
        "--select",
        "toppings=basil",
        "--text",
        "toppings=extra garlic",
        "--text",
        "size=family",
    ]);
    let (code, last, _) = env.json(&["wait", &key, "--json"]);
    assert_eq!(code, 0);
    assert!(
        last["text"]
            .as_str()
            .is_some_and(|t| t
                .contains("You answered toppings=[cheese, basil, extra garlic] size=[family].")),
        "{last}"
    );
    let notices = last["notices"].to_string();
    assert!(
        notices.contains("toppings=[cheese, basil]") && notices.contains("size: \\\"family\\\""),
        "{notices}"
    );
}

#[test]
fn an_unanswered_question_expires_and_is_never_reported_as_denied() {
    let env = Env::new();
    let (code, detached, _) = {
        let out = env
            .cmd(&["run", "--detach", "a question"])
            .env("WEFT_INTERACTION_TIMEOUT_SECS", "1")
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        (out.status.code(), v, ())
    };
    assert_eq!(code, Some(0));
    let key = key_of(&detached);
    let (code, last, _) = env.json(&["wait", &key, "--json"]);
    assert_eq!(code, 0);
    let notices = last["notices"].to_string();
    assert!(notices.contains("expired after 1 s"), "{notices}");
    assert!(!notices.contains("denied"), "{notices}");
    assert!(
        last["text"]
            .as_str()
            .is_some_and(|t| t.contains("cancelled")),
        "{last}"
    );
    let (_, inbox, _) = env.json(&["inbox", "--json"]);
    assert_eq!(inbox, serde_json::json!([]));
}

#[test]
fn stop_and_steer_reach_a_detached_turn_from_any_terminal() {
    let env = Env::new();
    let (_, detached, _) = env.json(&["run", "--detach", "slow please"]);
    let key = key_of(&detached);
    wait_for("the turn to stream", 10, || {
        let (_, status, _) = env.json(&["daemon", "status", "--json"]);
        (status["busySessions"] == 1).then_some(())
    });
    let steer = env.weft(&["steer", &key, "and", "faster"]);
    assert_eq!(steer.status.code(), Some(0));
    let stop = env.weft(&["stop", &key]);
    assert_eq!(stop.status.code(), Some(0));
    let (code, last, _) = env.json(&["wait", &key, "--json"]);
    assert_eq!(code, 1, "a stopped turn is not ok: {last}");
    assert_eq!(last["incomplete"], true);
    assert!(
        last["notices"].to_string().contains("stopped by the user"),
        "{last}"
    );
}

#[test]
fn each_client_s_turns_see_that_client_s_environment() {
    let env = Env::new();
    let run = |value: &str| {
        let out = env
            .cmd(&["run", "--json", "show env:WEFT_TEST_MARK"])
            .env("WEFT_TEST_MARK", value)
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        v["snapshot"]["notices"].to_string()
    };
    // The first run starts the daemon with "one"; the second client's "two" wins for
    // its own turn, and the daemon's environment is untouched by it.
    assert!(run("one").contains("WEFT_TEST_MARK=one"));
    assert!(run("two").contains("WEFT_TEST_MARK=two"));
    let out = env
        .cmd(&["run", "--json", "show env:WEFT_TEST_MARK"])
        .env_remove("WEFT_TEST_MARK")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(
        v["snapshot"]["notices"]
            .to_string()
            .contains("WEFT_TEST_MARK is not set"),
        "{v}"
    );
}

#[test]
fn a_binary_planted_in_the_current_folder_is_never_run() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let marker = env.work.path().join("PLANTED-RAN");
    let script = format!("#!/bin/sh\ntouch '{}'\n", marker.display());
    let local = env.work.path().join(".tools/agents/node_modules/.bin");
    std::fs::create_dir_all(&local).unwrap_or_else(|e| panic!("{e}"));
    for dir in [env.work.path(), local.as_path()] {
        for name in ["claude", "codex", "gemini"] {
            let path = dir.join(name);
            std::fs::write(&path, &script).unwrap_or_else(|e| panic!("{e}"));
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755))
                .unwrap_or_else(|e| panic!("{e}"));
        }
    }
    // The real agents may start (found beside the build): they get homes of their own,
    // not the machine user's, which would collect their sessions.
    let agent_home = env.home.path().join("agent-home");
    for dir in [".codex", ".claude"] {
        std::fs::create_dir_all(agent_home.join(dir)).unwrap_or_else(|e| panic!("{e}"));
    }
    for agent in ["claude", "codex", "gemini"] {
        let _ = env
            .cmd(&["run", "--detach", "--agent", agent, "hi"])
            // A relative PATH entry must not count either.
            .env("PATH", ".:bin:/usr/bin:/bin")
            .env("HOME", &agent_home)
            .env("CODEX_HOME", agent_home.join(".codex"))
            .env("CLAUDE_CONFIG_DIR", agent_home.join(".claude"))
            .env("GEMINI_CLI_HOME", &agent_home)
            .env("ANTHROPIC_BASE_URL", "http://127.0.0.1:9")
            .env("OPENAI_BASE_URL", "http://127.0.0.1:9")
            .env("GOOGLE_GEMINI_BASE_URL", "http://127.0.0.1:9")
            .env("CLAUDE_CODE_MAX_RETRIES", "0")
            .output();
    }
    // Probing the agents runs each one's binary as it was found.
    let _ = env
        .cmd(&["agents", "--json"])
        .env("PATH", ".:bin:/usr/bin:/bin")
        .output();
    std::thread::sleep(Duration::from_millis(500));
    assert!(!marker.exists(), "a binary from the current folder was run");
}

#[test]
fn an_idle_daemon_exits_by_itself() {
    let env = Env::new();
    let out = env
        .cmd(&["run", "hello"])
        .env("WEFT_DAEMON_IDLE_SECS", "1")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0));
    let pid = daemon_pid(&env);
    // Our status client kept it busy for a moment; then nothing needs it.
    wait_for("the idle daemon to exit", 20, || {
        (!pid_alive(pid)).then_some(())
    });
    let out = env.weft(&["daemon", "status"]);
    assert_eq!(out.status.code(), Some(1), "no daemon runs now");
}

#[tokio::test]
async fn a_newer_client_restarts_an_idle_daemon_and_is_told_so() {
    let env = Env::new();
    assert_eq!(env.weft(&["run", "hello"]).status.code(), Some(0));
    let old = daemon_pid(&env);
    let hello = weft_protocol::Hello {
        version: "999.0.0".into(),
        surface: "cli".into(),
        env: None,
        token: None,
        ..Default::default()
    };
    let (client, mut events) = Client::connect(&Home::at(env.home.path()), hello)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(client.welcome().restarting, "{:?}", client.welcome());
    let mut reason = String::new();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while let Ok(Some(ev)) = tokio::time::timeout_at(deadline, events.recv()).await {
        match ev {
            Event::Message(ServerMessage::Closing { reason: r }) => reason = r,
            Event::Disconnected(_) => break,
            _ => {}
        }
    }
    assert!(reason.contains("restarts for version 999.0.0"), "{reason}");
    wait_for("the old daemon to exit", 20, || {
        (!pid_alive(old)).then_some(())
    });
    // The next client gets a new daemon, with the session still there.
    let (code, list, _) = env.json(&["sessions", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(list.as_array().map(Vec::len), Some(1));
    assert_ne!(daemon_pid(&env), old);
}

#[test]
fn a_question_pending_when_the_daemon_was_killed_shows_as_expired() {
    let env = Env::new();
    let (_, detached, _) = env.json(&["run", "--detach", "a question"]);
    let key = key_of(&detached);
    wait_for("the question", 20, || {
        let (_, inbox, _) = env.json(&["inbox", "--json"]);
        (inbox.as_array().map(Vec::len) == Some(1)).then_some(())
    });
    let pid = daemon_pid(&env);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid as i32),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    wait_for("the daemon to die", 20, || (!pid_alive(pid)).then_some(()));
    let (code, turns, stderr) = env.json(&["history", &key, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let turn = &turns[0];
    assert_eq!(turn["incomplete"], true, "{turn}");
    let expired = "\"Echo has a question\" expired: the agent process ended";
    assert!(
        turn["notices"]
            .as_array()
            .is_some_and(|n| n.iter().any(|v| v == expired)),
        "{turn}"
    );
    let (_, inbox, _) = env.json(&["inbox", "--json"]);
    assert_eq!(inbox, serde_json::json!([]));
}

#[tokio::test]
async fn dequeue_and_requeue_change_the_queue_every_client_sees_and_a_dequeued_prompt_never_runs() {
    let env = Env::new();
    // A slow prompt streams for seconds (8 times its words, 150 ms a word): long
    // enough to edit the queue behind it; it is stopped at the end.
    let first = "slow first, a long walk through the quiet valley past the river and the mill";
    let (_, detached, _) = env.json(&["run", "--detach", first]);
    let key = key_of(&detached);
    let queue = |text: &str| {
        let (code, v, stderr) = env.json(&["run", "--detach", "--session", &key, text]);
        assert_eq!(code, 0, "{stderr}");
        v["taskId"].as_str().unwrap_or_default().to_string()
    };
    let (a, b, c) = (queue("queued a"), queue("queued b"), queue("queued c"));
    let (app, mut events) = app_client(&env).await;
    let prompts = |s: &UniversalSnapshot| -> Vec<String> {
        s.queued.iter().map(|q| q.prompt.clone()).collect()
    };
    let snap = follow(&app, &mut events, &key, |s| s.queued.len() == 3).await;
    assert_eq!(prompts(&snap), ["queued a", "queued b", "queued c"]);

    env.ok(&["requeue", &key, &c, "--to", "1"]);
    env.ok(&["dequeue", &key, &a]);
    // The subscribed client (a window) sees the new queue from the patches.
    let snap = follow(&app, &mut events, &key, |s| s.queued.len() == 2).await;
    assert_eq!(prompts(&snap), ["queued c", "queued b"]);
    assert_eq!(snap.queued[0].task_id, c);

    // Bad input is refused clearly and changes nothing.
    let again = env.weft(&["dequeue", &key, &a]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("is queued"));
    let zero = env.weft(&["requeue", &key, &b, "--to", "0"]);
    assert_eq!(zero.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&zero.stderr).contains("starts at 1"));
    let last = env.weft(&["requeue", &key, &c, "--to", "99"]);
    assert_eq!(last.status.code(), Some(0));
    let snap = follow(&app, &mut events, &key, |s| {
        s.queued.first().map(|q| q.task_id.as_str()) == Some(b.as_str())
    })
    .await;
    assert_eq!(prompts(&snap), ["queued b", "queued c"]);

    // A `weft run` waiting on a queued prompt ends, saying why, when that prompt is
    // dequeued by another client: it would otherwise wait for a turn that never comes.
    let mut waiting = env
        .cmd(&["run", "--session", &key, "queued d"])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("weft run: {e}"));
    let snap = follow(&app, &mut events, &key, |s| {
        s.queued.iter().any(|q| q.prompt == "queued d")
    })
    .await;
    let d = snap
        .queued
        .iter()
        .find(|q| q.prompt == "queued d")
        .map(|q| q.task_id.clone())
        .unwrap_or_default();
    assert_eq!(env.weft(&["dequeue", &key, &d]).status.code(), Some(0));
    wait_for("the waiting weft run to end", 30, || {
        waiting.try_wait().ok().flatten()
    });
    let out = waiting
        .wait_with_output()
        .unwrap_or_else(|e| panic!("weft run: {e}"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("taken out of the queue"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    assert_eq!(env.weft(&["stop", &key]).status.code(), Some(0));
    let (_, _, _) = env.json(&["wait", &key, "--json"]);
    let (code, history, stderr) = env.json(&["history", &key, "--json"]);
    assert_eq!(code, 0, "{stderr}");
    let ran: Vec<&str> = history
        .as_array()
        .map(|turns| turns.iter().filter_map(|t| t["prompt"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(ran, [first, "queued b", "queued c"], "{history}");
}

/// An ACP agent is data: one added to `$WEFT_HOME/agents.json` is in `weft agents` (and
/// so in the app, which asks the same verb) from the daemon already running, a turn
/// reaches it, and one taken out of the file is gone.
#[test]
fn an_acp_agent_added_to_agents_json_is_there_without_a_restart() {
    let env = Env::new();
    let ids = || -> Vec<String> {
        let (code, list, stderr) = env.json(&["agents", "--json"]);
        assert_eq!(code, 0, "{stderr}");
        strings(&list, "id").into_iter().map(String::from).collect()
    };
    assert!(!ids().iter().any(|i| i == "mine"));
    let pid = daemon_pid(&env);
    let file = env.home.path().join("agents.json");
    std::fs::write(
        &file,
        r#"{"agents":[{"id":"mine","name":"Mine","command":"mine-acp-agent-nowhere"}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(ids().iter().any(|i| i == "mine"), "{:?}", ids());
    let out = env.weft(&["run", "--agent", "mine", "hello"]);
    assert!(!out.status.success());
    let said = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(said.contains("mine-acp-agent-nowhere"), "{said}");

    std::fs::write(
        &file,
        r#"{"agents":[{"id":"yours","command":"yours-acp-agent-nowhere"}]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let now = ids();
    assert!(
        now.iter().any(|i| i == "yours") && !now.iter().any(|i| i == "mine"),
        "{now:?}"
    );
    assert_eq!(daemon_pid(&env), pid, "one daemon throughout");
}

/// A pending change of agent is kept in the store: the daemon stops between the switch
/// and taking it back, and the next turn still resumes the old agent's own session on
/// its model and effort, exactly as before the switch.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_pending_switch_taken_back_after_a_daemon_restart_restores_the_session() {
    let env = Env::new();
    let (code, first, stderr) = env.json(&[
        "run",
        "--json",
        "--agent",
        "echo",
        "--model",
        "echo-big",
        "--effort",
        "high",
        "remember the word quince",
    ]);
    assert_eq!(code, 0, "{stderr}");
    let key = key_of(&first);
    let echo_session = first["snapshot"]["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!echo_session.is_empty(), "{first}");
    let switch = |agent: &'static str| {
        let key = key.clone();
        let env = &env;
        async move {
            let (client, _events) = app_client(env).await;
            client
                .send(verb::SwitchAgent {
                    session_key: key,
                    agent: agent.into(),
                })
                .await
                .unwrap_or_else(|e| panic!("switch to {agent}: {e}"));
        }
    };
    switch("native").await;
    super::support::stop_daemon(env.home.path());
    // A new daemon (any command starts one); the switch is taken back before any turn
    // ran on native.
    assert_eq!(env.weft(&["inbox"]).status.code(), Some(0));
    switch("echo").await;
    let (code, again, stderr) = env.json(&["run", "--json", "--session", &key, "and again"]);
    assert_eq!(code, 0, "{stderr}");
    let snap = &again["snapshot"];
    assert_eq!(snap["agent"], "echo", "{again}");
    assert_eq!(snap["sessionId"], echo_session.as_str(), "{again}");
    assert_eq!(snap["model"], "echo-big", "{again}");
    assert_eq!(snap["effort"], "high", "{again}");
}
