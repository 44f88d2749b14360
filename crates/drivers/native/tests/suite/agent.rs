//! The loop through the driver: bad input, capped output, maxSteps, stop killing a
//! running command's group, plan mode, undo.

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_kernel::AgentDriver;
use weft_protocol::{InteractionKind, InteractionResponse, ToolStatus};
use weft_testkit::anthropic::{ev_block_stop, ev_input_json_delta, ev_tool_use_start, when};
use weft_testkit::sink::{self, TestSink};
use weft_testkit::{Script, Turn};

use super::support::{anthropic, assert_notice, driver, run_turn, write, Dirs};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_calls_go_back_to_the_model_as_errors() {
    let raw = Turn::new()
        .event(ev_tool_use_start(0, "t3", "read"))
        .event(ev_input_json_delta(0, "{not json"))
        .event(ev_block_stop(0));
    let script = Script::new()
        .turn(
            Turn::new()
                .tool_use("t1", "no_such_tool", json!({}))
                .tool_use("t2", "", json!({}))
                .tool_use("t4", "read", json!({"offset": 3})),
        )
        .turn(raw)
        .default_reply(Turn::text_reply("I see the errors."));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "go", None)).await;
    assert!(r.ok, "{r:?}");
    assert!(snap.text.contains("I see the errors."));
    let reqs = s.messages_requests();
    let result = |id: &str| {
        reqs.iter()
            .find_map(|r| r.last_tool_result(id))
            .unwrap_or_default()
    };
    assert!(
        result("t1").contains("no tool named \"no_such_tool\"") && result("t1").contains("read"),
        "{}",
        result("t1")
    );
    assert!(result("t2").contains("names no tool"), "{}", result("t2"));
    assert!(
        result("t4").contains("missing field `path`"),
        "{}",
        result("t4")
    );
    assert!(
        result("t3").contains("not a JSON object"),
        "{}",
        result("t3")
    );
    assert_eq!(reqs[1].tool_result_is_error("t1"), Some(true));
    assert!(
        snap.tool_calls
            .iter()
            .all(|c| c.status == ToolStatus::Failed),
        "{:#?}",
        snap.tool_calls
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ten_megabyte_output_is_capped_and_says_so() {
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "t1",
            "bash",
            json!({"command": "head -c 10485760 /dev/zero | tr '\\0' x"}),
        ))
        .default_reply(Turn::text_reply("big"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "go", None)).await;
    assert!(r.ok);
    let sent = s.messages_requests()[1].last_tool_result("t1").unwrap();
    assert!(
        sent.len() < 40_000,
        "{} bytes went to the model",
        sent.len()
    );
    assert!(
        sent.contains("output capped"),
        "{}",
        &sent[sent.len() - 200..]
    );
    assert!(sent.contains("10485760"), "the total is not said");
    let shown = snap.tool_calls[0].result.clone().unwrap();
    assert!(shown.contains("output capped"));
}

/// A long command's output shows in its running row as it comes, not only at its end.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_command_s_output_streams_into_its_row() {
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "t1",
            "bash",
            json!({"command": "echo first-line; sleep 1; echo second-line"}),
        ))
        .default_reply(Turn::text_reply("done"));
    let (_s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let (r, snap, sink) = run_turn(&driver(), dirs.input(&env, "go", None)).await;
    assert!(r.ok, "{r:?}");
    let rows: Vec<(ToolStatus, Option<String>)> = sink
        .events
        .lock()
        .iter()
        .filter_map(|e| match e {
            weft_protocol::DriverEvent::Tool { call } if call.id == "t1" => {
                Some((call.status, call.result.clone()))
            }
            _ => None,
        })
        .collect();
    assert!(
        rows.iter()
            .any(|(status, result)| *status == ToolStatus::Running
                && result.as_deref() == Some("first-line\n")),
        "the first line never showed while the command ran: {rows:?}"
    );
    let done = snap.tool_calls[0].result.clone().unwrap_or_default();
    assert!(
        done.contains("first-line") && done.contains("second-line"),
        "{done}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_that_never_stops_calling_tools_hits_max_steps() {
    let script =
        Script::new().default_reply(Turn::new().tool_use("again", "ls", json!({"path": "."})));
    let (s, mut env) = anthropic(script, "auto").await;
    env.push(("WEFT_NATIVE_MAX_STEPS".into(), "4".into()));
    let dirs = Dirs::new();
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "loop", None)).await;
    assert!(!r.ok);
    let err = r.error.unwrap();
    assert!(err.contains("4 steps") && err.contains("maxSteps"), "{err}");
    assert!(snap.notices.iter().any(|n| n.contains("maxSteps")));
    assert_eq!(s.messages_requests().len(), 4);
}

fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .map(|s| {
            s.rsplit(')')
                .next()
                .and_then(|r| r.split_whitespace().next())
                != Some("Z")
        })
        .unwrap_or(false)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_during_bash_kills_its_process_group() {
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "t1",
            "bash",
            json!({"command": "sleep 300 & echo $! > child.pid; wait"}),
        ))
        .default_reply(Turn::text_reply("after"));
    let (_s, mut env) = anthropic(script, "auto").await;
    // The host pid of the child is what is checked; inside the sandbox's PID
    // namespace `$!` is another number (tests/suite/shell.rs covers the sandboxed stop).
    env.push(("WEFT_NATIVE_SANDBOX".into(), "off".into()));
    let dirs = Dirs::new();
    let pidfile = dirs.work().join("child.pid");
    let d = driver();
    let sink = TestSink::new();
    let cancel = CancellationToken::new();
    let input = dirs.input(&env, "go", None);
    let run = {
        let sink = sink.clone();
        let cancel = cancel.clone();
        tokio::spawn(async move { sink::run_with(&d, input, &sink, cancel).await })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    let pid: i32 = loop {
        if let Some(p) = std::fs::read_to_string(&pidfile)
            .ok()
            .and_then(|t| t.trim().parse().ok())
        {
            break p;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert!(alive(pid));
    cancel.cancel();
    let (r, snap) = run.await.unwrap();
    assert!(!r.ok && snap.incomplete);
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while alive(pid) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the background sleep survived the stop"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(snap.tool_calls[0].status, ToolStatus::Failed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn read_only_calls_run_side_by_side() {
    // Two reads of a FIFO-free kind: two `bash`-free `grep`s would be instant; sleep in
    // git_status cannot be arranged, so time two 1 s reads through a pipe instead.
    let script = Script::new()
        .turn(
            Turn::new()
                .tool_use("a", "glob", json!({"pattern": "*.txt"}))
                .tool_use("b", "read", json!({"path": "x.txt"}))
                .tool_use("c", "bash", json!({"command": "echo mutating"}))
                .tool_use("d", "read", json!({"path": "x.txt"})),
        )
        .default_reply(Turn::text_reply("ok"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file("x.txt", "hello");
    let (r, _, sink) = run_turn(&driver(), dirs.input(&env, "go", None)).await;
    assert!(r.ok);
    // Results return in the calls' order.
    let req = &s.messages_requests()[1];
    let last = req.messages().last().unwrap()["content"]
        .as_array()
        .unwrap()
        .clone();
    let ids: Vec<&str> = last
        .iter()
        .filter_map(|b| b["tool_use_id"].as_str())
        .collect();
    assert_eq!(ids, ["a", "b", "c", "d"]);
    // a and b start before either finishes; c starts after both ended; d after c.
    let events = sink.events.lock().clone();
    let order: Vec<(String, ToolStatus)> = events
        .iter()
        .filter_map(|e| match e {
            weft_protocol::DriverEvent::Tool { call } => Some((call.id.clone(), call.status)),
            _ => None,
        })
        .collect();
    let at =
        |id: &str, st: ToolStatus| order.iter().position(|(i, s)| i == id && *s == st).unwrap();
    assert!(
        at("b", ToolStatus::Running) < at("a", ToolStatus::Done),
        "{order:?}"
    );
    assert!(
        at("c", ToolStatus::Running) > at("b", ToolStatus::Done),
        "{order:?}"
    );
    assert!(
        at("d", ToolStatus::Running) > at("c", ToolStatus::Done),
        "{order:?}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_refuses_a_write_until_the_plan_is_approved() {
    let script = Script::new()
        .turn_when(
            when::user_text_contains("fix the greeting"),
            Turn::new().tool_use(
                "w1",
                "write",
                json!({"path": "a.txt", "content": "changed"}),
            ),
        )
        .rule(
            when::tool_result_for("w1"),
            Turn::text_reply("My plan:\n1. Change a.txt\n2. Check it"),
        )
        .rule(
            when::user_text_contains("Plan mode is off"),
            Turn::new().tool_use("w2", "write", json!({"path": "new.txt", "content": "done"})),
        )
        .rule(
            when::tool_result_for("w2"),
            Turn::text_reply("Carried out."),
        );
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let d = driver();
    let sink = TestSink::new();
    sink.answer_with(|i| {
        (i.kind == InteractionKind::Confirmation).then(|| InteractionResponse::select("leave"))
    });
    let (r, snap) = sink::run(&d, dirs.input(&env, "/plan fix the greeting", None), &sink).await;
    assert!(r.ok, "{r:?}");
    let refused = s.messages_requests()[1].last_tool_result("w1").unwrap();
    assert!(refused.contains("plan mode is on"), "{refused}");
    assert!(
        !dirs.work().join("a.txt").exists(),
        "plan mode let a write through"
    );
    let plan = snap.plan.clone().expect("a plan");
    assert_eq!(
        plan.steps
            .iter()
            .map(|s| s.text.as_str())
            .collect::<Vec<_>>(),
        ["Change a.txt", "Check it"]
    );
    assert!(sink
        .asked
        .lock()
        .iter()
        .any(|i| i.kind == InteractionKind::Confirmation));
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("new.txt")).unwrap(),
        "done"
    );
    assert!(snap.text.contains("Carried out."));
    // Plan mode stays off for the next turn.
    let (r2, _, _) = run_turn(&d, dirs.input(&env, "anything", r.session_id.as_deref())).await;
    assert!(r2.ok);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn declining_to_leave_plan_mode_ends_the_turn_with_nothing_changed() {
    let script = Script::new()
        .turn(Turn::text_reply("1. Do it"))
        .default_reply(Turn::new().tool_use(
            "w",
            "write",
            json!({"path": "b.txt", "content": "x"}),
        ));
    let (_s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let sink = TestSink::new();
    sink.answer_with(|_| Some(InteractionResponse::select("stay")));
    let (r, snap) = sink::run(&driver(), dirs.input(&env, "/plan something", None), &sink).await;
    assert!(r.ok);
    assert!(snap
        .notices
        .iter()
        .any(|n| n.contains("plan mode stays on")));
    assert!(!dirs.work().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn undo_restores_the_files_of_the_last_turn() {
    let script = Script::new()
        .turn(
            Turn::new()
                .tool_use("r", "read", json!({"path": "a.txt"}))
                .tool_use(
                    "e",
                    "edit",
                    json!({"path": "a.txt", "old_text": "old", "new_text": "new"}),
                )
                .tool_use(
                    "w",
                    "write",
                    json!({"path": "sub/b.txt", "content": "made"}),
                ),
        )
        .default_reply(Turn::text_reply("changed"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file("a.txt", "old text\n");
    let d = driver();
    let (r, _, _) = run_turn(&d, dirs.input(&env, "change things", None)).await;
    assert!(r.ok);
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("a.txt")).unwrap(),
        "new text\n"
    );
    let id = r.session_id.unwrap();
    let before = s.messages_requests().len();
    // A new driver (a new process) undoes it.
    let (u, snap, _) = run_turn(&driver(), dirs.input(&env, "/undo", Some(&id))).await;
    assert!(u.ok, "{u:?}");
    assert_eq!(s.messages_requests().len(), before, "/undo asked the model");
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("a.txt")).unwrap(),
        "old text\n"
    );
    assert!(!dirs.work().join("sub/b.txt").exists());
    assert!(
        snap.text.contains("a.txt restored") && snap.text.contains("b.txt removed"),
        "{}",
        snap.text
    );
    let (again, snap, _) = run_turn(&d, dirs.input(&env, "/undo", Some(&id))).await;
    assert!(again.ok);
    assert!(snap.text.contains("Nothing to undo"), "{}", snap.text);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_files_are_in_the_prompt_nearest_first() {
    let script = Script::new().default_reply(Turn::text_reply("hi"));
    let (s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::with_file("AGENTS.md", "root rules: weft-root-marker");
    write(&dirs.work(), "pkg/CLAUDE.md", "pkg rules: weft-pkg-marker");
    let mut input = dirs.input(&env, "hello", None);
    input.workdir = dirs.work().join("pkg");
    let (r, _, _) = run_turn(&driver(), input).await;
    assert!(r.ok);
    let system = s.messages_requests()[0].body["system"].to_string();
    let (pkg, root) = (
        system.find("weft-pkg-marker").unwrap(),
        system.find("weft-root-marker").unwrap(),
    );
    assert!(pkg < root, "{system}");
}

#[tokio::test]
async fn no_endpoint_is_a_clear_failure() {
    let dirs = Dirs::new();
    let (r, _, _) = run_turn(&driver(), dirs.input(&[], "hello", None)).await;
    assert!(!r.ok);
    assert!(r.error.unwrap().contains("providers.json"));
    assert!(!driver().info().await.installed);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nearing_the_window_compacts_before_the_next_step() {
    let script = Script::new()
        .rule(when::no_tools(), Turn::text_reply("SUMMARY-OF-STEP-ONE"))
        .turn(
            Turn::new()
                .tool_use("l", "ls", json!({"path": "."}))
                .usage(9000, 100),
        )
        .default_reply(Turn::text_reply("finished"));
    let (s, mut env) = anthropic(script, "auto").await;
    env.push(("WEFT_NATIVE_CONTEXT_WINDOW".into(), "10000".into()));
    let dirs = Dirs::new();
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "go", None)).await;
    assert!(r.ok, "{r:?}");
    assert_notice(&snap, "compacted");
    let reqs = s.messages_requests();
    assert_eq!(reqs.len(), 3, "step, summary, step");
    assert!(reqs[1].tool_names().is_empty());
    let last = reqs[2].body.to_string();
    assert!(
        last.contains("SUMMARY-OF-STEP-ONE") && last.contains("\"go\""),
        "{last}"
    );
    assert!(
        !last.contains("tool_use"),
        "the summarized step is still sent: {last}"
    );
    // The user still sees the whole turn.
    assert_eq!(snap.tool_calls.len(), 1);
    assert!(snap.text.contains("finished"));
}

/// Commands that run without the OS sandbox are a lasting state of the session
/// (`degraded`), named with why, and cleared once they run in it again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_without_the_sandbox_says_so_until_it_has_it_again() {
    use weft_protocol::degraded::capability::SANDBOX;
    let script = Script::new().default_reply(Turn::text_reply("ok"));
    let (_s, env) = anthropic(script, "auto").await;
    let dirs = Dirs::new();
    let mut off = env.clone();
    off.push(("WEFT_NATIVE_SANDBOX".into(), "off".into()));
    let (r, snap, _) = run_turn(&driver(), dirs.input(&off, "go", None)).await;
    assert!(r.ok, "{r:?}");
    let without = snap.degraded.iter().find(|d| d.capability == SANDBOX);
    assert!(
        without.is_some_and(|d| d.reason.contains("WEFT_NATIVE_SANDBOX=off")),
        "{:?}",
        snap.degraded
    );

    let sink = TestSink::new();
    sink.accumulate(|acc| {
        acc.apply(
            &weft_protocol::DriverEvent::Degraded {
                capability: SANDBOX.into(),
                reason: without.map(|d| d.reason.clone()),
            },
            0,
        )
    });
    let (r, snap) = sink::run(&driver(), dirs.input(&env, "again", None), &sink).await;
    assert!(r.ok, "{r:?}");
    let probe = weft_sandbox::probe();
    if probe.mechanism == weft_sandbox::Mechanism::Unavailable {
        // Nothing confines commands on this machine: still without, saying why.
        let still = snap.degraded.iter().find(|d| d.capability == SANDBOX);
        assert_eq!(
            still.map(|d| d.reason.as_str()),
            Some(probe.details.as_str())
        );
    } else {
        assert!(snap.degraded.is_empty(), "{:?}", snap.degraded);
    }
}
