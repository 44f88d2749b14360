//! A fork opened in codex's own TUI (the library's "Fork" of a Codex session, then the
//! terminal pane): the terminal runs `codex fork PARENT`, so the first prompt typed
//! there carries the parent's conversation; the snapshot learns the fork's own thread
//! and shows only what was new in the fork; the parent's thread is left as it was. A
//! fork at a turn (which `codex fork` cannot make) is made by app-server's
//! `thread/fork` before the terminal opens, and the terminal resumes it.

use std::sync::Arc;
use std::time::Duration;

use weft_codex::{CodexDriver, Config};
use weft_kernel::driver::AgentDriver;
use weft_kernel::ports::{MemoryStore, SessionStore};
use weft_kernel::Loom;
use weft_protocol::{ForkOrigin, OpenTerminalRequest, Phase, PromptRequest, SessionRecord};
use weft_pty_rail_tests::*;
use weft_testkit::openai::{when, Script, Turn};
use weft_testkit::ResponsesServer;

/// The real codex is there (under CI it must be).
fn has_codex() -> bool {
    require(
        weft_codex::spawn::find_binary(&Config::from_env(), &|n| std::env::var(n).ok()),
        "codex",
    )
    .is_some()
}

/// A kernel over the real codex driver against a scripted Responses server, with a
/// memory store the test writes fork records into.
struct Rig {
    server: ResponsesServer,
    home: tempfile::TempDir,
    _work: tempfile::TempDir,
    workdir: std::path::PathBuf,
    driver: Arc<CodexDriver>,
    store: Arc<MemoryStore>,
    loom: Arc<Loom>,
}

impl Rig {
    async fn start(script: Script) -> Rig {
        let server = ResponsesServer::start(script).await.unwrap();
        let home = tempfile::tempdir().unwrap();
        let work = tempfile::tempdir().unwrap();
        let workdir = work.path().canonicalize().unwrap();
        let env = super::codex::codex_env(home.path(), &server);
        let driver = Arc::new(CodexDriver::with_config(Config {
            stop_grace: Duration::from_secs(5),
            ..Config::default()
        }));
        let store = Arc::new(MemoryStore::default());
        let loom = Loom::builder(home.path().join(".weft"))
            .driver(driver.clone())
            .accounts(Arc::new(FixedEnv(env)))
            .store(store.clone())
            .open()
            .unwrap();
        Rig {
            server,
            home,
            _work: work,
            workdir,
            driver,
            store,
            loom,
        }
    }
}

