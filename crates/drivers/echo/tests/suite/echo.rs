//! Echo honours stop and steer, asks when told to, and resumes by session id across a
//! restart of the whole kernel.

use std::sync::Arc;
use std::time::Duration;

use weft_echo::EchoDriver;
use weft_kernel::Loom;
use weft_protocol::{
    permission, InteractRequest, InteractionKind, InteractionResponse, Phase, PromptRequest,
    SteerOutcome, ToolStatus, UniversalSnapshot,
};

struct Setup {
    state: tempfile::TempDir,
    work: tempfile::TempDir,
}

impl Setup {
    fn new() -> Self {
        Self {
            state: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
            work: tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
        }
    }

    fn loom(&self) -> Arc<Loom> {
        Loom::builder(self.state.path())
            .driver(Arc::new(
                EchoDriver::with_delay(Duration::from_millis(2)).state_dir(self.state.path()),
            ))
            .store(
                weft_store_port::open(&self.state.path().join("weft.db"))
                    .unwrap_or_else(|e| panic!("{e}")),
            )
            .open()
            .unwrap_or_else(|e| panic!("{e}"))
    }

    fn prompt(&self, text: &str, key: Option<&str>) -> PromptRequest {
        PromptRequest {
            prompt: text.into(),
            session_key: key.map(Into::into),
            workdir: Some(self.work.path().to_string_lossy().into_owned()),
            ..Default::default()
        }
    }
}

