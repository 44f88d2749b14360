//! The real CLI through the kernel's LoomIO verbs (prompt, interact, steer, stop,
//! subscribe), as every surface drives it.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use weft_claude::ClaudeDriver;
use weft_kernel::ports::ModelResolver;
use weft_kernel::{AgentTurnInput, Loom, LoomIO};
use weft_protocol::{
    permission, InteractRequest, InteractionKind, InteractionResponse, Phase, PromptRequest,
    SteerOutcome, ToolStatus, UniversalSnapshot,
};
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::*;

/// Gives every claude spawn the isolated test environment.
struct TestEnv(Vec<(String, String)>);

impl ModelResolver for TestEnv {
    fn resolve(&self, _input: &AgentTurnInput) -> Vec<(String, String)> {
        self.0.clone()
    }
}

/// A kernel over the SQLite store in `state`, with only the Claude driver.
fn open(env: &ClaudeEnv, state: &std::path::Path) -> Arc<Loom> {
    Loom::builder(state)
        .driver(Arc::new(ClaudeDriver::with_config(fast_config())))
        .model_resolver(Arc::new(TestEnv(env.env())))
        .default_agent("claude")
        .open()
        .unwrap()
}

async fn prompt(loom: &Loom, env: &ClaudeEnv, session: Option<&str>, text: &str) -> String {
    loom.prompt(PromptRequest {
        prompt: text.into(),
        agent: Some("claude".into()),
        session_key: session.map(String::from),
        workdir: Some(env.workdir().display().to_string()),
        model: None,
        effort: None,
        attachments: Vec::new(),
    })
    .await
    .unwrap()
    .session_key
}

/// Polls the session's snapshot until `pred`.
async fn until(
    loom: &Loom,
    key: &str,
    timeout: Duration,
    pred: impl Fn(&UniversalSnapshot) -> bool,
) -> UniversalSnapshot {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let snap = loom.get_snapshot(key).await.unwrap().snapshot;
        if pred(&snap) {
            return snap;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "timed out; last snapshot: {snap:#?}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

async fn done(loom: &Loom, key: &str, task_prompt: &str) -> UniversalSnapshot {
    until(loom, key, Duration::from_secs(90), |s| {
        s.phase == Phase::Done && s.prompt == task_prompt
    })
    .await
}

#[tokio::test]
async fn text_tools_permissions_and_questions_through_loomio() {
    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .rule(
            when::user_text_contains("say hello"),
            Turn::new().text("Hello via Loom.").usage(500, 20),
        )
        .rule(
            when::user_text_contains("run bash"),
            Turn::new().tool_use(
                "toolu_lb",
                "Bash",
                json!({"command": "echo loom-bash > loom.txt && cat loom.txt", "description": "write loom.txt"}),
            ),
        )
        .rule(when::tool_result_for("toolu_lb"), Turn::text_reply("bash done"))
        .rule(
            when::user_text_contains("risky"),
            Turn::new().tool_use(
                "toolu_lr",
                "Bash",
                json!({"command": "touch risky.txt", "description": "touch risky"}),
            ),
        )
        .rule(when::tool_result_for("toolu_lr"), Turn::text_reply("not done, as you wish"))
        .rule(
            when::user_text_contains("ask me"),
            Turn::new().tool_use(
                "toolu_lq",
                "AskUserQuestion",
                json!({"questions": [{"question": "Which size?", "header": "Size",
                    "options": [{"label": "Small", "description": "s"}, {"label": "Large", "description": "l"}],
                    "multiSelect": false}]}),
            ),
        )
        .rule(when::tool_result_for("toolu_lq"), Turn::text_reply("size noted"));
    let env = ClaudeEnv::start(script).await;
    let state = tempfile::tempdir().unwrap();
    let loom = open(&env, state.path());

    let key = prompt(&loom, &env, None, "say hello").await;
    let snap = done(&loom, &key, "say hello").await;
    assert_eq!(snap.text, "Hello via Loom.");
    assert!(snap.error.is_none() && !snap.incomplete);
    assert!(snap.session_id.is_some());
    assert_eq!(snap.usage.as_ref().unwrap().output_tokens, Some(20));

    // A permission answered allow: the command really runs.
    prompt(&loom, &env, Some(&key), "run bash").await;
    let pending = until(&loom, &key, Duration::from_secs(60), |s| {
        s.prompt == "run bash" && !s.interactions.is_empty()
    })
    .await;
    let ask = &pending.interactions[0];
    assert_eq!(ask.kind, InteractionKind::Permission);
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: ask.prompt_id.clone(),
        response: InteractionResponse::select(permission::ALLOW),
    })
    .await
    .unwrap();
    let snap = done(&loom, &key, "run bash").await;
    assert_eq!(snap.text, "bash done", "{snap:#?}");
    assert_eq!(
        std::fs::read_to_string(env.workdir().join("loom.txt"))
            .unwrap()
            .trim(),
        "loom-bash"
    );
    assert!(
        snap.activity.contains("Bash write loom.txt"),
        "{}",
        snap.activity
    );

    // Denied.
    prompt(&loom, &env, Some(&key), "risky").await;
    let pending = until(&loom, &key, Duration::from_secs(60), |s| {
        s.prompt == "risky" && !s.interactions.is_empty()
    })
    .await;
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: pending.interactions[0].prompt_id.clone(),
        response: InteractionResponse::select(permission::DENY),
    })
    .await
    .unwrap();
    let snap = done(&loom, &key, "risky").await;
    assert!(!env.workdir().join("risky.txt").exists());
    let call = snap.tool_calls.iter().find(|c| c.id == "toolu_lr").unwrap();
    assert_eq!(call.status, ToolStatus::Failed);
    assert_eq!(snap.text, "not done, as you wish");

    // A question.
    prompt(&loom, &env, Some(&key), "ask me").await;
    let pending = until(&loom, &key, Duration::from_secs(60), |s| {
        s.prompt == "ask me" && !s.interactions.is_empty()
    })
    .await;
    assert_eq!(pending.interactions[0].kind, InteractionKind::UserInput);
    loom.interact(InteractRequest {
        session_key: key.clone(),
        prompt_id: pending.interactions[0].prompt_id.clone(),
        response: InteractionResponse::select("Large"),
    })
    .await
    .unwrap();
    let snap = done(&loom, &key, "ask me").await;
    assert_eq!(snap.text, "size noted");
    let last = env.server.messages_requests().pop().unwrap();
    assert!(last
        .last_tool_result("toolu_lq")
        .unwrap()
        .contains("\"Which size?\"=\"Large\""));
    loom.shutdown().await;
}

