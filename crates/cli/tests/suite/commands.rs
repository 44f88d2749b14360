//! `weft run`, `sessions`, `history`, `agents`: exit codes and JSON output.

use std::path::Path;

use serde_json::Value;
use weft_protocol::{apply_in_place, SnapshotPatch, UniversalSnapshot};

use super::support::{strings, Env};

fn workdir(env: &Env) -> String {
    env.workdir()
}

#[test]
fn run_json_prints_the_whole_snapshot_and_exits_0() {
    let env = Env::new();
    let (code, v, _) = env.json(&["run", "--json", "hello", "world"]);
    assert_eq!(code, 0);
    assert!(v["sessionKey"]
        .as_str()
        .is_some_and(|k| k.starts_with("echo:")));
    assert!(v["taskId"].as_str().is_some_and(|t| !t.is_empty()));
    let snap: UniversalSnapshot =
        serde_json::from_value(v["snapshot"].clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(snap.text, "Echo: hello world");
    assert_eq!(snap.agent, "echo");
    assert!(!snap.reasoning.is_empty());
    assert_eq!(snap.tool_calls.len(), 2);
    assert_eq!(
        snap.tool_calls[0].result.as_deref(),
        Some("1 entries: README.md")
    );
    assert_eq!(snap.tool_calls[1].status, weft_protocol::ToolStatus::Failed);
    assert!(snap.plan.as_ref().is_some_and(|p| p
        .steps
        .iter()
        .all(|s| s.status == weft_protocol::StepStatus::Completed)));
    assert!(snap
        .usage
        .as_ref()
        .is_some_and(|u| u.output_tokens == Some(3)));
    assert_eq!(snap.artifacts.len(), 1);
    assert!(snap.artifacts[0]
        .path
        .as_deref()
        .is_some_and(|p| Path::new(p).is_file()));
    assert!(snap.activity.contains("Read ECHO_MISSING.txt failed"));
    assert_eq!(snap.phase, weft_protocol::Phase::Done);
    assert!(!snap.incomplete && snap.error.is_none());
}

#[test]
fn a_failed_turn_exits_1_with_the_error_in_the_snapshot() {
    let env = Env::new();
    let (code, v, stderr) = env.json(&["run", "--json", "please crash"]);
    assert_eq!(code, 1, "{stderr}");
    assert!(v["snapshot"]["error"]
        .as_str()
        .is_some_and(|e| e.contains("crashed on purpose")));
    assert!(stderr.contains("the turn failed"));
}

#[test]
fn bad_usage_exits_2_with_a_clear_message() {
    let env = Env::new();
    for (args, needle) in [
        (vec!["run", "--agent", "nope", "hi"], "unknown agent `nope`"),
        (
            vec!["run", "--workdir", "/no/such/dir", "hi"],
            "does not exist",
        ),
        (
            vec!["run", "--session", "echo:missing", "hi"],
            "unknown session `echo:missing`",
        ),
        (vec!["run"], "PROMPT"),
        (vec!["history", "echo:missing"], "unknown session"),
        (vec!["bogus"], "unrecognized subcommand"),
    ] {
        let out = env.weft(&args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
}

#[test]
fn without_a_terminal_a_permission_is_cancelled_visibly_unless_yes() {
    let env = Env::new();
    let note = env.work.path().join(".weft/echo-note.md");
    let (code, v, stderr) = env.json(&["run", "--json", "ask permission"]);
    assert_eq!(code, 0);
    assert!(
        stderr.contains("cancelled \"Echo wants to write a note"),
        "{stderr}"
    );
    assert!(v["snapshot"]["notices"].to_string().contains("cancelled"));
    assert!(v["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("was cancelled")));
    assert!(!note.exists());

    let (code, v, stderr) = env.json(&["run", "--json", "--yes", "ask permission"]);
    assert_eq!(code, 0);
    assert!(stderr.contains("allowed"), "{stderr}");
    assert!(v["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("I wrote the note")));
    assert!(note.is_file());

    let (_, v, stderr) = env.json(&["run", "--json", "--yes", "a question"]);
    assert!(
        stderr.contains("cancelled \"Echo has a question\""),
        "{stderr}"
    );
    assert!(v["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("My question was cancelled")));
}

#[test]
fn session_continues_and_sessions_and_history_list_it() {
    let env = Env::new();
    let (_, first, _) = env.json(&["run", "--json", "first prompt"]);
    let key = first["sessionKey"].as_str().unwrap_or_default().to_string();
    let (code, second, _) = env.json(&["run", "--json", "--session", &key, "second prompt"]);
    assert_eq!(code, 0);
    assert_eq!(second["sessionKey"].as_str(), Some(key.as_str()));
    assert!(second["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("you first said \"first prompt\"")));
    assert_eq!(
        first["snapshot"]["sessionId"],
        second["snapshot"]["sessionId"]
    );
    let (_, other, _) = env.json(&["run", "--json", "another session"]);

    let (code, list, _) = env.json(&["sessions", "--json", "--workdir", &workdir(&env)]);
    assert_eq!(code, 0);
    let keys = strings(&list, "sessionKey");
    assert_eq!(
        keys,
        [
            other["sessionKey"].as_str().unwrap_or_default(),
            key.as_str()
        ],
        "newest first"
    );
    assert_eq!(list[1]["title"], "first prompt");
    assert_eq!(list[1]["turns"], 2);
    assert!(list[1]["workdir"].as_str().is_some_and(|w| !w.is_empty()));
    assert!(list[1]["updatedAt"].as_i64().is_some());

    let (code, history, _) = env.json(&["history", &key, "--json"]);
    assert_eq!(code, 0);
    let prompts = strings(&history, "prompt");
    assert_eq!(prompts, ["first prompt", "second prompt"]);

    let human = env.weft(&["sessions"]);
    assert!(String::from_utf8_lossy(&human.stdout).contains(&key));
}

#[test]
fn stream_prints_gap_free_patches_that_rebuild_the_snapshot() {
    let env = Env::new();
    let out = env.weft(&["run", "--stream", "stream me"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8_lossy(&out.stdout);
    let mut snap = UniversalSnapshot::default();
    let mut last: Option<u64> = None;
    let mut key = String::new();
    for line in stdout.lines() {
        let v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}"));
        let seq = v["seq"]
            .as_u64()
            .unwrap_or_else(|| panic!("no seq: {line}"));
        if let Some(prev) = last {
            // A merged patch stands for `from`..=`seq`.
            let from = v["from"].as_u64().unwrap_or(seq);
            assert_eq!(from, prev + 1, "gap in seqs");
        }
        last = Some(seq);
        key = v["sessionKey"].as_str().unwrap_or_default().to_string();
        let patch: SnapshotPatch =
            serde_json::from_value(v["patch"].clone()).unwrap_or_else(|e| panic!("{e}"));
        apply_in_place(&mut snap, &patch);
    }
    // The echo agent streams a piece every 20 ms; pieces that waited for the same
    // store commit come merged, so how many lines depends on the machine's load.
    assert!(stdout.lines().count() >= 2, "{stdout}");
    assert_eq!(snap.text, "Echo: stream me");
    let (_, history, _) = env.json(&["history", &key, "--json"]);
    let stored: UniversalSnapshot =
        serde_json::from_value(history[0].clone()).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        snap, stored,
        "the streamed patches rebuild exactly the stored snapshot"
    );
}

#[test]
fn agents_lists_echo_installed_with_capabilities() {
    let env = Env::new();
    let (code, agents, _) = env.json(&["agents", "--json"]);
    assert_eq!(code, 0);
    let echo = agents
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["id"] == "echo")
        .cloned()
        .unwrap_or_default();
    assert_eq!(echo["installed"], true);
    assert_eq!(echo["capabilities"]["steer"], true);
    assert!(echo["version"].as_str().is_some());
}

#[test]
fn search_finds_past_turns_by_their_words_across_sessions() {
    let env = Env::new();
    let (_, first, _) = env.json(&["run", "--json", "the zebra crossing"]);
    let (_, second, _) = env.json(&["run", "--json", "a quiet afternoon"]);
    let zebra_key = first["sessionKey"].as_str().unwrap_or_default().to_string();
    assert_ne!(zebra_key, second["sessionKey"].as_str().unwrap_or_default());

    // The last word is a prefix; every word must match; the match is marked.
    let (code, hits, _) = env.json(&["search", "--json", "zebra", "cross"]);
    assert_eq!(code, 0);
    let hits = hits.as_array().cloned().unwrap_or_default();
    assert_eq!(hits.len(), 1, "{hits:?}");
    assert_eq!(hits[0]["sessionKey"], zebra_key.as_str());
    assert_eq!(hits[0]["taskId"], first["taskId"]);
    assert!(
        hits[0]["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("«zebra»")),
        "{hits:?}"
    );
    let (_, none, _) = env.json(&["search", "--json", "zebra", "afternoon"]);
    assert_eq!(none, serde_json::json!([]));

    // Search syntax in the words is text, not an error.
    for odd in ["\"unbalanced", "a AND OR", "(paren", "*", "NEAR(x y)"] {
        let out = env.weft(&["search", odd]);
        assert_eq!(out.status.code(), Some(0), "{odd}: {out:?}");
    }
    // Plain output: the session key and the snippet.
    let out = env.weft(&["search", "quiet"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("«quiet»"), "{text}");
    // No words is a usage error.
    assert_eq!(env.weft(&["search"]).status.code(), Some(2));
}
