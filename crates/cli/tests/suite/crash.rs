//! A daemon killed mid-turn: the real `claude` against a scripted server, the daemon
//! SIGKILLed while the reply streams. No agent process may survive it, and the next
//! daemon shows the turn incomplete with everything received until then.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::Value;
use weft_client::{Client, Event, Home};
use weft_protocol::verb;
use weft_protocol::{apply_in_place, ServerMessage, SnapshotAt};
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{claude_env, claude_home, ok_stdout, Env};

/// The real claude, found as the drivers find it (`WEFT_CLAUDE_BIN`, the project-local
/// install above this test binary, or an absolute PATH entry: CI keeps its target dir
/// outside the checkout and puts the checkout's install on PATH).
fn claude_bin() -> Option<PathBuf> {
    super::support::agent_bin("claude", "WEFT_CLAUDE_BIN")
}

/// Pids of processes (other than `weft` itself) whose environment mentions `marker`.
fn processes_with(marker: &Path) -> Vec<(u32, String)> {
    let marker = marker.as_os_str().as_encoded_bytes();
    let Ok(dir) = std::fs::read_dir("/proc") else {
        return Vec::new();
    };
    dir.flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
        .filter(|pid| *pid != std::process::id())
        .filter_map(|pid| {
            let environ = std::fs::read(format!("/proc/{pid}/environ")).ok()?;
            let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
            let comm = comm.trim().to_string();
            (environ.windows(marker.len()).any(|w| w == marker) && comm != "weft")
                .then_some((pid, comm))
        })
        .collect()
}

#[tokio::test]
async fn a_daemon_killed_mid_turn_leaves_no_agent_and_keeps_the_partial_turn() {
    let Some(claude) = claude_bin() else { return };
    let server = AnthropicServer::start(
        Script::new().default_reply(
            Turn::new()
                .text_chunks(&["partial one ", "partial two "])
                .then_hang(),
        ),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let claude_home = claude_home();
    let run = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        claude_env(&mut cmd, claude_home.path(), &claude, &server.base_url());
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let out = run(&["run", "--detach", "--agent", "claude", "tell me a story"]);
    let detached: Value = serde_json::from_str(&ok_stdout(&out)).unwrap_or_default();
    let key = detached["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // Follow it until the partial reply has arrived.
    let hello = weft_client::hello_with_env("test");
    let (client, mut events) = Client::connect(&Home::at(env.home.path()), hello)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at: SnapshotAt = client
        .send(verb::Subscribe {
            session_key: key.clone(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let (mut snap, mut seq) = (at.snapshot, at.seq);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(60);
    while !snap.text.contains("partial two") {
        match tokio::time::timeout_at(deadline, events.recv()).await {
            Ok(Some(Event::Message(ServerMessage::Patch(ev)))) if ev.first_seq() == seq + 1 => {
                apply_in_place(&mut snap, &ev.patch);
                seq = ev.seq;
            }
            Ok(Some(_)) => {}
            Ok(None) | Err(_) => panic!("the partial reply never came: {snap:?}"),
        }
    }
    let agents = processes_with(claude_home.path());
    assert!(!agents.is_empty(), "no claude process seen mid-turn");

    let (_, status, _) = env.json(&["daemon", "status", "--json"]);
    let pid = status["pid"].as_i64().unwrap_or_default() as i32;
    assert!(pid > 0);
    nix::sys::signal::kill(
        nix::unistd::Pid::from_raw(pid),
        nix::sys::signal::Signal::SIGKILL,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    drop(client);
    super::support::wait_for("the daemon to die", 10, || {
        let state = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
        let state = state
            .rsplit_once(')')
            .map(|(_, r)| r.trim_start().chars().next());
        matches!(state, None | Some(Some('Z'))).then_some(())
    });

    // A new daemon (any client starts one) finds the turn interrupted.
    let history = run(&["history", &key, "--json"]);
    let turns: Value = serde_json::from_str(&ok_stdout(&history)).unwrap_or_default();
    let turn = &turns[0];
    assert_eq!(
        turn["incomplete"],
        true,
        "{turns} / {snap:?} / {}",
        String::from_utf8_lossy(&history.stderr)
    );
    assert!(
        turn["text"]
            .as_str()
            .is_some_and(|t| t.contains("partial one partial two")),
        "{turn}"
    );
    assert!(
        turn["error"]
            .as_str()
            .is_some_and(|e| e.contains("interrupted")),
        "{turn}"
    );

    // And nothing of the killed daemon's agents is left.
    super::support::wait_for("the agents to die with the daemon", 10, || {
        processes_with(claude_home.path()).is_empty().then_some(())
    });
}