#[tokio::test]
async fn stop_steer_and_resume_through_loomio() {
    let Some(_) = claude_bin() else { return };
    let words: Vec<String> = (0..80).map(|i| format!("w{i} ")).collect();
    let chunks: Vec<&str> = words.iter().map(String::as_str).collect();
    // Rules are tried in order: the latest prompt's own words first, then the steer
    // (which stays in the history of later requests).
    let script = Script::new()
        .rule(
            when::user_text_contains("resumed?"),
            Turn::text_reply("yes, resumed"),
        )
        .rule(
            when::user_text_contains("after stop"),
            Turn::text_reply("fine after stop"),
        )
        .rule(
            when::user_text_contains("stream long"),
            Turn::new()
                .delta_delay(Duration::from_millis(150))
                .text_chunks(&chunks),
        )
        .rule(
            when::user_text_contains("slow tool"),
            Turn::new().tool_use(
                "toolu_ls",
                "Bash",
                json!({"command": "sleep 3; echo slept", "description": "slow sleep"}),
            ),
        )
        .rule(
            when::any_text_contains("STEER-LOOM"),
            Turn::text_reply("steer handled"),
        );
    let env = ClaudeEnv::start(script).await;
    let state = tempfile::tempdir().unwrap();
    let loom = open(&env, state.path());

    // Stop during streaming; the next prompt works.
    let key = prompt(&loom, &env, None, "stream long").await;
    until(&loom, &key, Duration::from_secs(60), |s| {
        s.text.contains("w2 ")
    })
    .await;
    loom.stop(&key).await.unwrap();
    let snap = done(&loom, &key, "stream long").await;
    assert!(snap.incomplete);
    assert!(!snap.text.contains("w79"));
    prompt(&loom, &env, Some(&key), "after stop").await;
    let snap = done(&loom, &key, "after stop").await;
    assert_eq!(snap.text, "fine after stop");
    assert!(!snap.incomplete);

    // Steer during a running tool (`sleep` may or may not need a permission).
    prompt(&loom, &env, Some(&key), "slow tool").await;
    let snap = until(&loom, &key, Duration::from_secs(60), |s| {
        s.prompt == "slow tool"
            && (!s.interactions.is_empty() || s.tool_calls.iter().any(|c| c.id == "toolu_ls"))
    })
    .await;
    if let Some(ask) = snap.interactions.first() {
        loom.interact(InteractRequest {
            session_key: key.clone(),
            prompt_id: ask.prompt_id.clone(),
            response: InteractionResponse::select(permission::ALLOW),
        })
        .await
        .unwrap();
    }
    until(&loom, &key, Duration::from_secs(30), |s| {
        s.tool_calls.iter().any(|c| c.id == "toolu_ls")
    })
    .await;
    let outcome = loom
        .steer(&key, "STEER-LOOM also this".into())
        .await
        .unwrap();
    assert_eq!(outcome, SteerOutcome::Injected);
    let snap = done(&loom, &key, "slow tool").await;
    assert!(snap.text.ends_with("steer handled"), "{snap:#?}");
    assert!(
        snap.notices.iter().any(|n| n.contains("injected")),
        "{:?}",
        snap.notices
    );
    let sid = snap.session_id.clone().unwrap();
    loom.shutdown().await;
    drop(loom);

    // A new kernel over the same state: the session resumes in a new process, and the
    // model sees the earlier conversation.
    let loom = open(&env, state.path());
    prompt(&loom, &env, Some(&key), "resumed?").await;
    let snap = done(&loom, &key, "resumed?").await;
    assert_eq!(snap.text, "yes, resumed");
    assert_eq!(snap.session_id.as_deref(), Some(sid.as_str()));
    let last = env.server.messages_requests().pop().unwrap();
    let all = last.all_text();
    assert!(
        all.contains("after stop") && all.contains("fine after stop"),
        "{all}"
    );
    loom.shutdown().await;
}