async fn wait(
    loom: &Loom,
    key: &str,
    what: &str,
    pred: impl Fn(&UniversalSnapshot) -> bool,
) -> UniversalSnapshot {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    loop {
        let s = loom
            .get_snapshot(key)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
            .snapshot;
        if pred(&s) {
            return s;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out waiting for {what}: {s:#?}"
        );
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
}

fn done(task: &str) -> impl Fn(&UniversalSnapshot) -> bool + '_ {
    move |s| s.task_id.as_deref() == Some(task) && s.phase == Phase::Done
}

#[tokio::test]
async fn a_turn_fills_every_part_of_the_snapshot() {
    let setup = Setup::new();
    let loom = setup.loom();
    let t = loom
        .prompt(setup.prompt("hello echo", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &t.session_key, "done", done(&t.task_id)).await;
    assert_eq!(s.text, "Echo: hello echo");
    assert!(s.reasoning.contains("turn 1"));
    assert_eq!(
        s.tool_calls.iter().map(|c| c.status).collect::<Vec<_>>(),
        [ToolStatus::Done, ToolStatus::Failed]
    );
    assert_eq!(s.plan.map(|p| p.steps.len()), Some(3));
    assert!(s.usage.is_some_and(|u| u.context_percent.is_some()));
    assert_eq!(s.artifacts.len(), 1);
    assert_eq!(s.model.as_deref(), Some("echo-1"));
    assert!(s.session_id.is_some());
}

#[tokio::test]
async fn stop_interrupts_a_slow_turn_and_the_next_prompt_works() {
    let setup = Setup::new();
    let loom = setup.loom();
    let t = loom
        .prompt(setup.prompt("slow please", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = t.session_key.clone();
    wait(&loom, &key, "streaming text", |s| s.text.len() > 10).await;
    let next = loom
        .prompt(setup.prompt("after", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    loom.stop(&key).await.unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &key, "next done", done(&next.task_id)).await;
    assert!(s.text.starts_with("Echo: after"));
    let history = loom
        .get_history(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(history[0].incomplete);
    assert!(history[0].text.starts_with("Echo: slow"), "{history:#?}");
    assert!(
        history[0].text.len() < "Echo: slow please ".len() * 8,
        "stopped before the end"
    );
}

#[tokio::test]
async fn steer_reaches_the_running_turn() {
    let setup = Setup::new();
    let loom = setup.loom();
    let t = loom
        .prompt(setup.prompt("slow one", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = t.session_key.clone();
    wait(&loom, &key, "streaming", |s| !s.text.is_empty()).await;
    let outcome = loom
        .steer(&key, "mention cats".into())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(outcome, SteerOutcome::Injected);
    let s = wait(&loom, &key, "done", done(&t.task_id)).await;
    assert!(s.text.contains("Steered: \"mention cats\""), "{}", s.text);
}

#[tokio::test]
async fn permission_allow_then_deny_and_a_question() {
    let setup = Setup::new();
    let loom = setup.loom();
    let note = setup.work.path().join(".weft/echo-note.md");
    let mut key: Option<String> = None;
    for (answer, expect) in [
        (permission::DENY, "You denied"),
        (permission::ALLOW, "I wrote the note"),
    ] {
        let t = loom
            .prompt(setup.prompt("permission please", key.as_deref()))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        key = Some(t.session_key.clone());
        let s = wait(&loom, &t.session_key, "asked", |s| {
            !s.interactions.is_empty()
        })
        .await;
        let ask = &s.interactions[0];
        assert_eq!(ask.kind, InteractionKind::Permission);
        assert_eq!(ask.tool_name.as_deref(), Some("write_note"));
        assert_eq!(ask.questions[0].choices.len(), 3);
        loom.interact(InteractRequest {
            session_key: t.session_key.clone(),
            prompt_id: ask.prompt_id.clone(),
            response: InteractionResponse::select(answer),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let s = wait(&loom, &t.session_key, "done", done(&t.task_id)).await;
        assert!(s.text.contains(expect), "{}", s.text);
        assert_eq!(note.exists(), answer == permission::ALLOW);
    }
    let key = key.unwrap_or_default();
    let t = loom
        .prompt(setup.prompt("a question", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &key, "asked", |s| !s.interactions.is_empty()).await;
    assert_eq!(s.interactions[0].kind, InteractionKind::UserInput);
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: s.interactions[0].prompt_id.clone(),
        response: InteractionResponse::select("blue"),
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &key, "done", done(&t.task_id)).await;
    assert!(s.text.contains("You picked blue"));
}

#[tokio::test]
async fn allow_for_session_is_remembered() {
    let setup = Setup::new();
    let loom = setup.loom();
    let t = loom
        .prompt(setup.prompt("permission", None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let key = t.session_key.clone();
    let s = wait(&loom, &key, "asked", |s| !s.interactions.is_empty()).await;
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: s.interactions[0].prompt_id.clone(),
        response: InteractionResponse::select(permission::ALLOW_SESSION),
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    wait(&loom, &key, "done", done(&t.task_id)).await;
    let t2 = loom
        .prompt(setup.prompt("permission again", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &key, "done without asking", done(&t2.task_id)).await;
    assert!(s.text.contains("I wrote the note"));
}

#[test]
fn resume_by_session_id_survives_a_restart() {
    let setup = Setup::new();
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    let (key, first_id) = rt.block_on(async {
        let loom = setup.loom();
        let t = loom
            .prompt(setup.prompt("remember me", None))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let s = wait(&loom, &t.session_key, "done", done(&t.task_id)).await;
        (t.session_key, s.session_id)
    });
    drop(rt);
    let rt = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    rt.block_on(async {
        let loom = setup.loom();
        let t = loom
            .prompt(setup.prompt("who am I", Some(&key)))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        let s = wait(&loom, &key, "done", done(&t.task_id)).await;
        assert_eq!(s.session_id, first_id);
        assert!(
            s.text.contains("turn 2; you first said \"remember me\""),
            "{}",
            s.text
        );
        // Echo's own session file holds both turns, run in the work folder.
        let id = first_id.clone().unwrap_or_default();
        let file = setup.state.path().join("echo").join(format!("{id}.jsonl"));
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
        let turns: Vec<serde_json::Value> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}")))
            .collect();
        assert_eq!(turns.len(), 2);
        assert_eq!(turns[0]["prompt"], "remember me");
        assert!(turns
            .iter()
            .all(|t| t["workdir"].as_str() == setup.work.path().to_str()));
    });
}

#[tokio::test]
async fn while_the_terminal_is_open_prompts_queue_and_run_after_it_closes() {
    let setup = Setup::new();
    let loom = setup.loom();
    let opened = loom
        .open_terminal(weft_protocol::OpenTerminalRequest {
            workdir: Some(setup.work.path().to_string_lossy().into_owned()),
            ..Default::default()
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(opened.spec.program, std::path::PathBuf::from("/bin/sh"));
    assert_eq!(
        opened.spec.cwd,
        std::fs::canonicalize(setup.work.path()).unwrap_or_default()
    );
    let key = opened.session_key.clone();
    wait(&loom, &key, "terminal turn", |s| {
        s.phase == Phase::Streaming
    })
    .await;

    let queued = loom
        .prompt(setup.prompt("after the terminal", Some(&key)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &key, "queued", |s| s.queued.len() == 1).await;
    assert!(s
        .notices
        .iter()
        .any(|n| n.contains("prompts queue until it closes")));
    let stop = loom.stop(&key).await;
    assert_eq!(
        stop.err().map(|e| e.code()),
        Some(weft_protocol::ErrorCode::Busy)
    );
    let again = loom
        .open_terminal(weft_protocol::OpenTerminalRequest {
            session_key: Some(key.clone()),
            ..Default::default()
        })
        .await;
    assert_eq!(
        again.err().map(|e| e.code()),
        Some(weft_protocol::ErrorCode::Busy)
    );

    loom.close_terminal(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let s = wait(&loom, &key, "queued prompt done", done(&queued.task_id)).await;
    assert_eq!(s.text, "Echo: after the terminal");
    let history = loom
        .get_history(&key)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(history.len(), 2);
    assert!(
        !history[0].incomplete,
        "closing the terminal ends its turn normally"
    );
    assert!(
        loom.close_terminal(&key).await.is_err(),
        "nothing open any more"
    );
}
