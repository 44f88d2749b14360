//! The agent's own slash commands (`/plan`, `/undo`, `/compact`) offered on `/`, one it
//! does not take explained rather than sent to the model, and `ask_user` with several
//! choices and the user's own words.

use std::collections::BTreeMap;

use serde_json::json;
use weft_protocol::{InteractAction, InteractionResponse};
use weft_testkit::anthropic::when;
use weft_testkit::sink::{self, TestSink};
use weft_testkit::{Script, Turn};

use super::support::{anthropic, driver, run_turn, Dirs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn commands_are_offered_and_one_the_agent_lacks_is_explained_not_sent() {
    let (s, env) = anthropic(Script::new().default_reply(Turn::text_reply("hi")), "auto").await;
    let dirs = Dirs::new();
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "/review the diff", None)).await;
    assert!(r.ok, "{r:?}");
    let names: Vec<&str> = snap.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names, ["plan", "undo", "compact"]);
    // A new session's composer offers them before any turn: the agent's facts.
    let info = weft_kernel::AgentDriver::info(&driver()).await;
    assert_eq!(info.facts.commands, snap.commands);
    assert!(
        snap.text
            .contains("/review is not a command the Weft agent takes"),
        "{}",
        snap.text
    );
    assert!(snap.text.contains("/compact"), "{}", snap.text);
    assert!(
        s.messages_requests().is_empty(),
        "the command went to the model"
    );
    // A path is not a command.
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "/etc/hosts looks odd", None)).await;
    assert!(r.ok && snap.text.contains("hi"), "{}", snap.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compact_leaves_the_model_a_summary_of_the_conversation() {
    let script = Script::new()
        .rule(
            when::user_text_contains("Summarize the conversation so far"),
            Turn::text_reply("weft-summary-42"),
        )
        .default_reply(Turn::text_reply("noted"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let d = driver();
    let (r, _, _) = run_turn(&d, dirs.input(&env, "remember weft-fact-1", None)).await;
    assert!(r.ok, "{r:?}");
    let id = r.session_id.clone();
    let (r, snap, _) = run_turn(&d, dirs.input(&env, "/compact", id.as_deref())).await;
    assert!(r.ok, "{r:?}");
    assert!(snap.text.contains("Compacted"), "{}", snap.text);
    let (r, _, _) = run_turn(&d, dirs.input(&env, "what now", id.as_deref())).await;
    assert!(r.ok, "{r:?}");
    let reqs = s.messages_requests();
    let last = reqs.last().expect("a request").all_text();
    assert!(last.contains("weft-summary-42"), "{last}");
    assert!(!last.contains("weft-fact-1"), "{last}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn ask_user_takes_several_choices_and_the_users_own_words() {
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "q",
            "ask_user",
            json!({"question": "Which checks?", "choices": ["lint", "test", "bench"],
                "multiple": true, "other": true}),
        ))
        .default_reply(Turn::text_reply("ok"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let sink = TestSink::new();
    sink.answer_with(|_| {
        Some(InteractionResponse {
            action: InteractAction::Select,
            value: None,
            answers: BTreeMap::new(),
            selected: BTreeMap::from([("answer".into(), vec!["lint".into(), "bench".into()])]),
            texts: BTreeMap::from([("answer".into(), "and fmt".into())]),
        })
    });
    let (r, _) = sink::run(&driver(), dirs.input(&env, "check it", None), &sink).await;
    assert!(r.ok, "{r:?}");
    let asked = sink.asked.lock().clone();
    let q = &asked[0].questions[0];
    assert!(q.multiple && q.free_text, "{q:?}");
    let result = s.messages_requests()[1].last_tool_result("q").unwrap();
    assert!(
        result.contains("\"lint\", \"bench\"") && result.contains("and fmt"),
        "{result}"
    );
}
