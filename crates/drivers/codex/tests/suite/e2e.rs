//! The real `codex app-server` against the scripted Responses server, for what the
//! conformance suite does not cover: file changes with their diffs, reasoning,
//! cached-token usage, a model error, "deny and stop", web search, the rollout file
//! as a native session, and `info`.

use std::path::Path;
use std::time::Duration;

use serde_json::{json, Value};
use weft_codex::{CodexDriver, CODEX_ID};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_protocol::{permission, InteractionKind, InteractionResponse, ToolKind, ToolStatus};
use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{when, Script, Turn};

use super::support::{fast_config, new_sink, require_codex, rollouts, run_turn, CodexModel};

fn input(model: &CodexModel, work: &Path, key: &str, prompt: &str) -> AgentTurnInput {
    AgentTurnInput {
        session_key: format!("{CODEX_ID}:{key}"),
        task_id: "t".into(),
        prompt: prompt.into(),
        workdir: work.canonicalize().unwrap(),
        env: model.env(),
        ..Default::default()
    }
}

/// A model catalog naming `mock-model` after a catalog model that offers
/// `apply_patch` as a tool (the fallback metadata does not), from the binary itself.
async fn catalog_with_mock_model(program: &Path, home: &Path) -> String {
    let out = tokio::process::Command::new(program)
        .args(["debug", "models"])
        .env("CODEX_HOME", home)
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    let all: Value = serde_json::from_slice(&out.stdout).unwrap();
    let mut model = all["models"]
        .as_array()
        .unwrap()
        .iter()
        .find(|m| m["tool_mode"].is_null() && m["apply_patch_tool_type"].is_string())
        .cloned()
        .expect("a catalog model with classic tools");
    model["slug"] = json!("mock-model");
    model["upgrade"] = Value::Null;
    let path = home.join("weft-test-catalog.json");
    std::fs::write(&path, json!({"models": [model]}).to_string()).unwrap();
    format!(
        "model=\"mock-model\"\nmodel_catalog_json={}",
        json!(path.display().to_string())
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_file_change_asks_first_and_carries_its_diff() {
    let Some(bin) = require_codex() else { return };
    let patch = "*** Begin Patch\n*** Add File: hello.txt\n+hello from the patch\n*** End Patch\n";
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Patch it"),
                Turn::new().patch("call_p", patch),
            )
            .turn_when(
                when::tool_output_for("call_p"),
                Turn::text_reply("Patched."),
            ),
    )
    .await;
    let config = catalog_with_mock_model(&bin, model.home.path()).await;
    let model = model
        .with("WEFT_CODEX_CONFIG", &config)
        .with("WEFT_CODEX_APPROVAL_POLICY", "untrusted");
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let (result, snap) = run_turn(&d, input(&model, work.path(), "patch", "Patch it"), &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    let asked = sink.asked.lock().clone();
    assert_eq!(asked.len(), 1, "{asked:#?}");
    assert_eq!(asked[0].kind, InteractionKind::Permission);
    assert_eq!(asked[0].tool_name.as_deref(), Some("apply_patch"));
    let call = &snap.tool_calls[0];
    assert_eq!(call.name, "apply_patch");
    assert_eq!(call.kind, ToolKind::Write);
    assert_eq!(call.status, ToolStatus::Done);
    assert_eq!(call.input["changes"][0]["kind"], "add");
    assert_eq!(call.input["changes"][0]["diff"], "hello from the patch\n");
    // The normalized change: an added file as a unified diff (what a Claude Write gives).
    assert_eq!(call.changes.len(), 1, "{call:?}");
    assert_eq!(call.changes[0].kind, weft_protocol::ChangeKind::Add);
    assert!(call.changes[0].path.ends_with("hello.txt"), "{call:?}");
    assert!(
        call.changes[0].diff.starts_with("--- /dev/null\n+++ b/")
            && call.changes[0]
                .diff
                .ends_with("hello.txt\n@@ -0,0 +1 @@\n+hello from the patch\n"),
        "{}",
        call.changes[0].diff
    );
    assert!(call.summary.ends_with("hello.txt"), "{call:?}");
    assert_eq!(
        std::fs::read_to_string(work.path().join("hello.txt")).unwrap(),
        "hello from the patch\n"
    );
    assert_eq!(snap.text, "Patched.");
    d.shutdown().await;
}

/// A Codex update patch's normalized change: the same shape a Claude Edit of the same
/// edit gives (weft-claude's e2e `an_edit_carries_its_change_as_a_unified_diff`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_update_patch_is_the_same_change_shape_as_an_edit() {
    let Some(bin) = require_codex() else { return };
    let patch =
        "*** Begin Patch\n*** Update File: notes.txt\n@@\n one\n-two\n+2\n three\n*** End Patch\n";
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Edit the notes"),
                Turn::new().patch("call_u", patch),
            )
            .turn_when(when::tool_output_for("call_u"), Turn::text_reply("Edited.")),
    )
    .await;
    let config = catalog_with_mock_model(&bin, model.home.path()).await;
    let model = model
        .with("WEFT_CODEX_CONFIG", &config)
        .with("WEFT_CODEX_APPROVAL_POLICY", "untrusted");
    let work = tempfile::tempdir().unwrap();
    let dir = work.path().canonicalize().unwrap();
    let target = dir.join("notes.txt");
    std::fs::write(&target, "one\ntwo\nthree\n").unwrap();
    let d = CodexDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let (result, snap) = run_turn(&d, input(&model, &dir, "upd", "Edit the notes"), &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "one\n2\nthree\n");
    let call = snap
        .tool_calls
        .iter()
        .find(|c| c.name == "apply_patch")
        .unwrap();
    assert_eq!(call.status, ToolStatus::Done);
    let shown = target.display().to_string();
    let shown = shown.trim_start_matches('/');
    assert_eq!(
        call.changes,
        vec![weft_protocol::FileChange {
            path: target.display().to_string(),
            kind: weft_protocol::ChangeKind::Modify,
            diff: format!(
                "--- a/{shown}\n+++ b/{shown}\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
            ),
        }],
        "{call:#?}"
    );
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn reasoning_streams_and_usage_counts_every_response() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Think"),
                Turn::new()
                    .reasoning_chunks(&["Weighing ", "the options."])
                    .shell("call_r", "echo reasoned")
                    .usage(100, 10)
                    .usage_details(40, 3),
            )
            .turn_when(
                when::tool_output_for("call_r"),
                Turn::text_reply("Done thinking.")
                    .usage(200, 20)
                    .usage_details(60, 0),
            ),
    )
    .await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let (result, snap) = run_turn(&d, input(&model, work.path(), "r", "Think"), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.reasoning, "Weighing the options.");
    assert_eq!(snap.text, "Done thinking.");
    let u = snap.usage.unwrap();
    assert_eq!(u.input_tokens, Some(300));
    assert_eq!(u.output_tokens, Some(30));
    assert_eq!(u.cached_input_tokens, Some(100));
    assert_eq!(u.context_used_tokens, Some(220));
    assert_eq!(u.provider_name.as_deref(), Some("weft"));
    assert!(u.context_percent.is_some_and(|p| p > 0.0));
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_model_error_fails_the_turn_clearly_and_the_next_one_works() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(
        Script::new()
            .turn_when(when::user_text_contains("first"), Turn::status(500))
            .default_reply(Turn::text_reply("All good now.")),
    )
    .await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let (result, snap) = run_turn(&d, input(&model, work.path(), "e", "first"), &new_sink()).await;
    assert!(!result.ok);
    let error = result.error.clone().unwrap_or_default();
    assert!(!error.is_empty(), "{snap:#?}");
    assert!(snap.incomplete);
    let (next, snap) = run_turn(&d, input(&model, work.path(), "e", "second"), &new_sink()).await;
    assert!(next.ok, "{next:?}");
    assert_eq!(snap.text, "All good now.");
    assert_eq!(
        next.session_id, result.session_id,
        "the same thread goes on"
    );
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn deny_and_stop_ends_the_turn() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Touch"),
                Turn::new().shell("call_s", "touch stopped.txt"),
            )
            .default_reply(Turn::text_reply("should not be asked")),
    )
    .await
    .with("WEFT_CODEX_APPROVAL_POLICY", "untrusted");
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|_| {
        Some(InteractionResponse::select(
            weft_codex::interact::DENY_AND_STOP,
        ))
    });
    let (result, snap) = run_turn(&d, input(&model, work.path(), "s", "Touch it"), &sink).await;
    assert!(!result.ok);
    assert!(
        result.error.unwrap_or_default().contains("interrupted"),
        "{snap:#?}"
    );
    assert!(!work.path().join("stopped.txt").exists());
    assert_eq!(snap.tool_calls[0].status, ToolStatus::Failed);
    d.shutdown().await;
}

