//! The patch algebra: `apply(a, diff(a, b)) == b` for arbitrary snapshots, JSON round
//! trips keep clears, and an appended delta costs O(delta).

use proptest::prelude::*;
use serde_json::json;
use weft_protocol::*;

fn small_string() -> impl Strategy<Value = String> {
    "[ab\n]{0,6}"
}

fn opt_string() -> impl Strategy<Value = Option<String>> {
    proptest::option::of(small_string())
}

fn tool_call() -> impl Strategy<Value = ToolCall> {
    (
        "[a-d]",
        small_string(),
        opt_string(),
        prop_oneof![
            Just(ToolStatus::Running),
            Just(ToolStatus::Done),
            Just(ToolStatus::Failed)
        ],
        proptest::option::of("[a-d]"),
    )
        .prop_map(|(id, summary, result, status, parent_id)| ToolCall {
            id,
            name: "Bash".into(),
            summary,
            input: json!({"command": "ls"}),
            result,
            status,
            kind: ToolKind::Shell,
            parent_id,
            changes: Vec::new(),
        })
}

fn plan() -> impl Strategy<Value = Option<Plan>> {
    proptest::option::of(
        (
            opt_string(),
            proptest::collection::vec(small_string(), 0..3),
        )
            .prop_map(|(explanation, steps)| Plan {
                explanation,
                steps: steps
                    .into_iter()
                    .map(|text| PlanStep {
                        text,
                        status: StepStatus::InProgress,
                    })
                    .collect(),
            }),
    )
}

fn usage() -> impl Strategy<Value = Option<Usage>> {
    proptest::option::of((0u64..100, proptest::option::of(0.0f64..100.0)).prop_map(
        |(tokens, percent)| Usage {
            input_tokens: Some(tokens),
            context_percent: percent,
            ..Default::default()
        },
    ))
}

fn artifact() -> impl Strategy<Value = Artifact> {
    "[xy]{1,2}".prop_map(|name| Artifact {
        path: Some(format!("/tmp/{name}")),
        file_name: name,
        ..Default::default()
    })
}

fn phase() -> impl Strategy<Value = Phase> {
    prop_oneof![
        Just(Phase::Idle),
        Just(Phase::Queued),
        Just(Phase::Streaming),
        Just(Phase::Done)
    ]
}

prop_compose! {
    fn snapshot()(
        phase in phase(),
        ids in (opt_string(), opt_string(), opt_string(), opt_string()),
        texts in (small_string(), small_string(), small_string(), small_string()),
        plan in plan(),
        tool_calls in proptest::collection::vec(tool_call(), 0..4),
        usage in usage(),
        artifacts in proptest::collection::vec(artifact(), 0..3),
        queued in proptest::collection::vec(small_string(), 0..2),
        notices in proptest::collection::vec(small_string(), 0..2),
        degraded in proptest::collection::vec(small_string(), 0..2),
        error in opt_string(),
        incomplete in any::<bool>(),
        terminal in any::<bool>(),
        times in (proptest::option::of(0i64..5), 0i64..5),
    ) -> UniversalSnapshot {
        UniversalSnapshot {
            phase,
            task_id: ids.0,
            session_id: ids.1,
            agent: "echo".into(),
            recorded_agent: None,
            model: ids.2,
            effort: ids.3,
            prompt: texts.0,
            attachments: Vec::new(),
            text: texts.1,
            reasoning: texts.2,
            activity: texts.3,
            plan,
            tool_calls,
            sub_agents: Vec::new(),
            usage,
            artifacts,
            interactions: Vec::new(),
            queued: queued.into_iter().map(|prompt| QueuedPrompt { task_id: "t".into(), prompt, steer: false }).collect(),
            notices,
            mcp_servers: Vec::new(),
            commands: Vec::new(),
            degraded: degraded.into_iter().map(|capability| Degraded { capability, reason: "why".into() }).collect(),
            error,
            limit_hit: None,
            turn_diff: None,
            incomplete,
            terminal,
            started_at: times.0,
            updated_at: times.1,
        }
    }
}

/// `b` derived from `a` by the changes streaming makes (appends, upserts), so the
/// append and upsert encodings are exercised, not only replacement.
fn grown(a: UniversalSnapshot) -> impl Strategy<Value = (UniversalSnapshot, UniversalSnapshot)> {
    (
        small_string(),
        small_string(),
        tool_call(),
        proptest::collection::vec(artifact(), 0..2),
    )
        .prop_map(move |(more_text, more_reasoning, call, more_artifacts)| {
            let mut b = a.clone();
            b.text.push_str(&more_text);
            b.reasoning.push_str(&more_reasoning);
            match b.tool_calls.iter().position(|c| c.id == call.id) {
                Some(i) => b.tool_calls[i] = call,
                None => b.tool_calls.push(call),
            }
            b.artifacts.extend(more_artifacts);
            (a.clone(), b)
        })
}

fn round_trip_json(patch: &SnapshotPatch) -> SnapshotPatch {
    let text = serde_json::to_string(patch).unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
}