#[tokio::test]
async fn a_fork_opened_in_the_codex_terminal_forks_the_thread_there() {
    if !has_codex() {
        return;
    }
    let script = Script::new()
        .rule(
            when::user_text_contains("FORK TERMINAL"),
            Turn::text_reply("FORK-TERMINAL-REPLY"),
        )
        .rule(
            when::user_text_contains("PARENT AGAIN"),
            Turn::text_reply("PARENT-AGAIN-REPLY"),
        )
        .rule(
            when::user_text_contains("PARENT remember"),
            Turn::text_reply("PARENT-REPLY papaya"),
        );
    let Rig {
        server,
        home: _home,
        _work,
        workdir,
        driver,
        store,
        loom,
    } = Rig::start(script).await;

    // The parent: one structured turn on its own thread.
    let parent = loom
        .prompt(PromptRequest {
            agent: Some("codex".into()),
            workdir: Some(workdir.display().to_string()),
            prompt: "PARENT remember the fruit".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let parent_key = parent.session_key.clone();
    let snap = wait_snapshot(&loom, &parent_key, "the parent's turn", |s| {
        s.task_id.as_deref() == Some(parent.task_id.as_str()) && s.phase == Phase::Done
    })
    .await;
    assert_eq!(snap.text, "PARENT-REPLY papaya", "{snap:#?}");
    let parent_thread = snap.session_id.clone().unwrap();

    // The fork as the library records it: no thread of its own yet, forked at the end.
    let fork_key = "codex:fork-in-the-terminal".to_string();
    store
        .upsert_session(&SessionRecord {
            session_key: fork_key.clone(),
            agent: "codex".into(),
            session_id: None,
            workdir: workdir.display().to_string(),
            fork: Some(ForkOrigin {
                parent_key: parent_key.clone(),
                parent_id: parent_thread.clone(),
                at: None,
                turns: 1,
                session_id: None,
            }),
            ..Default::default()
        })
        .unwrap();

    let opened = loom
        .open_terminal(OpenTerminalRequest {
            session_key: Some(fork_key.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(
        opened.spec.args[..2],
        ["fork".to_string(), parent_thread.clone()]
    );
    let bridge = spawn(&opened).unwrap();
    wait_screen(&bridge, "the forked conversation", |s| {
        s.contains("PARENT-REPLY papaya") && s.contains("for shortcuts")
    })
    .await;
    submit(&bridge, "FORK TERMINAL which fruit?").await;
    wait_screen(&bridge, "the fork's reply", |s| {
        s.contains("FORK-TERMINAL-REPLY")
    })
    .await;
    let asked = server
        .responses_requests()
        .into_iter()
        .rev()
        // The TUI also asks for a title, quoting the prompt: not that request.
        .find(|r| r.last_user_text().starts_with("FORK TERMINAL"))
        .unwrap();
    assert!(asked.all_text().contains("PARENT-REPLY papaya"));

    // The fork's thread is its own, and its snapshot holds only what the fork added.
    let snap = wait_snapshot(&loom, &fork_key, "the fork's terminal turn", |s| {
        s.text.contains("FORK-TERMINAL-REPLY") && s.session_id.is_some()
    })
    .await;
    let fork_thread = snap.session_id.clone().unwrap();
    assert_ne!(fork_thread, parent_thread);
    assert!(!snap.text.contains("PARENT-REPLY"), "{snap:#?}");
    drop(bridge);
    loom.close_terminal(&fork_key).await.unwrap();

    // The parent goes on without the fork's turn.
    let again = loom
        .prompt(PromptRequest {
            session_key: Some(parent_key.clone()),
            prompt: "PARENT AGAIN".into(),
            ..Default::default()
        })
        .await
        .unwrap();
    let snap = wait_snapshot(&loom, &parent_key, "the parent's second turn", |s| {
        s.task_id.as_deref() == Some(again.task_id.as_str()) && s.phase == Phase::Done
    })
    .await;
    assert_eq!(snap.session_id.as_deref(), Some(parent_thread.as_str()));
    let asked = server
        .responses_requests()
        .into_iter()
        .rev()
        .find(|r| r.last_user_text().starts_with("PARENT AGAIN"))
        .unwrap();
    assert!(asked.all_text().contains("PARENT-REPLY papaya"));
    assert!(!asked.all_text().contains("FORK TERMINAL"));

    loom.shutdown().await;
    assert!(driver.live_pids().is_empty());
}

/// The turn ids of codex thread `thread`'s rollout under `home`, in order.
fn turn_ids(home: &std::path::Path, thread: &str) -> Vec<String> {
    fn walk(dir: &std::path::Path, thread: &str) -> Option<std::path::PathBuf> {
        for e in std::fs::read_dir(dir).ok()?.flatten() {
            let p = e.path();
            if p.is_dir() {
                if let Some(f) = walk(&p, thread) {
                    return Some(f);
                }
            } else if p.to_string_lossy().ends_with(&format!("{thread}.jsonl")) {
                return Some(p);
            }
        }
        None
    }
    let file =
        walk(&home.join("sessions"), thread).unwrap_or_else(|| panic!("no rollout of {thread}"));
    let mut ids: Vec<String> = Vec::new();
    for line in std::fs::read_to_string(&file).unwrap().lines() {
        let v: serde_json::Value = serde_json::from_str(line).unwrap_or_default();
        if let Some(t) = v["payload"]["turn_id"].as_str() {
            if !ids.iter().any(|i| i == t) {
                ids.push(t.to_string());
            }
        }
    }
    ids
}

#[tokio::test]
async fn a_fork_at_a_turn_opens_in_the_codex_terminal_with_that_turn_and_none_after() {
    if !has_codex() {
        return;
    }
    let script = Script::new()
        .rule(
            when::user_text_contains("FORK AT ONE"),
            Turn::text_reply("FORK-AT-ONE-REPLY"),
        )
        .rule(
            when::user_text_contains("SECOND turn"),
            Turn::text_reply("SECOND-REPLY mango"),
        )
        .rule(
            when::user_text_contains("FIRST turn"),
            Turn::text_reply("FIRST-REPLY guava"),
        );
    let Rig {
        server,
        home,
        _work,
        workdir,
        driver,
        store,
        loom,
    } = Rig::start(script).await;

    // The parent: two structured turns on its own thread.
    let mut parent_key = None;
    let mut parent_thread = None;
    for prompt in ["FIRST turn: a fruit", "SECOND turn: another"] {
        let accepted = loom
            .prompt(PromptRequest {
                agent: Some("codex".into()),
                session_key: parent_key.clone(),
                workdir: Some(workdir.display().to_string()),
                prompt: prompt.into(),
                ..Default::default()
            })
            .await
            .unwrap();
        let key = accepted.session_key.clone();
        let snap = wait_snapshot(&loom, &key, "a parent turn", |s| {
            s.task_id.as_deref() == Some(accepted.task_id.as_str()) && s.phase == Phase::Done
        })
        .await;
        parent_thread = snap.session_id;
        parent_key = Some(key);
    }
    let parent_key = parent_key.unwrap();
    let parent_thread = parent_thread.unwrap();
    // Its idle app-server closes, so the rollout is all on disk.
    driver.close_session(&parent_key).await;
    let turns = turn_ids(home.path(), &parent_thread);
    assert_eq!(turns.len(), 2, "{turns:?}");

    // The fork as the library records it: at turn 1, no thread of its own yet.
    let fork_key = "codex:fork-at-a-turn".to_string();
    store
        .upsert_session(&SessionRecord {
            session_key: fork_key.clone(),
            agent: "codex".into(),
            session_id: None,
            workdir: workdir.display().to_string(),
            fork: Some(ForkOrigin {
                parent_key: parent_key.clone(),
                parent_id: parent_thread.clone(),
                at: Some(turns[0].clone()),
                turns: 1,
                session_id: None,
            }),
            ..Default::default()
        })
        .unwrap();

    let opened = loom
        .open_terminal(OpenTerminalRequest {
            session_key: Some(fork_key.clone()),
            ..Default::default()
        })
        .await
        .unwrap();
    assert_eq!(opened.spec.args[0], "resume", "{:?}", opened.spec.args);
    let fork_thread = opened.spec.args[1].clone();
    assert_ne!(fork_thread, parent_thread);
    // The record names the fork's own thread at once, for the structured rail after.
    let record = store.get_session(&fork_key).unwrap().unwrap();
    assert_eq!(record.session_id.as_deref(), Some(fork_thread.as_str()));
    let bridge = spawn(&opened).unwrap();
    wait_screen(&bridge, "the fork's conversation", |s| {
        s.contains("FIRST-REPLY guava") && s.contains("for shortcuts")
    })
    .await;
    assert!(!bridge.screen_text().contains("SECOND-REPLY"));
    submit(&bridge, "FORK AT ONE which fruit?").await;
    wait_screen(&bridge, "the fork's reply", |s| {
        s.contains("FORK-AT-ONE-REPLY")
    })
    .await;
    let asked = server
        .responses_requests()
        .into_iter()
        .rev()
        .find(|r| r.last_user_text().starts_with("FORK AT ONE"))
        .unwrap();
    assert!(
        asked.all_text().contains("FIRST-REPLY guava"),
        "{}",
        asked.all_text()
    );
    assert!(
        !asked.all_text().contains("SECOND-REPLY"),
        "{}",
        asked.all_text()
    );
    drop(bridge);
    loom.close_terminal(&fork_key).await.unwrap();
    // The parent's thread kept both its turns.
    assert_eq!(turn_ids(home.path(), &parent_thread), turns);

    loom.shutdown().await;
    assert!(driver.live_pids().is_empty());
}
