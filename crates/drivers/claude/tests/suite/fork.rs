//! A forked session's first turn forks with Claude Code's own flags (`--resume PARENT
//! --fork-session --session-id NEW`, and `--resume-session-at UUID` at a turn): the
//! real CLI against the scripted server. The model sees the parent's conversation up
//! to the fork point and nothing after it; the parent's file is not touched; the
//! fork's next turn resumes the fork, not the parent.

use std::path::PathBuf;

use serde_json::Value;
use weft_claude::ClaudeDriver;
use weft_kernel::AgentDriver;
use weft_protocol::ForkOrigin;
use weft_testkit::anthropic::{when, Turn};
use weft_testkit::Script;

use super::support::{claude_bin, fast_config, new_sink, run_turn, ClaudeEnv};

/// The session file of `id` in the test's Claude home.
fn session_file(env: &ClaudeEnv, id: &str) -> Option<PathBuf> {
    let projects = env.claude_dir().join("projects");
    std::fs::read_dir(projects)
        .ok()?
        .flatten()
        .map(|d| d.path().join(format!("{id}.jsonl")))
        .find(|p| p.is_file())
}

/// The `uuid` of the main-chain assistant record whose text contains `needle`.
fn assistant_uuid(file: &PathBuf, needle: &str) -> String {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .filter(|v| v["type"] == "assistant" && v["isSidechain"] != true)
        .find(|v| v["message"].to_string().contains(needle))
        .and_then(|v| v["uuid"].as_str().map(String::from))
        .unwrap_or_else(|| panic!("no assistant record with {needle} in {}", file.display()))
}

fn fork(parent: &str, at: Option<String>, turns: u32, id: &str) -> Option<ForkOrigin> {
    Some(ForkOrigin {
        parent_key: "claude:parent".into(),
        parent_id: parent.into(),
        at,
        turns,
        session_id: Some(id.into()),
    })
}

/// The text of the request that carried `prompt`.
fn request_with(env: &ClaudeEnv, prompt: &str) -> String {
    env.server
        .messages_requests()
        .into_iter()
        .find(|r| r.last_user_text().contains(prompt))
        .map(|r| r.all_text())
        .unwrap_or_else(|| panic!("no request carried {prompt}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_at_a_turn_or_at_the_end_carries_the_parents_turns_up_to_there() {
    let Some(_) = claude_bin() else { return };
    let reply =
        |needle: &str, text: &str| (when::user_text_contains(needle), Turn::text_reply(text));
    let mut script = Script::new().default_reply(Turn::text_reply("ok"));
    for (w, t) in [
        reply("first question", "alpha-reply-one"),
        reply("second question", "bravo-reply-two"),
        reply("fork at one", "charlie-reply-fork"),
        reply("fork at the end", "delta-reply-fork"),
        reply("again in the fork", "echo-reply-fork"),
    ] {
        script = script.rule(w, t);
    }
    let env = ClaudeEnv::start(script).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let (r1, _) = run_turn(&driver, env.input("parent", "first question"), &new_sink()).await;
    assert!(r1.ok, "{r1:?}");
    let (r2, _) = run_turn(&driver, env.input("parent", "second question"), &new_sink()).await;
    assert!(r2.ok, "{r2:?}");
    driver.shutdown().await;
    let parent = r1.session_id.unwrap();
    let parent_file = session_file(&env, &parent).expect("the parent's session file");
    let before = std::fs::read(&parent_file).unwrap();
    let after_one = assistant_uuid(&parent_file, "alpha-reply-one");

    // Fork after turn 1: the model sees turn 1, not turn 2.
    let driver = ClaudeDriver::with_config(fast_config());
    let at_one_id = "00000000-0000-4000-8000-000000000001".to_string();
    let mut input = env.input("fork-one", "fork at one");
    input.fork = fork(&parent, Some(after_one), 1, &at_one_id);
    let (r, snap) = run_turn(&driver, input, &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.text, "charlie-reply-fork");
    assert_eq!(r.session_id.as_deref(), Some(at_one_id.as_str()));
    let seen = request_with(&env, "fork at one");
    assert!(
        seen.contains("first question")
            && seen.contains("alpha-reply-one")
            && !seen.contains("second question")
            && !seen.contains("bravo-reply-two"),
        "the fork after turn 1 carries turn 1 only: {seen}"
    );
    assert!(
        session_file(&env, &at_one_id).is_some(),
        "the fork's own file"
    );

    // Fork at the end: both turns.
    let at_end_id = "00000000-0000-4000-8000-000000000002".to_string();
    let mut input = env.input("fork-end", "fork at the end");
    input.fork = fork(&parent, None, 2, &at_end_id);
    let (r, _) = run_turn(&driver, input, &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(r.session_id.as_deref(), Some(at_end_id.as_str()));
    let seen = request_with(&env, "fork at the end");
    assert!(
        seen.contains("alpha-reply-one") && seen.contains("bravo-reply-two"),
        "the fork at the end carries both turns: {seen}"
    );
    driver.shutdown().await;

    // The first fork's next turn (a new process, as after a restart) resumes the fork:
    // its own turn is there, the parent's turn 2 still is not.
    let driver = ClaudeDriver::with_config(fast_config());
    let mut input = env.input("fork-one", "again in the fork");
    input.session_id = Some(at_one_id.clone());
    input.fork = fork(&parent, None, 1, &at_one_id);
    let (r, _) = run_turn(&driver, input, &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(r.session_id.as_deref(), Some(at_one_id.as_str()));
    let seen = request_with(&env, "again in the fork");
    assert!(
        seen.contains("charlie-reply-fork") && !seen.contains("bravo-reply-two"),
        "the fork resumed itself: {seen}"
    );
    driver.shutdown().await;

    assert_eq!(
        std::fs::read(&parent_file).unwrap(),
        before,
        "the parent's file is untouched"
    );
}