proptest! {
    #[test]
    fn apply_diff_rebuilds_arbitrary_snapshots(a in snapshot(), b in snapshot()) {
        let patch = diff(&a, &b);
        prop_assert_eq!(&apply(&a, &patch), &b);
        prop_assert_eq!(&apply(&a, &round_trip_json(&patch)), &b);
    }

    #[test]
    fn apply_diff_rebuilds_grown_snapshots((a, b) in snapshot().prop_flat_map(grown)) {
        let patch = diff(&a, &b);
        prop_assert_eq!(&apply(&a, &round_trip_json(&patch)), &b);
        prop_assert!(patch.text.is_none(), "growing text must travel as an append");
        prop_assert!(patch.tool_calls.is_none() || a.tool_calls.iter().map(|c| &c.id).collect::<std::collections::HashSet<_>>().len() != a.tool_calls.len());
    }

    #[test]
    fn a_merged_patch_applies_as_both_in_turn(
        (a, b) in snapshot().prop_flat_map(grown),
        c in snapshot(),
        grow_again in any::<bool>(),
    ) {
        // a → b (streaming), then b → c: grown again, or any snapshot at all.
        let c = if grow_again { let mut c = b.clone(); c.text.push_str("more"); c.updated_at += 1; c } else { c };
        let first = diff(&a, &b);
        let second = diff(&b, &c);
        let mut merged = first.clone();
        if merged.merge(&second) {
            prop_assert_eq!(&apply(&a, &merged), &c);
            prop_assert_eq!(&apply(&a, &round_trip_json(&merged)), &c);
        } else {
            prop_assert_eq!(&merged, &first, "a refused merge leaves the patch as it was");
            prop_assert!(second.task_id.is_some() || second.text.is_some() || second.reasoning.is_some()
                || second.tool_calls.is_some() || second.artifacts.is_some());
        }
        if grow_again {
            prop_assert!(diff(&b, &c).text_append.is_some());
        }
    }

    #[test]
    fn diff_of_equal_snapshots_is_empty(a in snapshot()) {
        prop_assert!(diff(&a, &a).is_empty());
    }
}

#[test]
fn a_cleared_field_travels_as_null() {
    let a = UniversalSnapshot {
        error: Some("boom".into()),
        model: Some("m".into()),
        ..Default::default()
    };
    let b = UniversalSnapshot::default();
    let patch = diff(&a, &b);
    let value = serde_json::to_value(&patch).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(value, json!({"error": null, "model": null}));
    assert_eq!(apply(&a, &round_trip_json(&patch)), b);
}

#[test]
fn an_appended_delta_costs_its_own_size() {
    let delta = "tok ";
    let mut a = UniversalSnapshot::default();
    let mut sizes = Vec::new();
    for n in [10usize, 10_000, 1_000_000] {
        a.text = "x".repeat(n);
        let mut b = a.clone();
        b.text.push_str(delta);
        let patch = diff(&a, &b);
        assert_eq!(patch.text_append.as_deref(), Some(delta));
        sizes.push(
            serde_json::to_string(&patch)
                .map(|s| s.len())
                .unwrap_or_default(),
        );
    }
    assert!(
        sizes.iter().all(|s| *s == sizes[0]),
        "patch size grew with the transcript: {sizes:?}"
    );
    assert!(sizes[0] < 40, "{sizes:?}");
}

#[test]
fn changing_one_of_many_tool_calls_sends_only_that_call() {
    let calls: Vec<ToolCall> = (0..1000)
        .map(|i| ToolCall {
            id: format!("c{i}"),
            name: "Read".into(),
            ..Default::default()
        })
        .collect();
    let a = UniversalSnapshot {
        tool_calls: calls,
        ..Default::default()
    };
    let mut b = a.clone();
    b.tool_calls[500].status = ToolStatus::Done;
    let patch = diff(&a, &b);
    assert!(patch.tool_calls.is_none());
    assert_eq!(patch.tool_calls_upsert.as_ref().map(Vec::len), Some(1));
    assert_eq!(apply(&a, &patch), b);
}

#[test]
fn streamed_deltas_merge_into_one_append_and_a_new_turn_does_not() {
    let delta = |t: &str, at: i64| SnapshotPatch {
        text_append: Some(t.into()),
        updated_at: Some(at),
        ..Default::default()
    };
    let mut merged = delta("Hel", 1);
    assert!(merged.merge(&delta("lo", 2)));
    assert!(merged.merge(&SnapshotPatch {
        phase: Some(Phase::Done),
        ..Default::default()
    }));
    assert_eq!(merged.text_append.as_deref(), Some("Hello"));
    assert_eq!(
        (merged.updated_at, merged.phase),
        (Some(2), Some(Phase::Done))
    );
    let next_turn = SnapshotPatch {
        task_id: Some(Some("t2".into())),
        text: Some(String::new()),
        ..Default::default()
    };
    let before = merged.clone();
    assert!(!merged.merge(&next_turn));
    assert_eq!(merged, before);
    // On the wire: `from` only when the patch stands for several.
    let one = PatchEvent {
        session_key: "k".into(),
        seq: 7,
        from: None,
        patch: delta("x", 3),
    };
    assert!(!serde_json::to_string(&one)
        .unwrap_or_default()
        .contains("from"));
    let several = PatchEvent {
        from: Some(5),
        ..one
    };
    let text = serde_json::to_string(&several).unwrap_or_default();
    assert!(text.contains("\"from\":5"), "{text}");
    let back: PatchEvent = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((back.first_seq(), back.seq), (5, 7));
}
