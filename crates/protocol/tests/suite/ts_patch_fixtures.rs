//! Patch fixtures for the UI's TypeScript `apply` (ui/src/lib/patch.ts): for each case
//! the previous snapshot, the patch and the expected next snapshot, as the Rust side
//! serializes them. The UI's tests apply each patch and compare the result byte for
//! byte with `<case>.next.json`. This test fails when the committed fixtures drift;
//! run it with `WEFT_UPDATE_FIXTURES=1` to rewrite them.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde_json::json;
use weft_protocol::*;

fn call(id: &str, status: ToolStatus, kind: ToolKind, parent: Option<&str>) -> ToolCall {
    ToolCall {
        id: id.into(),
        name: match kind {
            ToolKind::Shell => "Bash".into(),
            ToolKind::Edit => "Edit".into(),
            ToolKind::Task => "Task".into(),
            _ => "Read".into(),
        },
        summary: format!("call {id}"),
        input: json!({"command": format!("echo {id}"), "flags": ["-a", null, true], "n": 1.5}),
        result: (status != ToolStatus::Running).then(|| format!("result of {id}\nline 2 ✓")),
        status,
        kind,
        parent_id: parent.map(Into::into),
        changes: Vec::new(),
    }
}

fn base() -> UniversalSnapshot {
    UniversalSnapshot {
        phase: Phase::Streaming,
        task_id: Some("t1".into()),
        session_id: Some("s-1".into()),
        agent: "echo".into(),
        recorded_agent: None,
        model: Some("echo-1".into()),
        effort: None,
        prompt: "list the files, then \"quote\" <b>me</b>".into(),
        attachments: Vec::new(),
        text: "Hello".into(),
        reasoning: "thinking".into(),
        activity: "call a running".into(),
        plan: Some(Plan {
            explanation: None,
            steps: vec![
                PlanStep {
                    text: "read".into(),
                    status: StepStatus::Completed,
                },
                PlanStep {
                    text: "write".into(),
                    status: StepStatus::InProgress,
                },
            ],
        }),
        tool_calls: vec![
            call("a", ToolStatus::Running, ToolKind::Shell, None),
            call("b", ToolStatus::Done, ToolKind::Task, None),
            call("c", ToolStatus::Failed, ToolKind::Edit, Some("b")),
        ],
        sub_agents: vec![SubAgent {
            id: "b".into(),
            name: "explorer".into(),
            summary: "look around".into(),
            status: ToolStatus::Running,
            result: None,
        }],
        usage: Some(Usage {
            input_tokens: Some(1200),
            output_tokens: Some(34),
            context_percent: Some(12.5),
            cost_usd: Some(0.0123),
            ..Default::default()
        }),
        artifacts: vec![Artifact {
            path: Some("/tmp/out.txt".into()),
            file_name: "out.txt".into(),
            ..Default::default()
        }],
        interactions: Vec::new(),
        queued: vec![QueuedPrompt {
            task_id: "t2".into(),
            prompt: "next".into(),
            steer: false,
        }],
        notices: Vec::new(),
        mcp_servers: Vec::new(),
        commands: Vec::new(),
        degraded: Vec::new(),
        error: None,
        limit_hit: None,
        turn_diff: None,
        incomplete: false,
        terminal: false,
        started_at: Some(1_700_000_000_000),
        updated_at: 1_700_000_000_500,
    }
}

fn permission() -> Interaction {
    Interaction {
        verdict: None,
        prompt_id: "p1".into(),
        kind: InteractionKind::Permission,
        title: "Run Bash?".into(),
        detail: Some("rm -rf build".into()),
        tool_name: Some("Bash".into()),
        tool_input: Some(json!({"command": "rm -rf build"})),
        questions: vec![Question {
            id: "q".into(),
            text: "Allow?".into(),
            kind: QuestionType::Select,
            choices: vec![
                Choice {
                    label: "Allow".into(),
                    value: permission::ALLOW.into(),
                },
                Choice {
                    label: "Deny".into(),
                    value: permission::DENY.into(),
                },
            ],
            multiple: false,
            free_text: false,
        }],
    }
}

