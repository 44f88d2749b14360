//! `weft fork` through the daemon, against the real agents and scripted servers: a
//! Codex session (a Weft session whose first prompt has codex app-server fork the
//! thread itself: `thread/fork`, `lastTurnId` at a turn) and a Gemini chat (a file
//! Weft writes, which gemini's own `--resume` continues).

use std::path::{Path, PathBuf};
use std::process::Command;

use weft_testkit::{openai, ResponsesServer};

use super::support::{agent_bin, find, gemini_env, gemini_home, stdout_json, wait_for, Env};

/// The rollout file of thread `id` under `dir`.
fn rollout(dir: &Path, id: &str) -> Option<PathBuf> {
    for e in std::fs::read_dir(dir).ok()?.flatten() {
        let p = e.path();
        if p.is_dir() {
            if let Some(f) = rollout(&p, id) {
                return Some(f);
            }
        } else if p
            .file_name()
            .is_some_and(|n| n.to_string_lossy().ends_with(&format!("{id}.jsonl")))
        {
            return Some(p);
        }
    }
    None
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_session_forks_at_a_turn_and_at_its_end_through_codex_itself() {
    let Some(codex) = agent_bin("codex", "WEFT_CODEX_BIN") else {
        return;
    };
    let mut script = openai::Script::new().default_reply(openai::Turn::text_reply("ok"));
    for (needle, text) in [
        ("first question", "alpha-reply-one"),
        ("second question", "bravo-reply-two"),
        ("fork at one", "charlie-reply-fork"),
        ("fork at the end", "delta-reply-fork"),
    ] {
        script = script.rule(
            openai::when::user_text_contains(needle),
            openai::Turn::text_reply(text),
        );
    }
    let server = ResponsesServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let workdir = env.workdir();
    let weft = |args: &[&str]| {
        let mut cmd: Command = env.cmd(args);
        cmd.env("CODEX_HOME", home.path())
            .env("HOME", home.path())
            .env("WEFT_CODEX_BIN", &codex)
            .env("WEFT_CODEX_BASE_URL", server.v1_url())
            .env("WEFT_CODEX_API_KEY_ENV", "WEFT_TEST_OPENAI_KEY")
            .env("WEFT_TEST_OPENAI_KEY", "sk-test")
            .env("WEFT_CODEX_MAX_RETRIES", "0")
            .env("WEFT_CODEX_SANDBOX", "danger-full-access")
            .env("WEFT_CODEX_APPROVAL_POLICY", "never")
            .env("WEFT_CODEX_CONFIG", "model=\"mock-model\"");
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let request_with = |prompt: &str| {
        server
            .responses_requests()
            .into_iter()
            .find(|r| r.last_user_text().contains(prompt))
            .map(|r| r.all_text())
            .unwrap_or_else(|| panic!("no request carried {prompt}"))
    };

    // A Weft session on codex with two turns.
    let out = weft(&[
        "run",
        "--json",
        "--agent",
        "codex",
        "--workdir",
        &workdir,
        "first question",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run = stdout_json(&out);
    let key = run["sessionKey"].as_str().unwrap_or_default().to_string();
    let thread = run["snapshot"]["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let out = weft(&["run", "--json", "--session", &key, "second question"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let parent_file = rollout(&home.path().join("sessions"), &thread)
        .unwrap_or_else(|| panic!("no rollout of {thread}"));
    let parent_bytes = std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}"));
    // Both turns indexed (the fork point is read from the rollout).
    wait_for("both turns to be indexed", 30, || {
        let list = stdout_json(&weft(&["sessions", "--json"]));
        find(&list, &key).filter(|r| r["turns"] == 2).map(|_| ())
    });

    // Fork after turn 1: listed at once, with the parent's first turn as its history.
    let out = weft(&["fork", &key, "--at", "1", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let fork = stdout_json(&out);
    let fork_key = fork["sessionKey"].as_str().unwrap_or_default().to_string();
    assert!(fork_key.starts_with("codex:") && fork_key != key, "{fork}");
    assert_eq!(fork["turns"], 1, "{fork}");
    assert_eq!(fork["parentKey"], key.as_str(), "{fork}");
    assert_eq!(fork["relation"], "fork", "{fork}");
    let history = stdout_json(&weft(&["history", &fork_key, "--json"]));
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    assert_eq!(history[0]["prompt"], "first question", "{history}");

    // Its first prompt: codex forks the thread through turn 1.
    let out = weft(&["run", "--json", "--session", &fork_key, "fork at one"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let run = stdout_json(&out);
    assert!(
        run["snapshot"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("charlie-reply-fork")),
        "{run}"
    );
    let fork_thread = run["snapshot"]["sessionId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!fork_thread.is_empty() && fork_thread != thread, "{run}");
    let seen = request_with("fork at one");
    assert!(
        seen.contains("alpha-reply-one")
            && !seen.contains("second question")
            && !seen.contains("bravo-reply-two"),
        "the fork carries turn 1 only: {seen}"
    );

    // Fork at the end: both turns.
    let out = weft(&["fork", &key, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let end_key = stdout_json(&out)["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let out = weft(&["run", "--json", "--session", &end_key, "fork at the end"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let seen = request_with("fork at the end");
    assert!(
        seen.contains("alpha-reply-one") && seen.contains("bravo-reply-two"),
        "the fork at the end carries both turns: {seen}"
    );
    // Nothing of the forks in the parent's rollout, nothing of it rewritten.
    let now = std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}"));
    let added = String::from_utf8_lossy(now.get(parent_bytes.len()..).unwrap_or_default());
    assert!(
        now.starts_with(&parent_bytes)
            && !["fork at one", "fork at the end", "charlie-reply-fork"]
                .iter()
                .any(|w| added.contains(w)),
        "the forks left the parent's rollout as it was; added: {added}"
    );

    // The library lists all three, the forks with their parent; once the fork's own
    // rollout is indexed, its history is the parent's turn 1 and then its own.
    let list = stdout_json(&weft(&["sessions", "--json"]));
    assert!(find(&list, &key).is_some(), "{list}");
    for k in [&fork_key, &end_key] {
        let row = find(&list, k).unwrap_or_else(|| panic!("{k} not listed: {list}"));
        assert_eq!(row["parentKey"], key.as_str(), "{row}");
        assert_eq!(row["relation"], "fork", "{row}");
    }
    wait_for("the fork's rollout to be indexed", 30, || {
        let history = stdout_json(&weft(&["history", &fork_key, "--json"]));
        let prompts: Vec<String> = history
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|t| t["prompt"].as_str().map(String::from))
            .collect();
        (prompts == ["first question", "fork at one"]).then_some(())
    });
    let list = stdout_json(&weft(&["sessions", "--json"]));
    let row = find(&list, &fork_key).unwrap_or_else(|| panic!("{list}"));
    assert_eq!(row["turns"], 2, "the parent's turn and its own: {row}");
}

/// Gemini has no fork of its own: Weft writes the fork's chat file (a copy rewound to
/// the turn with Gemini's own `$rewindTo` record) and the real gemini's `--resume`
/// continues it with exactly that history.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_chat_forks_at_a_turn_and_at_its_end_and_gemini_continues_each() {
    let Some(bin) = agent_bin("gemini", "WEFT_GEMINI_BIN") else {
        return;
    };
    use weft_testkit::{gemini, GeminiServer};
    let mut script = gemini::Script::new().default_reply(gemini::Turn::text_reply("ok"));
    for (needle, text) in [
        ("first question", "echo-reply-one"),
        ("second question", "foxtrot-reply-two"),
        ("fork at one", "golf-reply-fork"),
        ("fork at the end", "hotel-reply-fork"),
    ] {
        script = script.rule(
            gemini::when::user_text_contains(needle),
            gemini::Turn::text_reply(text).usage(11, 7),
        );
    }
    let server = GeminiServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = gemini_home();
    let env = Env::new();
    let workdir = env.workdir();
    let weft = |args: &[&str]| {
        let mut cmd: Command = env.cmd(args);
        gemini_env(&mut cmd, home.path(), &bin, &server.base_url());
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let request_with = |prompt: &str| {
        server
            .main_requests()
            .into_iter()
            .find(|r| r.last_user_text().contains(prompt))
            .map(|r| r.all_text())
            .unwrap_or_else(|| panic!("no request carried {prompt}"))
    };

    let out = weft(&[
        "run",
        "--json",
        "--agent",
        "gemini",
        "--workdir",
        &workdir,
        "first question",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let key = stdout_json(&out)["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let out = weft(&["run", "--json", "--session", &key, "second question"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(request_with("second question").contains("echo-reply-one"));
    wait_for("both turns to be indexed", 30, || {
        let list = stdout_json(&weft(&["sessions", "--json"]));
        find(&list, &key).filter(|r| r["turns"] == 2).map(|_| ())
    });

    // After turn 1: the fork's history is turn 1, and gemini answers from there.
    let out = weft(&["fork", &key, "--at", "1", "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let fork = stdout_json(&out);
    let fork_key = fork["sessionKey"].as_str().unwrap_or_default().to_string();
    assert!(fork_key.starts_with("gemini:") && fork_key != key, "{fork}");
    assert_eq!(fork["turns"], 1, "{fork}");
    assert_eq!(fork["relation"], "fork", "{fork}");
    let history = stdout_json(&weft(&["history", &fork_key, "--json"]));
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    let out = weft(&["run", "--json", "--session", &fork_key, "fork at one"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(stdout_json(&out)["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("golf-reply-fork")));
    let seen = request_with("fork at one");
    assert!(
        seen.contains("echo-reply-one") && !seen.contains("foxtrot-reply-two"),
        "the fork carries turn 1 only: {seen}"
    );

    // At the end: both turns, none of the other fork's.
    let out = weft(&["fork", &key, "--json"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let end_key = stdout_json(&out)["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let out = weft(&["run", "--json", "--session", &end_key, "fork at the end"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let seen = request_with("fork at the end");
    assert!(
        seen.contains("echo-reply-one")
            && seen.contains("foxtrot-reply-two")
            && !seen.contains("golf-reply-fork"),
        "the fork at the end carries both turns: {seen}"
    );
    let list = stdout_json(&weft(&["sessions", "--json"]));
    for k in [&fork_key, &end_key] {
        let row = find(&list, k).unwrap_or_else(|| panic!("{k} not listed: {list}"));
        assert_eq!(row["parentKey"], key.as_str(), "{row}");
    }
    // Each fork's file holds its continued chat: gemini's resume leaves no header-only
    // file beside it for its next start's cleanup to delete both by.
    for (k, turns) in [(&fork_key, 2), (&end_key, 3)] {
        wait_for("the continued fork to be indexed", 30, || {
            let list = stdout_json(&weft(&["sessions", "--json"]));
            find(&list, k)
                .filter(|r| r["turns"] == turns && r["sourceGone"] == false)
                .map(|_| ())
        });
    }
    let out = weft(&[
        "run",
        "--json",
        "--session",
        &fork_key,
        "fork at one, again",
    ]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let seen = request_with("fork at one, again");
    assert!(seen.contains("golf-reply-fork"), "{seen}");
}
