//! The guard chain as a whole: no input gets past it, and the context fuse (step 2)
//! refuses a call repeated too often in a row and caps every result.

use serde_json::{json, Value};
use weft_protocol::{InteractionKind, InteractionResponse, ToolStatus};
use weft_testkit::sink::{self, TestSink};
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{anthropic, delegating, driver, Dirs};

/// The standard chain on its own, for stacking steps a driver run cannot line up.
mod chain {
    use std::sync::atomic::{AtomicBool, Ordering};

    use serde_json::json;
    use tokio_util::sync::CancellationToken;
    use weft_kernel::DriverContext;
    use weft_native::guard::{Call, GuardChain, GuardCx, SessionFlags, Verdict};
    use weft_native::pack::{self, PermissionMode};
    use weft_native::tools::Workspace;
    use weft_testkit::sink::TestSink;

    /// Plan mode comes on only at a session's start, so a driver run never has a call
    /// that both plan mode and the fuse refuse; here the fuse has seen two identical
    /// calls when plan mode turns on for the third.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn plan_mode_and_the_fuse_both_refusing_plan_mode_answers() {
        let dir = tempfile::tempdir().unwrap();
        let workspace = Workspace::new(dir.path());
        let pack = pack::builtin("coding").unwrap();
        let tool = pack
            .tools()
            .into_iter()
            .find(|t| t.name() == "write")
            .unwrap();
        let flags = SessionFlags {
            plan_mode: AtomicBool::new(false),
            permission: PermissionMode::Auto,
            allowed: Default::default(),
            shell: Default::default(),
            workspace_trusted: false,
        };
        let ctx = DriverContext::new(CancellationToken::new(), TestSink::new());
        let cx = GuardCx {
            workspace: &workspace,
            pack: pack.as_ref(),
            flags: &flags,
            ctx: &ctx,
            env: &[],
        };
        let input = json!({"path": "a.txt", "content": "x"});
        let call = Call {
            id: "w",
            name: "write",
            input: &input,
            tool: tool.as_ref(),
        };
        let chain = GuardChain::standard();
        assert_eq!(chain.check(&call, &cx).await, Verdict::Allow);
        assert_eq!(chain.check(&call, &cx).await, Verdict::Allow);
        flags.plan_mode.store(true, Ordering::Relaxed);
        let Verdict::Deny(third) = chain.check(&call, &cx).await else {
            panic!("the third call was allowed");
        };
        assert!(third.starts_with("refused by plan mode:"), "{third}");
        // The fuse never saw the third: the next one is its third.
        flags.plan_mode.store(false, Ordering::Relaxed);
        let Verdict::Deny(fourth) = chain.check(&call, &cx).await else {
            panic!("the fourth call was allowed");
        };
        assert!(fourth.starts_with("refused by context fuse:"), "{fourth}");
        // Another call ends the streak.
        let other = json!({"path": "b.txt", "content": "x"});
        let call = Call {
            input: &other,
            ..call
        };
        assert_eq!(chain.check(&call, &cx).await, Verdict::Allow);
    }
}

async fn scripted(turns: Vec<Turn>, mode: &str) -> (AnthropicServer, Vec<(String, String)>) {
    let mut script = Script::new();
    for t in turns {
        script = script.turn(t);
    }
    let (s, env) = anthropic(script.default_reply(Turn::text_reply("done")), mode).await;
    (s, env)
}

/// The result the model was sent for `id`, from whichever request carried it.
fn result_for(s: &AnthropicServer, id: &str) -> String {
    s.messages_requests()
        .iter()
        .find_map(|r| r.last_tool_result(id))
        .unwrap_or_default()
}