/// `(name, prev, next)`: each case exercises one encoding of the patch algebra.
fn cases() -> Vec<(&'static str, UniversalSnapshot, UniversalSnapshot)> {
    let b = base();
    let mut out = Vec::new();
    let mut push = |name, f: &dyn Fn(&mut UniversalSnapshot)| {
        let mut next = b.clone();
        f(&mut next);
        next.updated_at += 1;
        out.push((name, b.clone(), next));
    };
    push("text-append", &|s| {
        s.text
            .push_str(", world — ünïcode 🎉\n```rust\nfn main() {}\n```")
    });
    push("text-replace", &|s| s.text = "Goodbye".into());
    push("reasoning-append", &|s| s.reasoning.push_str(" harder"));
    push("reasoning-replace", &|s| s.reasoning = String::new());
    push("tool-upsert-update", &|s| {
        s.tool_calls[0] = call("a", ToolStatus::Done, ToolKind::Shell, None);
        s.activity = "call a done".into();
    });
    push("tool-upsert-append", &|s| {
        s.tool_calls
            .push(call("d", ToolStatus::Running, ToolKind::Read, Some("b")));
    });
    push("tool-replace", &|s| {
        s.tool_calls = vec![call("z", ToolStatus::Running, ToolKind::Other, None)]
    });
    push("tool-clear", &|s| s.tool_calls.clear());
    push("plan-update", &|s| {
        s.plan = Some(Plan {
            explanation: Some("because".into()),
            steps: vec![PlanStep {
                text: "write".into(),
                status: StepStatus::Completed,
            }],
        })
    });
    push("plan-clear", &|s| s.plan = None);
    push("usage-update", &|s| {
        s.usage = Some(Usage {
            input_tokens: Some(2400),
            output_tokens: Some(99),
            cached_input_tokens: Some(100),
            context_used_tokens: Some(4096),
            context_percent: Some(2.5),
            cost_usd: Some(0.75),
            provider_name: Some("anthropic".into()),
        })
    });
    push("usage-clear", &|s| s.usage = None);
    push("artifacts-append", &|s| {
        s.artifacts.push(Artifact {
            url: Some("https://example.invalid/a.png".into()),
            file_name: "a.png".into(),
            mime: Some("image/png".into()),
            kind: ArtifactKind::Photo,
            caption: Some("a chart".into()),
            ..Default::default()
        })
    });
    push("artifacts-replace", &|s| s.artifacts.clear());
    push("interaction-open", &|s| s.interactions = vec![permission()]);
    push("queue-change", &|s| {
        s.queued.push(QueuedPrompt {
            task_id: "t3".into(),
            prompt: "steered".into(),
            steer: true,
        })
    });
    push("subagent-done", &|s| {
        s.sub_agents[0].status = ToolStatus::Done;
        s.sub_agents[0].result = Some("found it".into());
    });
    push("error-and-done", &|s| {
        s.phase = Phase::Done;
        s.error = Some("agent exited with 1".into());
        s.incomplete = true;
        s.notices = vec!["stopped by the user".into()];
        s.activity = String::new();
    });
    push("clear-optionals", &|s| {
        s.model = None;
        s.session_id = None;
        s.started_at = None;
        s.task_id = None;
    });
    push("next-turn", &|s| {
        *s = UniversalSnapshot {
            phase: Phase::Streaming,
            task_id: Some("t2".into()),
            session_id: s.session_id.clone(),
            agent: "echo".into(),
            model: Some("echo-1".into()),
            effort: Some("high".into()),
            prompt: "next".into(),
            started_at: Some(1_700_000_001_000),
            updated_at: s.updated_at,
            ..Default::default()
        }
    });
    push("unchanged-but-time", &|_| {});
    // A cleared field on a snapshot that had it, the other way round.
    let mut with_error = b.clone();
    with_error.error = Some("boom".into());
    let mut cleared = with_error.clone();
    cleared.error = None;
    cleared.updated_at += 1;
    out.push(("error-clear", with_error, cleared));
    out
}

/// Struct fields serialize in declaration order either way; the `json!` literals above
/// list their keys sorted, so the files are the same whether or not another crate in
/// the build turns on serde_json's `preserve_order`.
fn to_json<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_else(|e| panic!("{e}")) + "\n"
}

fn fixtures() -> BTreeMap<String, String> {
    let mut files = BTreeMap::new();
    let mut index = Vec::new();
    for (name, prev, next) in cases() {
        let patch = diff(&prev, &next);
        assert_eq!(apply(&prev, &patch), next, "{name}: diff/apply disagree");
        files.insert(format!("{name}.prev.json"), to_json(&prev));
        files.insert(format!("{name}.patch.json"), to_json(&patch));
        files.insert(format!("{name}.next.json"), to_json(&next));
        index.push(name);
    }
    files.insert("index.json".into(), to_json(&index));
    files
}

#[test]
fn ts_patch_fixtures_are_current() {
    let dir: PathBuf = [
        env!("CARGO_MANIFEST_DIR"),
        "..",
        "..",
        "ui",
        "src",
        "lib",
        "fixtures",
    ]
    .iter()
    .collect();
    let fresh = fixtures();
    if std::env::var_os("WEFT_UPDATE_FIXTURES").is_some() {
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
        for (name, text) in &fresh {
            std::fs::write(dir.join(name), text).unwrap_or_else(|e| panic!("{e}"));
        }
        return;
    }
    let mut committed = BTreeMap::new();
    if let Ok(entries) = std::fs::read_dir(&dir) {
        for entry in entries.flatten() {
            let name = entry.file_name().to_string_lossy().into_owned();
            committed.insert(
                name,
                std::fs::read_to_string(entry.path()).unwrap_or_default(),
            );
        }
    }
    let stale: Vec<&String> = fresh
        .iter()
        .filter(|(name, text)| committed.get(*name) != Some(*text))
        .map(|(name, _)| name)
        .chain(committed.keys().filter(|name| !fresh.contains_key(*name)))
        .collect();
    assert!(
        stale.is_empty(),
        "ui/src/lib/fixtures is out of date for {stale:?}; run `WEFT_UPDATE_FIXTURES=1 cargo test -p weft-protocol --test all ts_patch_fixtures`"
    );
}
