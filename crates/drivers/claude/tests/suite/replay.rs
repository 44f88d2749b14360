//! Recorded transcripts of the real CLI (Claude Code 2.1.197, shared/agent-protocols)
//! replayed through the normalizer; the whole resulting snapshot is asserted (insta).

use serde_json::{json, Value};
use weft_claude::lines::{parse, Parsed};
use weft_claude::normalize::{Normalizer, Signal};
use weft_protocol::{Accumulator, Phase, UniversalSnapshot};

use super::support::fixture;

/// The stdout lines of a transcript (`{"dir":"out","msg":…}` records, or raw lines).
fn out_lines(name: &str) -> Vec<Vec<u8>> {
    let text = std::fs::read_to_string(fixture(name)).unwrap();
    text.lines()
        .filter(|l| !l.trim().is_empty())
        .filter_map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            match v.get("dir") {
                Some(dir) if dir == "out" => Some(v["msg"].to_string().into_bytes()),
                Some(_) => None,
                None => Some(l.as_bytes().to_vec()),
            }
        })
        .collect()
}

fn signal_json(s: &Signal) -> Value {
    match s {
        Signal::Init { session_id } => json!({"init": session_id}),
        Signal::Result(end) => json!({"result": {
            "subtype": end.subtype, "isError": end.is_error, "interrupted": end.interrupted,
            "noop": end.noop, "truncated": end.truncated}}),
        Signal::ControlRequest { request_id, .. } => json!({"controlRequest": request_id}),
        Signal::ControlResponse { request_id } => json!({"controlResponse": request_id}),
        Signal::TaskStarted { task_id, agent } => json!({"taskStarted": task_id, "agent": agent}),
        Signal::TaskDone { task_id } => json!({"taskDone": task_id}),
        Signal::Replay { text } => json!({"replay": text}),
    }
}

/// Replays `name`; returns the snapshot and the signals.
fn replay(name: &str) -> Value {
    let mut norm = Normalizer::new(0.0);
    let mut acc = Accumulator::new(UniversalSnapshot {
        phase: Phase::Streaming,
        agent: "claude".into(),
        ..Default::default()
    });
    let mut signals = Vec::new();
    let mut events = Vec::new();
    for line in out_lines(name) {
        let parsed = match parse(&line) {
            Parsed::Line(l) => l,
            other => panic!("{name}: {other:?}"),
        };
        for s in norm.line(parsed, &mut events) {
            signals.push(signal_json(&s));
        }
        for e in events.drain(..) {
            acc.apply(&e, 0);
        }
    }
    json!({"snapshot": acc.snapshot(), "signals": signals})
}

macro_rules! replay_test {
    ($test:ident, $file:literal) => {
        #[test]
        fn $test() {
            // Sorted keys: serde_json keeps insertion order when another crate in the
            // build turns its `preserve_order` feature on (the ACP SDK does).
            insta::with_settings!({ sort_maps => true }, {
                insta::assert_json_snapshot!(replay($file));
            });
        }
    };
}

replay_test!(print_tool_with_partial_messages, "sample_print_tool.jsonl");
replay_test!(multiturn_text_then_bash, "t_multiturn.jsonl");
replay_test!(interrupt_mid_stream, "t_interrupt.jsonl");
replay_test!(sigint_mid_stream, "t_sigint.jsonl");
replay_test!(steer_queued_as_own_turn, "t_steer.jsonl");
replay_test!(steer_injected_during_tool, "t_steer_tool.jsonl");
replay_test!(permission_allow_then_deny, "t_permission_stdio.jsonl");
replay_test!(ask_user_question, "t_askq.jsonl");
replay_test!(exit_plan_mode, "t_plan.jsonl");
replay_test!(task_create_plan, "t_taskcreate.jsonl");
replay_test!(todowrite_plan, "t_todowrite.jsonl");
replay_test!(todowrite_disabled, "t_todo.jsonl");
replay_test!(resume, "sample_resume.jsonl");
replay_test!(initialize_and_mode_change, "t_initialize.jsonl");

#[test]
fn partial_deltas_and_assistant_lines_are_not_doubled() {
    let v = replay("sample_print_tool.jsonl");
    let text = v["snapshot"]["text"].as_str().unwrap();
    assert_eq!(text.matches("Calling Bash.").count(), 1, "{text}");
}

#[test]
fn steer_transcripts_give_one_and_two_results() {
    let count = |v: &Value| {
        v["signals"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|s| s.get("result").is_some())
            .count()
    };
    assert_eq!(count(&replay("t_steer.jsonl")), 2);
    assert_eq!(count(&replay("t_steer_tool.jsonl")), 1);
}
