//! `weft fork` through the daemon, against the real agents and scripted servers: a
//! Codex session (a Weft session whose first prompt has codex app-server fork the
//! thread itself: `thread/fork`, `lastTurnId` at a turn) and a Gemini chat (a file
//! Weft writes, which gemini's own `--resume` continues).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::Value;
use weft_testkit::{openai, ResponsesServer};

use super::support::{
    agent_bin, assert_reply, codex_env, find, gemini_env, gemini_home, ok_json, prompts,
    stdout_json, string, wait_for, Env,
};

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

/// A session on `agent` with two turns, "first question" and "second question", both
/// indexed: its key and the first run's result.
fn two_turns(weft: &impl Fn(&[&str]) -> Output, agent: &str, workdir: &str) -> (String, Value) {
    let first = ok_json(&weft(&[
        "run",
        "--json",
        "--agent",
        agent,
        "--workdir",
        workdir,
        "first question",
    ]));
    let key = string(&first["sessionKey"]);
    ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &key,
        "second question",
    ]));
    wait_for("both turns to be indexed", 30, || {
        let list = stdout_json(&weft(&["sessions", "--json"]));
        find(&list, &key).filter(|r| r["turns"] == 2).map(|_| ())
    });
    (key, first)
}

/// The two forks of a two-turn session and the first prompt of each.
struct Forks {
    /// `weft fork --at 1`'s answer.
    at_one: Value,
    at_one_key: String,
    /// The fork's history before its own first prompt.
    at_one_history: Value,
    /// The result of "fork at one", the first fork's first prompt.
    at_one_run: Value,
    at_end_key: String,
}

/// Forks `key` after turn 1 (its first prompt "fork at one", whose reply holds
/// `reply_at_one`) and at its end (its first prompt "fork at the end").
fn fork_both(
    weft: &impl Fn(&[&str]) -> Output,
    agent: &str,
    key: &str,
    reply_at_one: &str,
) -> Forks {
    let at_one = ok_json(&weft(&["fork", key, "--at", "1", "--json"]));
    let at_one_key = string(&at_one["sessionKey"]);
    assert!(
        at_one_key.starts_with(&format!("{agent}:")) && at_one_key != key,
        "{at_one}"
    );
    assert_eq!(at_one["turns"], 1, "{at_one}");
    assert_eq!(at_one["relation"], "fork", "{at_one}");
    let at_one_history = stdout_json(&weft(&["history", &at_one_key, "--json"]));
    assert_eq!(
        at_one_history.as_array().map(Vec::len),
        Some(1),
        "{at_one_history}"
    );
    let at_one_run = ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &at_one_key,
        "fork at one",
    ]));
    assert_reply(&at_one_run, reply_at_one);

    let at_end_key = string(&ok_json(&weft(&["fork", key, "--json"]))["sessionKey"]);
    ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &at_end_key,
        "fork at the end",
    ]));
    Forks {
        at_one,
        at_one_key,
        at_one_history,
        at_one_run,
        at_end_key,
    }
}

/// Both forks are listed with `key` as their parent; the list.
fn assert_listed_as_forks(weft: &impl Fn(&[&str]) -> Output, key: &str, forks: &Forks) -> Value {
    let list = stdout_json(&weft(&["sessions", "--json"]));
    for k in [&forks.at_one_key, &forks.at_end_key] {
        let row = find(&list, k).unwrap_or_else(|| panic!("{k} not listed: {list}"));
        assert_eq!(row["parentKey"], key, "{row}");
    }
    list
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
    let weft = |args: &[&str]| {
        let mut cmd: Command = env.cmd(args);
        codex_env(&mut cmd, home.path(), &codex, &server.v1_url(), "sk-test");
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
    let (key, run) = two_turns(&weft, "codex", &env.workdir());
    let thread = string(&run["snapshot"]["sessionId"]);
    let parent_file = rollout(&home.path().join("sessions"), &thread)
        .unwrap_or_else(|| panic!("no rollout of {thread}"));
    let parent_bytes = std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}"));

    // Fork after turn 1: listed at once, with the parent's first turn as its history;
    // its first prompt has codex fork the thread through turn 1. Then a fork at the end.
    let forks = fork_both(&weft, "codex", &key, "charlie-reply-fork");
    let fork = &forks.at_one;
    assert_eq!(fork["parentKey"], key.as_str(), "{fork}");
    let history = &forks.at_one_history;
    assert_eq!(history[0]["prompt"], "first question", "{history}");
    let run = &forks.at_one_run;
    let fork_thread = string(&run["snapshot"]["sessionId"]);
    assert!(!fork_thread.is_empty() && fork_thread != thread, "{run}");
    let seen = request_with("fork at one");
    assert!(
        seen.contains("alpha-reply-one")
            && !seen.contains("second question")
            && !seen.contains("bravo-reply-two"),
        "the fork carries turn 1 only: {seen}"
    );
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
    let list = assert_listed_as_forks(&weft, &key, &forks);
    assert!(find(&list, &key).is_some(), "{list}");
    for k in [&forks.at_one_key, &forks.at_end_key] {
        assert_eq!(find(&list, k).map(|r| &r["relation"]), Some(&"fork".into()));
    }
    let fork_key = &forks.at_one_key;
    wait_for("the fork's rollout to be indexed", 30, || {
        let history = stdout_json(&weft(&["history", fork_key, "--json"]));
        (prompts(&history) == ["first question", "fork at one"]).then_some(())
    });
    let list = stdout_json(&weft(&["sessions", "--json"]));
    let row = find(&list, fork_key).unwrap_or_else(|| panic!("{list}"));
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

    let (key, _) = two_turns(&weft, "gemini", &env.workdir());
    assert!(request_with("second question").contains("echo-reply-one"));

    // After turn 1: the fork's history is turn 1, and gemini answers from there; at the
    // end: both turns, none of the other fork's.
    let forks = fork_both(&weft, "gemini", &key, "golf-reply-fork");
    let seen = request_with("fork at one");
    assert!(
        seen.contains("echo-reply-one") && !seen.contains("foxtrot-reply-two"),
        "the fork carries turn 1 only: {seen}"
    );
    let seen = request_with("fork at the end");
    assert!(
        seen.contains("echo-reply-one")
            && seen.contains("foxtrot-reply-two")
            && !seen.contains("golf-reply-fork"),
        "the fork at the end carries both turns: {seen}"
    );
    assert_listed_as_forks(&weft, &key, &forks);
    // Each fork's file holds its continued chat: gemini's resume leaves no header-only
    // file beside it for its next start's cleanup to delete both by.
    for (k, turns) in [(&forks.at_one_key, 2), (&forks.at_end_key, 3)] {
        wait_for("the continued fork to be indexed", 30, || {
            let list = stdout_json(&weft(&["sessions", "--json"]));
            find(&list, k)
                .filter(|r| r["turns"] == turns && r["sourceGone"] == false)
                .map(|_| ())
        });
    }
    ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &forks.at_one_key,
        "fork at one, again",
    ]));
    let seen = request_with("fork at one, again");
    assert!(seen.contains("golf-reply-fork"), "{seen}");
}
