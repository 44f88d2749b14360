//! Recorded `codex app-server` transcripts (codex-cli 0.171.0, see
//! tests/fixtures) replayed through the normalizer and the interaction builders,
//! asserting on the whole resulting snapshots, one per codex turn.

use std::path::Path;

use serde_json::{json, Value};
use weft_codex::interact;
use weft_codex::normalize::{Normalizer, TurnEnd};
use weft_codex::wire::{CommandApproval, FileChangeApproval, UserInputRequest};
use weft_protocol::{Accumulator, Phase, UniversalSnapshot};

/// A whole-snapshot assertion with map keys sorted: serde_json's key order depends on
/// whether some other crate in the build turned on its `preserve_order` feature.
macro_rules! assert_snapshot {
    ($value:expr) => {
        insta::with_settings!({ sort_maps => true }, {
            insta::assert_json_snapshot!($value);
        })
    };
}

fn fixture(name: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every turn of a transcript: its final snapshot, the interactions its server
/// requests became, and how it ended.
fn replay(name: &str) -> Value {
    let mut norm = Normalizer::new(Some("mock".into()));
    let mut turns = Vec::new();
    let mut acc: Option<Accumulator> = None;
    let mut asked = Vec::new();
    for line in fixture(name) {
        if line["dir"] != "out" {
            continue;
        }
        let msg = &line["msg"];
        let Some(method) = msg["method"].as_str() else {
            continue; // a response
        };
        if method == "turn/started" && acc.is_none() {
            norm.begin_turn(None);
            acc = Some(Accumulator::new(UniversalSnapshot {
                phase: Phase::Streaming,
                agent: "codex".into(),
                ..Default::default()
            }));
        }
        if !msg["id"].is_null() {
            let params = msg["params"].clone();
            let prompt_id = "prompt".to_string();
            let pending = match method {
                "item/commandExecution/requestApproval" => {
                    let r: CommandApproval = serde_json::from_value(params).unwrap();
                    interact::command_approval(prompt_id, &r, norm.call(&r.item_id))
                }
                "item/fileChange/requestApproval" => {
                    let r: FileChangeApproval = serde_json::from_value(params).unwrap();
                    interact::file_change_approval(prompt_id, &r, norm.call(&r.item_id))
                }
                "item/tool/requestUserInput" => {
                    let r: UserInputRequest = serde_json::from_value(params).unwrap();
                    interact::user_input(prompt_id, &r)
                }
                other => panic!("unexpected server request {other}"),
            };
            asked.push(serde_json::to_value(&pending.interaction).unwrap());
            continue;
        }
        let Some(a) = acc.as_mut() else { continue };
        let mut events = Vec::new();
        let end = norm.notification(method, msg["params"].clone(), &mut events);
        for e in &events {
            a.apply(e, 0);
        }
        if let Some(TurnEnd { status, error }) = end {
            let mut a = acc.take().unwrap();
            a.finish(error.clone(), status != "completed", 0);
            turns.push(json!({
                "status": status,
                "snapshot": a.into_snapshot(),
                "asked": std::mem::take(&mut asked),
            }));
        }
    }
    Value::Array(turns)
}

#[test]
fn basic_two_turns_with_a_streamed_command() {
    assert_snapshot!(replay("t_app_basic.jsonl"));
}

#[test]
fn approvals_accepted_then_declined() {
    assert_snapshot!(replay("t_app_approval.jsonl"));
}

#[test]
fn a_question_in_plan_mode() {
    assert_snapshot!(replay("t_app_askq.jsonl"));
}

#[test]
fn interrupted_then_another_turn() {
    assert_snapshot!(replay("t_app_interrupt.jsonl"));
}

#[test]
fn a_proposed_plan() {
    assert_snapshot!(replay("t_app_plan.jsonl"));
}

#[test]
fn resumed_thread_ignores_the_old_turns_usage() {
    assert_snapshot!(replay("t_app_resume.jsonl"));
}

#[test]
fn steer_inside_a_running_command() {
    assert_snapshot!(replay("t_app_steer.jsonl"));
}

#[test]
fn a_file_change_with_its_diff_and_approval() {
    assert_snapshot!(replay("t_app_filechange.jsonl"));
}

#[test]
fn reasoning_summary_then_text() {
    assert_snapshot!(replay("t_app_reasoning.jsonl"));
}

#[test]
fn unknown_notifications_are_ignored_and_remembered_once() {
    let mut norm = Normalizer::new(None);
    norm.begin_turn(Some("t1".into()));
    let mut events = Vec::new();
    for _ in 0..3 {
        assert_eq!(
            norm.notification("weft/neverHeardOf", json!({"x": 1}), &mut events),
            None
        );
    }
    assert!(events.is_empty());
    assert_eq!(norm.unknown_methods().len(), 1);
    // Params of the wrong shape are skipped, not fatal.
    norm.notification(
        "item/agentMessage/delta",
        json!({"nope": true}),
        &mut events,
    );
    assert!(events.is_empty());
    // Another turn's completion does not end this one.
    let other = json!({"threadId": "x", "turn": {"id": "t0", "status": "completed"}});
    assert_eq!(
        norm.notification("turn/completed", other, &mut events),
        None
    );
    let failed = json!({"threadId": "x", "turn": {"id": "t1", "status": "failed",
        "error": {"message": "stream disconnected", "additionalDetails": "HTTP 500"}}});
    assert_eq!(
        norm.notification("turn/completed", failed, &mut events),
        Some(TurnEnd {
            status: "failed".into(),
            error: Some("stream disconnected: HTTP 500".into())
        })
    );
}

#[test]
fn rollout_files_list_as_native_sessions() {
    let home = tempfile::tempdir().unwrap();
    let day = home.path().join("sessions/2026/11/30");
    std::fs::create_dir_all(&day).unwrap();
    std::fs::copy(
        Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/rollout_file_example.jsonl"),
        day.join("rollout-2026-11-30T03-06-31-01a22a6b-1a33-73c2-8da3-697eac086135.jsonl"),
    )
    .unwrap();
    std::fs::write(day.join("notes.txt"), "not a rollout").unwrap();
    let all = super::support::rollouts(home.path());
    assert_eq!(all.len(), 1);
    let s = &all[0];
    assert_eq!(
        s.native_id.as_deref(),
        Some("01a22a6b-1a33-73c2-8da3-697eac086135")
    );
    assert_eq!(s.workdir.as_deref(), Some("/home/dev/probe/codex/work"));
    assert_eq!(s.title().0, "USE_TOOL please");
    assert_eq!(s.messages, 6);
    assert!(s.updated_at > 0);
}

/// Items and notifications no recorded transcript has (no MCP server, no subagents,
/// no `update_plan` in 0.171.0's default tools), in the schema's shapes.
#[test]
fn mcp_calls_subagents_plan_updates_and_retries() {
    let mut norm = Normalizer::new(Some("openai".into()));
    norm.begin_turn(Some("t1".into()));
    let mut acc = Accumulator::new(UniversalSnapshot {
        phase: Phase::Streaming,
        agent: "codex".into(),
        ..Default::default()
    });
    let notes = [
        (
            "error",
            json!({"threadId": "x", "turnId": "t1", "willRetry": true,
            "error": {"message": "Reconnecting... 1/5"}}),
        ),
        (
            "item/started",
            json!({"turnId": "t1", "item": {"type": "mcpToolCall", "id": "m1",
            "server": "docs", "tool": "search", "arguments": {"q": "loom"}, "status": "inProgress"}}),
        ),
        (
            "item/mcpToolCall/progress",
            json!({"itemId": "m1", "message": "searching"}),
        ),
        (
            "item/completed",
            json!({"turnId": "t1", "item": {"type": "mcpToolCall", "id": "m1",
            "server": "docs", "tool": "search", "arguments": {"q": "loom"}, "status": "completed",
            "result": {"content": [{"type": "text", "text": "3 hits"}]}}}),
        ),
        (
            "item/started",
            json!({"turnId": "t1", "item": {"type": "mcpToolCall", "id": "m2",
            "server": "docs", "tool": "fetch", "arguments": {}, "status": "inProgress"}}),
        ),
        (
            "item/completed",
            json!({"turnId": "t1", "item": {"type": "mcpToolCall", "id": "m2",
            "server": "docs", "tool": "fetch", "arguments": {}, "status": "failed",
            "error": {"message": "server gone"}}}),
        ),
        (
            "item/started",
            json!({"turnId": "t1", "item": {"type": "collabAgentToolCall", "id": "a1",
            "tool": "spawnAgent", "prompt": "check the tests", "status": "inProgress"}}),
        ),
        (
            "item/completed",
            json!({"turnId": "t1", "item": {"type": "collabAgentToolCall", "id": "a1",
            "tool": "spawnAgent", "prompt": "check the tests", "status": "completed"}}),
        ),
        (
            "turn/plan/updated",
            json!({"threadId": "x", "turnId": "t1", "explanation": "two steps",
            "plan": [{"step": "Read", "status": "completed"}, {"step": "Write", "status": "inProgress"}]}),
        ),
        (
            "item/started",
            json!({"turnId": "t1", "item": {"type": "contextCompaction", "id": "c1"}}),
        ),
        (
            "item/completed",
            json!({"turnId": "t1", "item": {"type": "contextCompaction", "id": "c1"}}),
        ),
        (
            "item/completed",
            json!({"turnId": "t1", "item": {"type": "agentMessage", "id": "g1",
            "text": "whole message, never streamed"}}),
        ),
        (
            "item/started",
            json!({"turnId": "t1", "item": {"type": "somethingNew", "id": "n1"}}),
        ),
    ];
    let mut events = Vec::new();
    for (method, params) in notes {
        assert_eq!(
            norm.notification(method, params, &mut events),
            None,
            "{method}"
        );
    }
    for e in &events {
        acc.apply(e, 0);
    }
    acc.finish(None, false, 0);
    assert_snapshot!(acc.into_snapshot());
}
