//! Recorded ACP transcripts (`tests/fixtures/t_*.jsonl`, captured from gemini-cli
//! 0.61.0 and claude-agent-acp 0.49.0) replayed through the normalizer, asserting the
//! whole snapshot of every turn.

use agent_client_protocol::v1::schema::RequestPermissionRequest;
use serde_json::Value;
use weft_acp::normalize::Normalizer;
use weft_protocol::{Accumulator, DriverEvent, Phase, ToolStatus, UniversalSnapshot};

fn fixture(name: &str) -> Vec<Value> {
    let path = format!("{}/tests/fixtures/{name}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// Every turn's finished snapshot, as the driver would fold it.
fn replay(name: &str) -> Vec<UniversalSnapshot> {
    let lines = fixture(name);
    let mut norm = Normalizer::new();
    let mut turns = Vec::new();
    let mut acc: Option<Accumulator> = None;
    let mut pending_permission: Option<(Value, RequestPermissionRequest)> = None;
    let fold = |acc: &mut Option<Accumulator>, events: Vec<DriverEvent>| {
        if let Some(a) = acc.as_mut() {
            for e in &events {
                a.apply(e, 0);
            }
        }
    };
    for line in &lines {
        let msg = &line["msg"];
        match line["dir"].as_str() {
            Some("in") if msg["method"] == "session/prompt" => {
                norm.begin_turn();
                acc = Some(Accumulator::new(UniversalSnapshot {
                    phase: Phase::Streaming,
                    agent: "acp".into(),
                    prompt: msg["params"]["prompt"][0]["text"].as_str().unwrap().into(),
                    ..Default::default()
                }));
            }
            Some("in") if msg.get("result").is_some() => {
                // Our answer to a permission request.
                if let Some((id, req)) = pending_permission.take() {
                    assert_eq!(id, msg["id"]);
                    let option = msg["result"]["outcome"]["optionId"].as_str().unwrap();
                    let allowed = req.options.iter().any(|o| {
                        o.option_id.0.as_ref() == option
                            && format!("{:?}", o.kind).starts_with("Allow")
                    });
                    if !allowed {
                        let tool = req.tool_call.tool_call_id.0.to_string();
                        let e = norm.settle_tool(&tool, ToolStatus::Failed, "denied by the user");
                        fold(&mut acc, e.into_iter().collect());
                    }
                }
            }
            Some("out") if msg["method"] == "session/request_permission" => {
                let req: RequestPermissionRequest =
                    serde_json::from_value(msg["params"].clone()).unwrap();
                let mut out = Vec::new();
                norm.ensure_tool(&req.tool_call, &mut out);
                fold(&mut acc, out);
                pending_permission = Some((msg["id"].clone(), req));
            }
            Some("out") if msg.get("method").is_some() => {
                let mut out = Vec::new();
                norm.notification(msg["method"].as_str().unwrap(), &msg["params"], &mut out);
                fold(&mut acc, out);
            }
            Some("out") if msg["result"].get("stopReason").is_some() => {
                let e = norm.prompt_usage(&msg["result"]);
                fold(&mut acc, e.into_iter().collect());
                if let Some(mut a) = acc.take() {
                    let stopped = msg["result"]["stopReason"] == "cancelled";
                    a.finish(None, stopped, 0);
                    turns.push(a.into_snapshot());
                }
            }
            _ => {}
        }
    }
    turns
}

#[test]
fn gemini_basic_tool_then_second_prompt() {
    insta::assert_json_snapshot!(replay("t_gemini_basic.jsonl"));
}

#[test]
fn gemini_permission_allowed_then_rejected() {
    let turns = replay("t_gemini_permission.jsonl");
    assert_eq!(turns[1].tool_calls[0].status, ToolStatus::Failed);
    insta::assert_json_snapshot!(turns);
}

#[test]
fn gemini_cancel_keeps_the_text_so_far() {
    let turns = replay("t_gemini_cancel.jsonl");
    assert!(turns[0].incomplete);
    insta::assert_json_snapshot!(turns);
}

#[test]
fn claude_basic() {
    insta::assert_json_snapshot!(replay("t_claude_basic.jsonl"));
}

#[test]
fn claude_permission_allowed_then_rejected() {
    let turns = replay("t_claude_permission.jsonl");
    assert_eq!(turns[0].tool_calls[0].status, ToolStatus::Done);
    assert_eq!(turns[1].tool_calls[0].status, ToolStatus::Failed);
    insta::assert_json_snapshot!(turns);
}

#[test]
fn claude_todo_is_a_plan() {
    let turns = replay("t_claude_todo.jsonl");
    assert_eq!(turns[0].plan.as_ref().unwrap().steps.len(), 2);
    insta::assert_json_snapshot!(turns);
}

#[test]
fn claude_cancel_then_load_replay_is_not_text() {
    insta::assert_json_snapshot!(replay("t_claude_cancel.jsonl"));
    // The load's history replay (user_message_chunk, agent_message_chunk before the
    // load reply) belongs to no turn; the prompt after it is a clean turn.
    insta::assert_json_snapshot!(replay("t_claude_load.jsonl"));
}

// ---- the agents met in issue 17, recorded from their real binaries against a scripted
// Chat Completions server (see crate::quirks for what each one does differently).

#[test]
fn qwen_usage_comes_from_chunk_meta() {
    let turns = replay("t_qwen_basic.jsonl");
    let usage = turns[0].usage.clone().unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(1234), Some(56))
    );
    // The tool turn made two model calls: their figures add up.
    let usage = turns[1].usage.clone().unwrap();
    assert_eq!(
        (usage.input_tokens, usage.output_tokens),
        (Some(2468), Some(112))
    );
    assert_eq!(turns[1].tool_calls[0].kind, weft_protocol::ToolKind::Shell);
    assert_eq!(turns[1].tool_calls[0].status, ToolStatus::Done);
    insta::assert_json_snapshot!(turns);
}