/// `requestUserInput` with several questions, each with options and "Other" (codex
/// refuses a question without options): one answered with a pick and text, one with
/// text alone. Each answer reaches the model under its question's id.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn several_questions_are_answered_each_with_picks_and_text() {
    if require_codex().is_none() {
        return;
    }
    let ask = json!({"questions": [
        {"id": "color", "header": "Color", "question": "Which color?", "isOther": true,
         "options": [{"label": "Red", "description": "warm"},
                     {"label": "Blue", "description": "cool"}]},
        {"id": "size", "header": "Size", "question": "Which size?", "isOther": true,
         "options": [{"label": "Small", "description": "s"},
                     {"label": "Large", "description": "l"}]}]});
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Ask me"),
                Turn::new().function_call("call_q", "request_user_input", ask),
            )
            .turn_when(
                when::tool_output_for("call_q"),
                Turn::new().echo_tool_output("GOT: "),
            ),
    )
    .await
    .with("WEFT_CODEX_COLLABORATION_MODE", "plan");
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let sink = new_sink();
    sink.answer_with(|i| {
        (i.kind == InteractionKind::UserInput).then(|| {
            let mut r = InteractionResponse::select("Blue");
            r.value = None;
            r.answers.insert("color".into(), "Blue".into());
            r.texts.insert("color".into(), "a darker blue".into());
            r.texts.insert("size".into(), "Family size".into());
            r
        })
    });
    let (result, snap) = run_turn(&d, input(&model, work.path(), "q", "Ask me two"), &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    let asked = sink.asked.lock().clone();
    assert_eq!(asked.len(), 1, "{snap:#?}");
    let qs = &asked[0].questions;
    assert_eq!(qs.len(), 2, "{qs:?}");
    assert!(qs[0].free_text && !qs[0].multiple, "{qs:?}");
    assert!(qs[1].free_text, "{qs:?}");
    let out = model
        .server
        .responses_requests()
        .iter()
        .find_map(|r| r.tool_output("call_q"))
        .unwrap_or_default();
    let got: Value = serde_json::from_str(&out).unwrap_or(Value::Null);
    assert_eq!(
        got,
        json!({"answers": {
            "color": {"answers": ["Blue", "a darker blue"]},
            "size": {"answers": ["Family size"]}}}),
        "{out}"
    );
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_web_search_is_a_fetch_call() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(Script::new().turn_when(
        when::user_text_contains("Search"),
        Turn::new().web_search("weft looms").text("Found it."),
    ))
    .await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let (result, snap) = run_turn(&d, input(&model, work.path(), "w", "Search"), &new_sink()).await;
    assert!(result.ok, "{result:?}");
    let call = snap
        .tool_calls
        .iter()
        .find(|c| c.name == "web_search")
        .unwrap_or_else(|| panic!("{snap:#?}"));
    assert_eq!(call.kind, ToolKind::Fetch);
    assert_eq!(call.status, ToolStatus::Done);
    assert!(call.summary.contains("weft looms"), "{call:?}");
    assert!(snap.text.contains("Found it."));
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_thread_is_listed_from_its_rollout_file() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(Script::new().default_reply(Turn::text_reply("Listed."))).await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let (result, _) = run_turn(
        &d,
        input(&model, work.path(), "n", "List me, please"),
        &new_sink(),
    )
    .await;
    assert!(result.ok);
    d.shutdown().await;
    let thread = result.session_id.unwrap();
    // The session library's reader finds the thread in its rollout.
    let s = rollouts(model.home.path())
        .into_iter()
        .find(|s| s.native_id.as_deref() == Some(thread.as_str()))
        .unwrap_or_else(|| panic!("{thread} not in the rollouts"));
    assert_eq!(s.workdir.as_deref(), work.path().to_str());
    assert_eq!(s.title().0, "List me, please");
    assert_eq!(s.messages, 2);
}

