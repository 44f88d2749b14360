//! The session library against files the real CLIs wrote: claude, codex and gemini run
//! against the scripted servers in temporary homes; the daemon (started with those
//! homes in its environment) indexes them; `weft sessions`, `weft search`, `weft
//! history` and `weft run --session agent:<native id>` find, open and continue them.

use std::path::Path;
use std::process::{Command, Stdio};

use serde_json::Value;
use weft_testkit::{anthropic, gemini, openai, AnthropicServer, GeminiServer, ResponsesServer};

use super::support::{
    agent_bin, assert_reply, claude_env, claude_home, codex_env, find, gemini_env, gemini_home,
    ok_json, prompts, stdout_json, string, wait_for, Env,
};
use weft_testkit::leaks::AMBIENT_OPENAI_KEY;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_sessions_run_outside_weft_are_listed_searched_opened_followed_and_continued() {
    let Some(claude) = agent_bin("claude", "WEFT_CLAUDE_BIN") else {
        return;
    };
    let server = AnthropicServer::start(
        anthropic::Script::new()
            .rule(
                anthropic::when::user_text_contains("fourth question"),
                anthropic::Turn::text_reply("ibis-reply-four"),
            )
            .rule(
                anthropic::when::user_text_contains("third question"),
                anthropic::Turn::text_reply("wombat-reply-three"),
            )
            .rule(
                anthropic::when::user_text_contains("second question"),
                anthropic::Turn::text_reply("quokka-reply-two"),
            )
            .rule(
                anthropic::when::user_text_contains("first question"),
                anthropic::Turn::text_reply("zephyr-reply-one about parse_config"),
            )
            .default_reply(anthropic::Turn::text_reply("ok")),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let home = claude_home();
    let env = Env::new();
    let workdir = env.real_work();

    // Claude Code run by the user, outside Weft.
    let claude_run = |args: &[&str]| {
        let mut cmd = Command::new(&claude);
        cmd.args(args).current_dir(&workdir).stdin(Stdio::null());
        claude_env(&mut cmd, home.path(), &claude, &server.base_url());
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let first = claude_run(&[
        "-p",
        "first question: what is this?",
        "--output-format",
        "json",
    ]);
    assert!(first.status.success(), "{first:?}");
    let sid = stdout_json(&first)["session_id"]
        .as_str()
        .unwrap_or_else(|| panic!("no session id: {first:?}"))
        .to_string();
    let key = format!("claude:{sid}");

    let weft = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        claude_env(&mut cmd, home.path(), &claude, &server.base_url());
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };

    // Listed (the first index runs in the background: poll), as native, in this folder.
    let row = wait_for("the native session to be indexed", 30, || {
        let list = stdout_json(&weft(&["sessions", "--native", "--json"]));
        find(&list, &key).cloned()
    });
    assert_eq!(row["origin"], "native");
    assert_eq!(row["agent"], "claude");
    assert_eq!(row["title"], "first question: what is this?");
    assert_eq!(
        row["workdir"].as_str(),
        Some(workdir.to_string_lossy().as_ref())
    );
    assert_eq!(row["turns"], 1);
    assert!(row["outputTokens"].as_u64().is_some_and(|n| n > 0), "{row}");
    let managed_only = stdout_json(&weft(&["sessions", "--managed", "--json"]));
    assert!(find(&managed_only, &key).is_none());

    // A word of the reply, and an identifier inside it, are found; the match is marked.
    for word in ["zephyr-reply-one", "parse_conf"] {
        let hits = stdout_json(&weft(&["search", "--json", word]));
        let hit = find(&hits, &key).unwrap_or_else(|| panic!("{word}: {hits}"));
        assert_eq!(hit["origin"], "native");
        assert!(
            hit["snippet"]
                .as_str()
                .is_some_and(|s| s.contains(&format!("«{word}»"))),
            "{hit}"
        );
    }

    // Its usage is in Claude's current 5-hour billing block, which is active.
    let blocks = stdout_json(&weft(&["usage", "--by", "block", "--json"]));
    let block = blocks
        .as_array()
        .and_then(|b| b.last())
        .unwrap_or_else(|| panic!("no block: {blocks}"));
    assert!(block["calls"].as_u64().is_some_and(|n| n >= 1), "{block}");
    assert_eq!(block["block"]["active"], true, "{block}");
    assert!(
        block["block"]["end"].as_i64() > block["block"]["start"].as_i64(),
        "{block}"
    );
    let table = weft(&["usage", "--by", "block"]);
    assert!(
        String::from_utf8_lossy(&table.stdout).contains("ACTIVE"),
        "{table:?}"
    );

    // The transcript opens from the agent's file.
    let history = stdout_json(&weft(&["history", &key, "--json"]));
    assert_eq!(history[0]["prompt"], "first question: what is this?");
    assert!(
        history[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains("zephyr-reply-one")),
        "{history}"
    );

    // The user goes on in claude outside Weft: the new turn shows up without a restart.
    let second = claude_run(&[
        "-p",
        "second question",
        "--resume",
        &sid,
        "--output-format",
        "json",
    ]);
    assert!(second.status.success(), "{second:?}");
    wait_for("the appended turn to be searchable", 30, || {
        let hits = stdout_json(&weft(&["search", "--json", "quokka-reply-two"]));
        find(&hits, &key).map(|_| ())
    });

    // Continue: the same key, now run by Weft; claude resumes the whole conversation.
    let run = ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &key,
        "third question",
    ]));
    assert_eq!(run["sessionKey"], key.as_str());
    assert_reply(&run, "wombat-reply-three");
    let request_with = |words: &str| {
        server
            .messages_requests()
            .into_iter()
            .find(|r| r.all_text().contains(words))
            .map(|r| r.all_text())
            .unwrap_or_default()
    };
    let seen = request_with("third question");
    assert!(
        seen.contains("first question") && seen.contains("quokka-reply-two"),
        "the scripted server saw the earlier conversation: {seen}"
    );
    // Listed once, as managed, with the native file's figures.
    let list = stdout_json(&weft(&["sessions", "--json"]));
    let rows: Vec<&Value> = list
        .as_array()
        .into_iter()
        .flatten()
        .filter(|s| s["sessionKey"] == key.as_str())
        .collect();
    assert_eq!(rows.len(), 1, "{list}");
    assert_eq!(rows[0]["origin"], "managed");
    let history = stdout_json(&weft(&["history", &key, "--json"]));
    assert_eq!(
        prompts(&history),
        [
            "first question: what is this?",
            "second question",
            "third question"
        ],
        "started at {:?}; claude's file's records: {}",
        history
            .as_array()
            .into_iter()
            .flatten()
            .map(|t| t["startedAt"].clone())
            .collect::<Vec<_>>(),
        records_of(home.path(), &sid)
    );
    // Exported whole: the two turns from claude's file, then Weft's own, each once
    // (the file repeats Weft's turn once indexed again).
    let out = weft(&["sessions", "export", &key, "--format", "markdown"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let doc = String::from_utf8_lossy(&out.stdout).into_owned();
    let at: Vec<Option<usize>> = ["zephyr-reply-one", "quokka-reply-two", "wombat-reply-three"]
        .iter()
        .map(|w| doc.find(w).filter(|&i| doc.rfind(w) == Some(i)))
        .collect();
    assert!(
        at.iter().all(Option::is_some) && at.windows(2).all(|w| w[0] < w[1]),
        "each reply once, in order: {at:?}\n{doc}"
    );

    // Fork after turn 1: a new session whose history stops there, continued by claude
    // (its own `--resume … --fork-session --resume-session-at`); the parent's file is
    // left as it is.
    let parent_file = std::fs::read_dir(home.path().join(".claude/projects"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join(format!("{sid}.jsonl")))
        .find(|p| p.is_file())
        .unwrap_or_else(|| panic!("no session file of {sid}"));
    // The parent's claude (idle in the daemon) may still be writing its last turn.
    let parent_bytes = wait_for("the parent's last reply in its file", 30, || {
        let bytes = std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}"));
        String::from_utf8_lossy(&bytes)
            .contains("wombat-reply-three")
            .then_some(bytes)
    });
    let fork = ok_json(&weft(&["fork", &key, "--at", "1", "--json"]));
    let fork_key = string(&fork["sessionKey"]);
    assert!(fork_key.starts_with("claude:") && fork_key != key, "{fork}");
    assert_eq!(fork["turns"], 1);
    assert_eq!(fork["parentKey"], key.as_str());
    assert_eq!(fork["relation"], "fork");
    let history = stdout_json(&weft(&["history", &fork_key, "--json"]));
    assert_eq!(history.as_array().map(Vec::len), Some(1), "{history}");
    let run = ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &fork_key,
        "fourth question",
    ]));
    assert_reply(&run, "ibis-reply-four");
    let seen = request_with("fourth question");
    assert!(
        seen.contains("zephyr-reply-one") && !seen.contains("quokka-reply-two"),
        "the fork carries turn 1 only: {seen}"
    );
    // The fork's agent session is its own, under the id its key names.
    assert_eq!(
        run["snapshot"]["sessionId"]
            .as_str()
            .map(|id| format!("claude:{id}")),
        Some(fork_key.clone()),
        "{run}"
    );

    // Fork at the end: every turn of the parent, none of the other fork's.
    let end = ok_json(&weft(&["fork", &key, "--json"]));
    let end_key = string(&end["sessionKey"]);
    assert_eq!(end["turns"], 3, "{end}");
    ok_json(&weft(&[
        "run",
        "--json",
        "--session",
        &end_key,
        "fifth question",
    ]));
    let seen = request_with("fifth question");
    assert!(
        seen.contains("zephyr-reply-one")
            && seen.contains("quokka-reply-two")
            && seen.contains("wombat-reply-three")
            && !seen.contains("ibis-reply-four"),
        "the fork at the end carries the parent's three turns: {seen}"
    );
    // Nothing of the forks in the parent's file, nothing of it rewritten (its own idle
    // process may add a bookkeeping line of its own).
    let now = std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}"));
    let added = String::from_utf8_lossy(now.get(parent_bytes.len()..).unwrap_or_default());
    assert!(
        now.starts_with(&parent_bytes)
            && ![
                "fourth question",
                "fifth question",
                "ibis-reply-four",
                &fork_key[7..]
            ]
            .iter()
            .any(|w| added.contains(w)),
        "the forks left the parent's file as it was; added: {added}"
    );

    // All three stay in the library, the forks with their parent; the fork's own file
    // is indexed (its history: turn 1 of the parent, then its own).
    let list = stdout_json(&weft(&["sessions", "--json"]));
    assert!(find(&list, &key).is_some(), "{list}");
    for k in [&fork_key, &end_key] {
        let row = find(&list, k).unwrap_or_else(|| panic!("{k} not listed: {list}"));
        assert_eq!(row["parentKey"], key.as_str(), "{row}");
        assert_eq!(row["relation"], "fork", "{row}");
    }
    wait_for("the fork's own file to be indexed", 30, || {
        let history = stdout_json(&weft(&["history", &fork_key, "--json"]));
        (prompts(&history) == ["first question: what is this?", "fourth question"]).then_some(())
    });
}

