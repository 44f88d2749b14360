//! The pack's verify step: the coding pack runs the workspace's check command once the
//! model is done changing things; a failure goes back to the model, at most twice.

use serde_json::json;
use weft_protocol::ToolStatus;
use weft_testkit::anthropic::when;
use weft_testkit::{AnthropicServer, Script, Turn};

use weft_kernel::DriverResult;
use weft_protocol::UniversalSnapshot;

use super::support::{anthropic, assert_notice, driver, run_turn, Dirs};

/// Runs `prompt` against `script` in a trusted workspace whose check command is `check`.
async fn with_check(
    script: Script,
    check: &str,
    prompt: &str,
) -> (AnthropicServer, Dirs, DriverResult, UniversalSnapshot) {
    let (server, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file(".weft/native.toml", &format!("check = {check:?}\n"));
    let (r, snap, _) = run_turn(&driver(), dirs.trusted_input(&env, prompt)).await;
    (server, dirs, r, snap)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failing_check_goes_back_to_the_model_which_fixes_it() {
    let script = Script::new()
        .turn(Turn::new().tool_use("w1", "write", json!({"path": "a.txt", "content": "x"})))
        .turn(Turn::text_reply("Done."))
        .rule(
            when::user_text_contains("weft-check-missing-ok"),
            Turn::new().tool_use("w2", "write", json!({"path": "ok.txt", "content": "fixed"})),
        )
        .default_reply(Turn::text_reply("Fixed."));
    let check = "test -f ok.txt || { echo weft-check-missing-ok; exit 1; }";
    let (_server, dirs, r, snap) = with_check(script, check, "change it").await;
    assert!(r.ok, "{r:?}");
    let verifies: Vec<_> = snap
        .tool_calls
        .iter()
        .filter(|c| c.name == "verify")
        .collect();
    assert_eq!(verifies.len(), 2, "{:#?}", snap.tool_calls);
    assert_eq!(
        (verifies[0].status, verifies[1].status),
        (ToolStatus::Failed, ToolStatus::Done)
    );
    assert!(dirs.work().join("ok.txt").exists());
    assert!(snap.text.contains("Fixed."));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_check_that_keeps_failing_sends_the_model_back_twice_then_says_so() {
    let script = Script::new()
        .turn(Turn::new().tool_use("w", "write", json!({"path": "a.txt", "content": "x"})))
        .default_reply(Turn::text_reply("I tried."));
    let (server, _dirs, r, snap) =
        with_check(script, "echo never-green; exit 1", "change it").await;
    assert!(r.ok);
    assert_eq!(
        snap.tool_calls
            .iter()
            .filter(|c| c.name == "verify")
            .count(),
        3
    );
    // write, done, feedback 1, feedback 2: four model requests, no more.
    assert_eq!(server.messages_requests().len(), 4);
    assert_notice(&snap, "still fails after 2 rounds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_check_runs_when_nothing_was_changed() {
    let script = Script::new().default_reply(Turn::text_reply("Just talk."));
    let (_server, _dirs, r, snap) = with_check(script, "exit 1", "hello").await;
    assert!(r.ok && snap.tool_calls.is_empty());
}