/// `_raw` is the parsers' marker for arguments that were not JSON; a model that sends
/// it itself, of any type, must not get its call past plan mode, rules or the user.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_key_of_any_type_gets_no_call_past_plan_mode() {
    let (s, env) = scripted(
        vec![Turn::new()
            .tool_use(
                "b",
                "bash",
                json!({"command": "touch planned.txt", "_raw": null}),
            )
            .tool_use(
                "w",
                "write",
                json!({"path": "written.txt", "content": "x", "_raw": 0}),
            )
            .tool_use(
                "e",
                "edit",
                json!({"path": "keep.txt", "old_text": "keep", "new_text": "gone", "_raw": {}}),
            )],
        "trusted",
    )
    .await;
    let dirs = Dirs::with_file("keep.txt", "keep\n");
    let sink = TestSink::new();
    sink.answer_with(|_| Some(InteractionResponse::cancel()));
    let (r, snap) = sink::run(&driver(), dirs.input(&env, "/plan go", None), &sink).await;
    assert!(r.ok, "{r:?}");
    assert!(!dirs.work().join("planned.txt").exists(), "bash ran");
    assert!(!dirs.work().join("written.txt").exists(), "write ran");
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("keep.txt")).unwrap(),
        "keep\n",
        "edit ran"
    );
    for id in ["b", "w", "e"] {
        let result = result_for(&s, id);
        assert!(result.contains("not a JSON object"), "{id}: {result}");
        let call = snap.tool_calls.iter().find(|c| c.id == id).unwrap();
        assert_eq!(call.status, ToolStatus::Failed, "{id}");
    }
    assert!(
        sink.asked
            .lock()
            .iter()
            .all(|i| i.kind != InteractionKind::Permission),
        "a call that cannot run is not put to the user"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_raw_key_gets_no_command_past_a_deny_rule() {
    let (s, env) = scripted(
        vec![Turn::new().tool_use(
            "d",
            "bash",
            json!({"command": "touch denied.txt", "_raw": false}),
        )],
        "trusted",
    )
    .await;
    let dirs = Dirs::with_file(".weft/permissions.json", r#"{"deny": ["touch"]}"#);
    let (r, _) = sink::run(&driver(), dirs.input(&env, "go", None), &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    assert!(!dirs.work().join("denied.txt").exists(), "bash ran");
    let result = result_for(&s, "d");
    assert!(result.contains("not a JSON object"), "{result}");
    assert_eq!(
        s.messages_requests()[1].tool_result_is_error("d"),
        Some(true)
    );
}

fn bash(id: &str, input: Value) -> Turn {
    Turn::new().tool_use(id, "bash", input)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_fuse_refuses_the_third_identical_call_in_a_row_and_a_changed_one_runs() {
    let same = json!({"command": "echo x >> log.txt", "timeout": 30});
    // The same arguments in another key order are the same call.
    let reordered = json!({"timeout": 30, "command": "echo x >> log.txt"});
    let (s, env) = scripted(
        vec![
            bash("t1", same.clone()),
            bash("t2", reordered),
            bash("t3", same.clone()),
            bash("t4", json!({"command": "echo y >> log.txt", "timeout": 30})),
            bash("t5", same),
        ],
        "trusted",
    )
    .await;
    let dirs = Dirs::new();
    let (r, snap) = sink::run(&driver(), dirs.input(&env, "go", None), &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    let third = result_for(&s, "t3");
    assert!(
        third.starts_with("refused by context fuse:") && third.contains("Change your approach"),
        "{third}"
    );
    let shown = snap.tool_calls.iter().find(|c| c.id == "t3").unwrap();
    assert_eq!(shown.status, ToolStatus::Failed);
    assert!(shown
        .result
        .as_deref()
        .unwrap_or_default()
        .starts_with("refused by context fuse:"));
    // t4 changed the command, which ends the streak: t5 runs again.
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("log.txt")).unwrap(),
        "x\nx\ny\nx\n"
    );
    for id in ["t1", "t2", "t4", "t5"] {
        assert!(!result_for(&s, id).contains("refused"), "{id}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_subagents_answer_is_capped_in_the_result_and_the_snapshot() {
    use weft_testkit::anthropic::when;
    let long = "y".repeat(100_000);
    let script = delegating("look", "weft-subtask: say a lot", Turn::text_reply(&long))
        .rule(when::tool_result_for("t1"), Turn::text_reply("Main done."));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let (r, snap) = sink::run(
        &driver(),
        dirs.input(&env, "Investigate", None),
        &TestSink::new(),
    )
    .await;
    assert!(r.ok, "{r:?}");
    let sent = result_for(&s, "t1");
    assert!(
        sent.len() <= weft_native::tools::OUTPUT_CAP && sent.contains("output capped"),
        "{} bytes",
        sent.len()
    );
    let shown = snap.sub_agents[0].result.clone().unwrap_or_default();
    assert!(
        shown.len() <= weft_native::tools::OUTPUT_CAP && shown.contains("output capped"),
        "{} bytes in the snapshot's subagent",
        shown.len()
    );
}
