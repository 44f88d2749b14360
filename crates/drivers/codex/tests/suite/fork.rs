//! A forked session's first turn forks with codex app-server's own `thread/fork`
//! (`lastTurnId` at a turn): the real `codex app-server` against the scripted
//! Responses server. The model sees the parent's conversation up to the fork point
//! and nothing after it; codex writes the fork's rollout with `forked_from_id`; the
//! parent's rollout is not touched; the fork's next turn resumes the fork.

use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_codex::{CodexDriver, CODEX_ID};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_protocol::ForkOrigin;
use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{when, Script, Turn};

use super::support::{fast_config, new_sink, require_codex, run_turn, CodexModel};

fn input(model: &CodexModel, work: &Path, key: &str, prompt: &str) -> AgentTurnInput {
    AgentTurnInput {
        session_key: format!("{CODEX_ID}:{key}"),
        task_id: format!("t-{prompt}"),
        prompt: prompt.into(),
        workdir: work.canonicalize().unwrap(),
        env: model.env(),
        ..Default::default()
    }
}

/// The rollout file of thread `id` under the test's CODEX_HOME.
fn rollout(home: &Path, id: &str) -> Option<PathBuf> {
    fn walk(dir: &Path, id: &str) -> Option<PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                if let Some(f) = walk(&p, id) {
                    return Some(f);
                }
            } else if p.file_name().is_some_and(|n| {
                let n = n.to_string_lossy();
                n.starts_with("rollout-") && n.ends_with(&format!("{id}.jsonl"))
            }) {
                return Some(p);
            }
        }
        None
    }
    walk(&home.join("sessions"), id)
}

fn lines(file: &Path) -> Vec<Value> {
    std::fs::read_to_string(file)
        .unwrap()
        .lines()
        .filter_map(|l| serde_json::from_str(l).ok())
        .collect()
}

/// The id of the turn whose `task_complete` ends it, in order.
fn turn_ids(file: &Path) -> Vec<String> {
    lines(file)
        .iter()
        .filter(|v| v["type"] == "event_msg" && v["payload"]["type"] == "task_complete")
        .filter_map(|v| v["payload"]["turn_id"].as_str().map(String::from))
        .collect()
}

fn fork(parent: &str, at: Option<String>, turns: u32) -> Option<ForkOrigin> {
    Some(ForkOrigin {
        parent_key: "codex:parent".into(),
        parent_id: parent.into(),
        at,
        turns,
        session_id: None,
    })
}

/// The text of the request that carried `prompt`.
fn request_with(model: &CodexModel, prompt: &str) -> String {
    model
        .server
        .responses_requests()
        .into_iter()
        .find(|r| r.last_user_text().contains(prompt))
        .map(|r| r.all_text())
        .unwrap_or_else(|| panic!("no request carried {prompt}: {:?}", model.requests()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_fork_at_a_turn_or_at_the_end_carries_the_parents_turns_up_to_there() {
    if require_codex().is_none() {
        return;
    }
    let mut script = Script::new().default_reply(Turn::text_reply("ok"));
    for (needle, text) in [
        ("first question", "alpha-reply-one"),
        ("second question", "bravo-reply-two"),
        ("fork at one", "charlie-reply-fork"),
        ("fork at the end", "delta-reply-fork"),
        ("again in the fork", "echo-reply-fork"),
    ] {
        script = script.rule(when::user_text_contains(needle), Turn::text_reply(text));
    }
    let model = CodexModel::start(script).await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let (r1, _) = run_turn(
        &d,
        input(&model, work.path(), "parent", "first question"),
        &new_sink(),
    )
    .await;
    assert!(r1.ok, "{r1:?}");
    let mut second = input(&model, work.path(), "parent", "second question");
    second.session_id = r1.session_id.clone();
    let (r2, _) = run_turn(&d, second, &new_sink()).await;
    assert!(r2.ok, "{r2:?}");
    d.shutdown().await;
    let parent = r1.session_id.unwrap();
    let parent_file = rollout(model.home.path(), &parent).expect("the parent's rollout");
    let before = std::fs::read(&parent_file).unwrap();
    let turns = turn_ids(&parent_file);
    assert_eq!(turns.len(), 2, "{turns:?}");

    // Fork through turn 1: the model sees turn 1, not turn 2.
    let d = CodexDriver::with_config(fast_config());
    let mut i = input(&model, work.path(), "fork-one", "fork at one");
    i.fork = fork(&parent, Some(turns[0].clone()), 1);
    let (r, snap) = run_turn(&d, i, &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert!(snap.text.contains("charlie-reply-fork"), "{}", snap.text);
    let at_one = r.session_id.clone().unwrap();
    assert_ne!(at_one, parent);
    let seen = request_with(&model, "fork at one");
    assert!(
        seen.contains("first question")
            && seen.contains("alpha-reply-one")
            && !seen.contains("second question")
            && !seen.contains("bravo-reply-two"),
        "the fork through turn 1 carries turn 1 only: {seen}"
    );
    let fork_file = rollout(model.home.path(), &at_one).expect("the fork's own rollout");
    let meta = lines(&fork_file)
        .into_iter()
        .find(|v| v["type"] == "session_meta" && v["payload"]["id"] == at_one.as_str())
        .unwrap_or_else(|| panic!("no session_meta of {at_one}"));
    assert_eq!(meta["payload"]["forked_from_id"], parent.as_str(), "{meta}");

    // Fork at the end: both turns.
    let mut i = input(&model, work.path(), "fork-end", "fork at the end");
    i.fork = fork(&parent, None, 2);
    let (r, _) = run_turn(&d, i, &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert_ne!(r.session_id.as_deref(), Some(parent.as_str()));
    let seen = request_with(&model, "fork at the end");
    assert!(
        seen.contains("alpha-reply-one") && seen.contains("bravo-reply-two"),
        "the fork at the end carries both turns: {seen}"
    );
    d.shutdown().await;

    // The first fork's next turn (a new process) resumes the fork itself.
    let d = CodexDriver::with_config(fast_config());
    let mut i = input(&model, work.path(), "fork-one", "again in the fork");
    i.session_id = Some(at_one.clone());
    i.fork = fork(&parent, Some(turns[0].clone()), 1);
    let (r, _) = run_turn(&d, i, &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(r.session_id.as_deref(), Some(at_one.as_str()));
    let seen = request_with(&model, "again in the fork");
    assert!(
        seen.contains("charlie-reply-fork") && !seen.contains("bravo-reply-two"),
        "the fork resumed itself: {seen}"
    );
    d.shutdown().await;

    assert_eq!(
        std::fs::read(&parent_file).unwrap(),
        before,
        "the parent's rollout is untouched"
    );
}