#[tokio::test]
async fn info_reports_the_installed_version() {
    if require_codex().is_none() {
        return;
    }
    let info = tokio::time::timeout(Duration::from_secs(30), CodexDriver::new().info())
        .await
        .unwrap();
    assert!(info.installed, "{info:?}");
    assert_eq!(info.version.as_deref(), Some("0.171.0"));
    assert!(info.capabilities.steer && info.capabilities.interact && info.capabilities.resume);
}

/// `listEffort {model}`: each model's own reasoning efforts as the real codex's
/// catalog (`codex debug models`) lists them, not the union over every model; a model
/// the catalog does not know (and "default") gets the union.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_model_offers_its_own_efforts() {
    let Some(bin) = require_codex() else {
        return;
    };
    let out = std::process::Command::new(&bin)
        .args(["debug", "models"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let catalog: Value = serde_json::from_slice(&out.stdout).unwrap();
    let own = |m: &Value| -> Vec<String> {
        m["supported_reasoning_levels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|l| l["effort"].as_str().map(String::from))
            .collect()
    };
    let listed: Vec<&Value> = catalog["models"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["visibility"] != "hide")
        .collect();
    let driver = CodexDriver::with_config(fast_config());
    let union = driver.model_efforts("default").await;
    let mut narrower = 0;
    for m in &listed {
        let slug = m["slug"].as_str().unwrap();
        let got = driver.model_efforts(slug).await;
        assert_eq!(got, own(m), "{slug}");
        assert!(
            got.iter().all(|e| union.contains(e)),
            "{slug}: {got:?} {union:?}"
        );
        narrower += usize::from(got.len() < union.len());
    }
    // The pinned codex's catalog has models that take fewer efforts than others: the
    // point of asking per model.
    assert!(narrower > 0, "every model takes every effort: {union:?}");
    assert_eq!(
        driver.model_efforts("a-model-codex-does-not-list").await,
        union
    );
}
