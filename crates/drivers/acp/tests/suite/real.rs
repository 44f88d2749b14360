//! The real agents over ACP (claude-agent-acp, `gemini --acp`) against the scripted
//! model servers: what the conformance suite does not cover.

use serde_json::json;
use weft_kernel::AgentDriver;
use weft_protocol::{ToolKind, ToolStatus};
use weft_testkit::gemini::{when as gwhen, Script as GScript, Turn as GTurn};
use weft_testkit::{AnthropicServer, GeminiServer, Script, Turn};

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_acp_text_tool_and_models() {
    let Some((spec, _)) = preset_binary("gemini-acp") else {
        return;
    };
    let script = GScript::new()
        .rule(
            gwhen::function_response_for("run_shell_command"),
            GTurn::text_reply("The tool has finished."),
        )
        .turn(
            GTurn::new()
                .thought("Let me run it.")
                .text("Calling the tool.")
                .function_call(
                    "run_shell_command",
                    json!({"command": "echo weft-acp-tool"}),
                ),
        );
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new();
    gemini_home(
        h.home.path(),
        json!({"tools": {"allowed": ["run_shell_command"]}}),
    );
    let env = gemini_env(h.home.path(), &server.base_url());
    let d = driver(spec);
    let sink = TestSink::new();
    let (result, snap) = run(&d, h.input("gemini-acp:a", "Run the tool.", env), &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    eprintln!("{snap:#?}");
    let call = &snap.tool_calls[0];
    assert_eq!(call.name, "run_shell_command");
    assert_eq!(call.kind, ToolKind::Shell);
    assert_eq!(call.status, ToolStatus::Done);
    assert!(snap.text.contains("The tool has finished."), "{snap:#?}");
    let models = d.models().await;
    eprintln!("{models:#?}");
    assert!(models.iter().any(|m| m.id == "mode:plan"), "{models:?}");
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_acp_text_and_tool() {
    let Some((spec, _)) = preset_binary("claude-acp") else {
        return;
    };
    let script = Script::new()
        .rule(
            weft_testkit::anthropic::when::tool_result_for("toolu_1"),
            Turn::text_reply("The tool has finished."),
        )
        .rule(
            weft_testkit::anthropic::when::no_tools(),
            Turn::text_reply("title"),
        )
        .turn(Turn::new().text("Calling Bash.").tool_use(
            "toolu_1",
            "Bash",
            json!({"command": "echo weft-acp-tool"}),
        ));
    let server = AnthropicServer::start(script).await.unwrap();
    let h = Home::new();
    let env = claude_env(h.home.path(), &server.base_url());
    std::fs::create_dir_all(h.home.path().join(".claude")).unwrap();
    std::fs::write(
        h.home.path().join(".claude/settings.json"),
        r#"{"permissions":{"allow":["Bash"]}}"#,
    )
    .unwrap();
    let d = driver(spec);
    let sink = TestSink::new();
    let (result, snap) = run(&d, h.input("claude-acp:a", "Run the tool.", env), &sink).await;
    eprintln!("{snap:#?}");
    assert!(result.ok, "{result:?} {snap:#?}");
    let call = &snap.tool_calls[0];
    assert_eq!(call.name, "Bash");
    assert_eq!(call.status, ToolStatus::Done);
    assert!(snap.text.contains("The tool has finished."), "{snap:#?}");
    d.shutdown().await;
}

/// gemini 0.61.0's `session/load` (why the `gemini-acp` preset never tries it): a
/// session made over ACP in one process usually cannot be loaded in the next — the
/// CLI answers "No previous sessions found for this project" unless it happened to
/// record the project (`projects.json`) before the first process ended, which it does
/// late and not always. Either way the driver goes on: a refused load is a notice and
/// a new session.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_acp_session_load_is_unreliable_in_this_version() {
    let Some((mut spec, _)) = preset_binary("gemini-acp") else {
        return;
    };
    spec.load_session = true;
    let server = GeminiServer::start(GScript::new().default_reply(GTurn::text_reply("Noted.")))
        .await
        .unwrap();
    let h = Home::new();
    gemini_home(h.home.path(), json!({}));
    let env = gemini_env(h.home.path(), &server.base_url());
    let d = driver(spec.clone());
    let (r, _) = run(
        &d,
        h.input("g:l", "Remember otter.", env.clone()),
        &TestSink::new(),
    )
    .await;
    assert!(r.ok, "{r:?}");
    d.shutdown().await;
    let d2 = driver(spec);
    let mut input = h.input("g:l", "What was the word?", env);
    input.session_id = r.session_id.clone();
    let sink = TestSink::new();
    let (r2, snap) = run(&d2, input, &sink).await;
    d2.shutdown().await;
    assert!(r2.ok, "{r2:?}");
    let refused = snap
        .notices
        .iter()
        .any(|n| n.starts_with("Could not resume session"));
    if refused {
        assert_ne!(r2.session_id, r.session_id);
    } else {
        eprintln!("gemini loaded the session this time (its project was recorded in time)");
        assert_eq!(r2.session_id, r.session_id);
    }
}

/// claude-agent-acp asks Claude's AskUserQuestion as a form elicitation, each question
/// with an "Other" box: a `multiSelect` question takes several picks, another the
/// free text; the real Claude underneath gets both.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_acp_question_takes_several_picks_and_other_text() {
    let Some((spec, _)) = preset_binary("claude-acp") else {
        return;
    };
    let script = Script::new()
        .rule(
            weft_testkit::anthropic::when::tool_result_for("toolu_q"),
            Turn::text_reply("Ordered."),
        )
        .rule(
            weft_testkit::anthropic::when::no_tools(),
            Turn::text_reply("title"),
        )
        .turn(Turn::new().tool_use(
            "toolu_q",
            "AskUserQuestion",
            json!({"questions": [
                {"question": "Which toppings?", "header": "Toppings", "multiSelect": true,
                 "options": [{"label": "Cheese", "description": "c"},
                             {"label": "Olives", "description": "o"},
                             {"label": "Basil", "description": "b"}]},
                {"question": "Which size?", "header": "Size", "multiSelect": false,
                 "options": [{"label": "Small", "description": "s"},
                             {"label": "Large", "description": "l"}]}]}),
        ));
    let server = AnthropicServer::start(script).await.unwrap();
    let h = Home::new();
    let env = claude_env(h.home.path(), &server.base_url());
    let d = driver(spec);
    let sink = TestSink::new();
    sink.answer_with(|i| {
        let multi = i.questions.iter().find(|q| q.multiple)?.id.clone();
        let single = i
            .questions
            .iter()
            .find(|q| !q.multiple && !q.choices.is_empty())?
            .id
            .clone();
        let mut r = weft_protocol::InteractionResponse::select("Cheese");
        r.value = None;
        r.selected
            .insert(multi, vec!["Cheese".into(), "Basil".into()]);
        r.texts.insert(single, "Family size".into());
        Some(r)
    });
    let (result, snap) = run(&d, h.input("claude-acp:q", "Order a pizza.", env), &sink).await;
    d.shutdown().await;
    let asked = sink.asked.lock().clone();
    assert!(result.ok, "{result:?} {asked:#?} {snap:#?}");
    let answer = server
        .messages_requests()
        .iter()
        .find_map(|r| r.last_tool_result("toolu_q"))
        .unwrap_or_default();
    assert_eq!(
        asked[0].questions.len(),
        2,
        "the Other boxes are folded: {asked:#?}"
    );
    assert!(asked[0].questions.iter().all(|q| q.free_text), "{asked:#?}");
    assert!(
        answer.contains("\"Which toppings?\"=\"Cheese, Basil\"")
            && answer.contains("\"Which size?\"=\"Family size\""),
        "{answer} {asked:#?}"
    );
}