#[test]
fn qwen_commands_with_null_input_are_read() {
    let line = fixture("t_qwen_basic.jsonl")
        .into_iter()
        .find(|l| l["msg"]["params"]["update"]["sessionUpdate"] == "available_commands_update")
        .unwrap();
    assert!(line["msg"]["params"]["update"]["availableCommands"][1]["input"].is_null());
    let mut norm = Normalizer::new();
    norm.notification("session/update", &line["msg"]["params"], &mut Vec::new());
    let names: Vec<&str> = norm.commands.iter().map(|c| c.name.as_str()).collect();
    assert_eq!(names.len(), 6, "{names:?}");
    assert!(names.contains(&"advisor"), "{names:?}");
}

#[test]
fn qwen_rejected_tool_ends_the_turn() {
    let turns = replay("t_qwen_permission.jsonl");
    assert_eq!(turns[0].tool_calls[0].status, ToolStatus::Failed);
    assert_eq!(turns[0].text, "");
    insta::assert_json_snapshot!(turns);
}

#[test]
fn copilot_raw_output_object_is_its_content() {
    let turns = replay("t_copilot_basic.jsonl");
    let call = &turns[1].tool_calls[0];
    assert_eq!(call.status, ToolStatus::Done);
    assert_eq!(
        call.result.as_deref(),
        Some("weft-conformance-tool\n<shellId: 0 completed with exit code 0>")
    );
    assert!(turns[1]
        .usage
        .as_ref()
        .unwrap()
        .context_used_tokens
        .is_some());
    insta::assert_json_snapshot!(turns);
}

#[test]
fn copilot_nonzero_exit_is_a_failed_call() {
    let turns = replay("t_copilot_failing.jsonl");
    let call = &turns[0].tool_calls[0];
    assert_eq!(call.status, ToolStatus::Failed, "{call:#?}");
    assert!(call.result.as_deref().unwrap().contains("exit code 3"));
    insta::assert_json_snapshot!(turns);
}

#[test]
fn copilot_denied_tool_ends_the_turn() {
    let turns = replay("t_copilot_deny.jsonl");
    for t in &turns {
        assert_eq!(t.tool_calls[0].status, ToolStatus::Failed);
        assert_eq!(t.text, "Info: Operation cancelled by user");
    }
    insta::assert_json_snapshot!(turns);
}

#[test]
fn kimi_kindless_shell_call_is_a_shell_call() {
    let turns = replay("t_kimi_basic.jsonl");
    let call = &turns[1].tool_calls[0];
    assert_eq!(call.kind, weft_protocol::ToolKind::Shell, "{call:#?}");
    assert_eq!(call.status, ToolStatus::Done);
    assert_eq!(call.result.as_deref(), Some("weft-conformance-tool\n"));
    insta::assert_json_snapshot!(turns);
}

#[test]
fn hermes_tool_then_text() {
    let turns = replay("t_hermes_basic.jsonl");
    assert_eq!(turns[0].tool_calls[0].kind, weft_protocol::ToolKind::Shell);
    assert!(turns[0].text.contains("The tool has finished."));
    assert_eq!(turns[1].text, "Hello from the scripted model.");
    insta::assert_json_snapshot!(turns);
}

#[test]
fn session_new_replies_give_modes_and_models() {
    use weft_acp::Catalog;
    let reply = |name: &str| {
        fixture(name)
            .into_iter()
            .find(|l| l["dir"] == "out" && l["msg"]["id"] == 2)
            .map(|l| l["msg"]["result"].clone())
            .unwrap()
    };
    let copilot = Catalog::from_reply(&reply("t_copilot_basic.jsonl"));
    assert!(
        copilot.modes.iter().any(|(id, _)| id.ends_with("#plan")),
        "{copilot:?}"
    );
    assert!(copilot.current_mode.as_deref().unwrap().ends_with("#agent"));
    let qwen = Catalog::from_reply(&reply("t_qwen_basic.jsonl"));
    assert!(qwen.modes.iter().any(|(id, _)| id == "yolo"), "{qwen:?}");
    assert_eq!(qwen.models.len(), 1);
    let kimi = Catalog::from_reply(&reply("t_kimi_basic.jsonl"));
    assert_eq!(kimi.current_model.as_deref(), Some("mock"));
    let hermes = Catalog::from_reply(&reply("t_hermes_basic.jsonl"));
    assert!(
        hermes.modes.iter().any(|(id, _)| id == "accept_edits"),
        "{hermes:?}"
    );
}
