//! Folding events: each event's patch, applied to the previous snapshot, gives the next;
//! activity lines follow the tool calls.

use proptest::prelude::*;
use serde_json::json;
use weft_protocol::*;

fn call(id: &str, summary: &str, status: ToolStatus, result: Option<&str>) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: "Bash".into(),
        summary: summary.into(),
        input: json!({}),
        result: result.map(Into::into),
        status,
        kind: ToolKind::Shell,
        parent_id: None,
        changes: Vec::new(),
    }
}

fn event() -> impl Strategy<Value = DriverEvent> {
    prop_oneof![
        "[a-z ]{0,5}".prop_map(|delta| DriverEvent::Text { delta }),
        "[a-z ]{0,5}".prop_map(|delta| DriverEvent::Reasoning { delta }),
        (
            "[a-c]",
            prop_oneof![
                Just(ToolStatus::Running),
                Just(ToolStatus::Done),
                Just(ToolStatus::Failed)
            ]
        )
            .prop_map(|(id, status)| DriverEvent::Tool {
                call: call(&id, "run", status, Some("out"))
            }),
        "[a-z]{1,3}".prop_map(|text| DriverEvent::Activity { text }),
        "[a-z]{1,3}".prop_map(|text| DriverEvent::Notice { text }),
        "[a-z]{1,3}".prop_map(|session_id| DriverEvent::Session {
            session_id,
            model: Some("m".into())
        }),
        Just(DriverEvent::Usage {
            usage: Usage {
                output_tokens: Some(3),
                ..Default::default()
            }
        }),
        Just(DriverEvent::Plan {
            plan: Plan {
                explanation: None,
                steps: vec![PlanStep {
                    text: "s".into(),
                    status: StepStatus::Pending
                }]
            }
        }),
        Just(DriverEvent::Artifact {
            artifact: Artifact {
                file_name: "f".into(),
                ..Default::default()
            }
        }),
        "[a-c]".prop_map(|id| DriverEvent::Subagent {
            agent: SubAgent {
                id,
                name: "Explore".into(),
                summary: "look".into(),
                status: ToolStatus::Running,
                result: None
            }
        }),
        ("[a-b]", proptest::option::of("[a-z]{1,3}"))
            .prop_map(|(capability, reason)| { DriverEvent::Degraded { capability, reason } }),
        (
            "[a-b]",
            prop_oneof![Just(McpState::Connected), Just(McpState::Failed)]
        )
            .prop_map(|(name, status)| DriverEvent::Mcp {
                server: McpServerStatus {
                    name,
                    status,
                    error: Some("boom".into())
                }
            }),
    ]
}

proptest! {
    #[test]
    fn each_event_patch_rebuilds_the_next_snapshot(events in proptest::collection::vec(event(), 0..40)) {
        let mut acc = Accumulator::new(UniversalSnapshot::default());
        let mut client = UniversalSnapshot::default();
        for (i, ev) in events.iter().enumerate() {
            let patch = acc.apply(ev, i as i64);
            let wire: SnapshotPatch = serde_json::from_str(&serde_json::to_string(&patch).unwrap_or_default()).unwrap_or_default();
            apply_in_place(&mut client, &wire);
            prop_assert_eq!(&client, acc.snapshot());
        }
    }
}

#[test]
fn activity_has_one_line_per_call_in_each_state() {
    let mut acc = Accumulator::new(UniversalSnapshot::default());
    acc.apply(
        &DriverEvent::Tool {
            call: call("1", "ls", ToolStatus::Running, None),
        },
        1,
    );
    assert_eq!(acc.snapshot().activity, "ls");
    acc.apply(
        &DriverEvent::Tool {
            call: call("1", "ls", ToolStatus::Done, Some("a.txt\nb.txt")),
        },
        2,
    );
    acc.apply(
        &DriverEvent::Tool {
            call: call("2", "touch x", ToolStatus::Done, None),
        },
        3,
    );
    acc.apply(
        &DriverEvent::Tool {
            call: call("3", "cat y", ToolStatus::Failed, Some("No such file")),
        },
        4,
    );
    acc.apply(
        &DriverEvent::Activity {
            text: "waiting".into(),
        },
        5,
    );
    assert_eq!(
        acc.snapshot().activity,
        "ls -> a.txt\ntouch x done\ncat y failed: No such file\nwaiting"
    );
    let patch = acc.finish(Some("bad".into()), true, 6);
    assert_eq!(
        patch.activity.as_deref(),
        Some("ls -> a.txt\ntouch x done\ncat y failed: No such file")
    );
    assert_eq!(acc.snapshot().phase, Phase::Done);
}

#[test]
fn a_subagent_shows_as_one_line_with_its_calls_indented() {
    let mut acc = Accumulator::new(UniversalSnapshot::default());
    acc.apply(
        &DriverEvent::Tool {
            call: call("t", "Task", ToolStatus::Running, None),
        },
        1,
    );
    acc.apply(
        &DriverEvent::Subagent {
            agent: SubAgent {
                id: "t".into(),
                name: "Explore".into(),
                summary: "find tests".into(),
                status: ToolStatus::Running,
                result: None,
            },
        },
        2,
    );
    let mut nested = call("n", "grep test", ToolStatus::Done, None);
    nested.parent_id = Some("t".into());
    acc.apply(&DriverEvent::Tool { call: nested }, 3);
    assert_eq!(
        acc.snapshot().activity,
        "Explore: find tests\n  grep test done"
    );
}

#[test]
fn activity_is_bounded() {
    let mut acc = Accumulator::new(UniversalSnapshot::default());
    for i in 0..500 {
        acc.apply(
            &DriverEvent::Tool {
                call: call(&i.to_string(), &format!("step {i}"), ToolStatus::Done, None),
            },
            i,
        );
    }
    let lines: Vec<&str> = acc.snapshot().activity.lines().collect();
    assert_eq!(lines.len(), ACTIVITY_LINES);
    assert_eq!(lines.last().copied(), Some("step 499 done"));
    assert_eq!(acc.snapshot().tool_calls.len(), 500);
}

#[test]
fn what_the_session_runs_without_is_set_cleared_and_follows_its_mcp_servers() {
    let mut acc = Accumulator::new(UniversalSnapshot::default());
    let lost = |reason: Option<&str>| DriverEvent::Degraded {
        capability: "context".into(),
        reason: reason.map(Into::into),
    };
    let patch = acc.apply(&lost(Some("its session could not be loaded")), 1);
    assert_eq!(patch.degraded.map(|d| d.len()), Some(1));
    // The same again changes nothing.
    assert_eq!(
        acc.apply(&lost(Some("its session could not be loaded")), 2)
            .degraded,
        None
    );
    let mcp = |status| DriverEvent::Mcp {
        server: McpServerStatus {
            name: "db".into(),
            status,
            error: Some("exited: no such file".into()),
        },
    };
    acc.apply(&mcp(McpState::Failed), 3);
    let names: Vec<&str> = acc
        .snapshot()
        .degraded
        .iter()
        .map(|d| d.capability.as_str())
        .collect();
    assert_eq!(names, ["context", "mcp:db"]);
    assert!(acc.snapshot().degraded[1]
        .reason
        .contains("exited: no such file"));
    acc.apply(&mcp(McpState::Connected), 4);
    acc.apply(&lost(None), 5);
    assert!(acc.snapshot().degraded.is_empty());
    // Empty, it is not on the wire at all: older clients see what they saw before.
    let json = serde_json::to_value(acc.snapshot()).unwrap_or_default();
    assert!(json.get("degraded").is_none(), "{json}");
}