/// `weft run` in one Weft home has the real agent write its own files; a second Weft
/// home (no managed record of them) sees them as native sessions.
fn native_in_fresh_home(
    agent_env: &dyn Fn(&mut Command),
    workdir: &Path,
    agent: &str,
    prompt: &str,
    reply_word: &str,
) {
    let writer = Env::new();
    let mut cmd = writer.cmd(&[
        "run",
        "--json",
        "--agent",
        agent,
        "--workdir",
        &workdir.to_string_lossy(),
        prompt,
    ]);
    agent_env(&mut cmd);
    let run = ok_json(&cmd.output().unwrap_or_else(|e| panic!("{e}")));
    let native_id = run["snapshot"]["sessionId"]
        .as_str()
        .unwrap_or_else(|| panic!("no agent session id: {run}"))
        .to_string();
    let key = format!("{agent}:{native_id}");
    drop(writer);

    let reader = Env::new();
    let weft = |args: &[&str]| {
        let mut cmd = reader.cmd(args);
        agent_env(&mut cmd);
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let wd = workdir.to_string_lossy().into_owned();
    let row = wait_for("the native session to be indexed", 30, || {
        let list = stdout_json(&weft(&["sessions", "--native", "--workdir", &wd, "--json"]));
        find(&list, &key).cloned()
    });
    assert_eq!(row["title"], prompt, "{row}");
    assert_eq!(row["workdir"].as_str(), Some(wd.as_str()), "{row}");
    assert!(row["outputTokens"].as_u64().is_some_and(|n| n > 0), "{row}");
    assert!(row["model"].as_str().is_some(), "{row}");
    let hits = stdout_json(&weft(&["search", "--json", "--agent", agent, reply_word]));
    let hit = find(&hits, &key).unwrap_or_else(|| panic!("{hits}"));
    assert!(
        hit["snippet"]
            .as_str()
            .is_some_and(|s| s.contains(&format!("«{reply_word}»"))),
        "{hit}"
    );
    let history = stdout_json(&weft(&["history", &key, "--json"]));
    assert_eq!(history[0]["prompt"], prompt, "{history}");
    assert!(
        history[0]["text"]
            .as_str()
            .is_some_and(|t| t.contains(reply_word)),
        "{history}"
    );
    let usage = stdout_json(&weft(&["usage", "--by", "agent", "--json"]));
    let row = usage
        .as_array()
        .into_iter()
        .flatten()
        .find(|r| r["key"] == agent)
        .unwrap_or_else(|| panic!("{usage}"));
    assert!(row["outputTokens"].as_u64().is_some_and(|n| n > 0), "{row}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_rollouts_are_indexed_with_title_folder_usage_and_open() {
    let Some(codex) = agent_bin("codex", "WEFT_CODEX_BIN") else {
        return;
    };
    let server = ResponsesServer::start(
        openai::Script::new().default_reply(openai::Turn::text_reply("narwhal-codex-reply")),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let workdir = work.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let env = |cmd: &mut Command| {
        codex_env(
            cmd,
            home.path(),
            &codex,
            &server.v1_url(),
            AMBIENT_OPENAI_KEY,
        );
    };
    native_in_fresh_home(
        &env,
        &workdir,
        "codex",
        "count the narwhals",
        "narwhal-codex-reply",
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_chats_are_indexed_with_title_folder_usage_and_open() {
    let Some(bin) = agent_bin("gemini", "WEFT_GEMINI_BIN") else {
        return;
    };
    let server = GeminiServer::start(
        gemini::Script::new()
            .default_reply(gemini::Turn::text_reply("axolotl-gemini-reply").usage(11, 7)),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let home = gemini_home();
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let workdir = work.path().canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let env = |cmd: &mut Command| gemini_env(cmd, home.path(), &bin, &server.base_url());
    native_in_fresh_home(
        &env,
        &workdir,
        "gemini",
        "greet the axolotls",
        "axolotl-gemini-reply",
    );
}

/// The kind and time of each record in claude's file of session `sid` (what a failed
/// assertion about its turns needs).
fn records_of(home: &Path, sid: &str) -> String {
    let file = std::fs::read_dir(home.join(".claude/projects"))
        .into_iter()
        .flatten()
        .flatten()
        .map(|d| d.path().join(format!("{sid}.jsonl")))
        .find(|p| p.is_file());
    let Some(text) = file.and_then(|f| std::fs::read_to_string(f).ok()) else {
        return format!("no file of {sid}");
    };
    text.lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap_or_default();
            let content = v["message"]["content"].to_string();
            format!(
                "\n  {} {} {}",
                v["timestamp"],
                v["type"],
                content.chars().take(60).collect::<String>()
            )
        })
        .collect()
}
