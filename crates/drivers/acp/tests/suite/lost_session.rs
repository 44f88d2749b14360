//! An ACP agent whose `session/load` fails starts a new session: with Weft's handover
//! of the conversation (what a change of agent gives), and the session says it lost
//! the agent's own context until a later load succeeds. The real claude-agent-acp
//! against the scripted Anthropic server.

use std::sync::Arc;

use weft_kernel::AgentDriver;
use weft_protocol::degraded::capability::CONTEXT;
use weft_protocol::DriverEvent;
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::*;

const HANDOVER: &str = "Weft handover: the user asked you to remember the word otter.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_failed_session_load_starts_from_the_handover_and_says_the_context_is_lost() {
    let Some((spec, _)) = preset_binary("claude-acp") else {
        return;
    };
    assert!(spec.load_session, "claude-acp reloads sessions");
    let script = Script::new()
        .rule(
            weft_testkit::anthropic::when::no_tools(),
            Turn::text_reply("title"),
        )
        .default_reply(Turn::text_reply("The word was otter."));
    let server = AnthropicServer::start(script).await.unwrap();
    let h = Home::new();
    let env = claude_env(h.home.path(), &server.base_url());

    // A session the agent never had (its files were removed, another machine's id).
    let gone = "0b9a3c1e-5f7d-4e2a-9c8b-1d2e3f4a5b6c";
    let mut input = h.input("claude-acp:lost", "What was the word?", env.clone());
    input.session_id = Some(gone.into());
    input.lost_session_handover = Some(Arc::new(|| HANDOVER.to_string()));
    let d = driver(spec.clone());
    let sink = TestSink::new();
    let (r, snap) = run(&d, input, &sink).await;
    assert!(r.ok, "{r:?} {snap:#?}");
    let new_id = r.session_id.clone().unwrap_or_default();
    assert_ne!(new_id, gone, "a new session");
    // Claude Code writes its session file behind the turn's end: closed before that,
    // the next process has nothing to load.
    let projects = h.home.path().join(".claude/projects");
    let file = format!("{new_id}.jsonl");
    let written = || {
        std::fs::read_dir(&projects)
            .into_iter()
            .flatten()
            .flatten()
            .any(|dir| dir.path().join(&file).is_file())
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(20);
    while !written() && std::time::Instant::now() < deadline {
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    d.shutdown().await;
    let lost = snap
        .degraded
        .iter()
        .find(|d| d.capability == CONTEXT)
        .unwrap_or_else(|| panic!("no lost context in {snap:#?}"));
    assert!(lost.reason.contains(gone), "{lost:?}");
    assert!(lost.reason.contains("handover"), "{lost:?}");
    let asked = server
        .messages_requests()
        .into_iter()
        .find(|m| m.all_text().contains("What was the word?"))
        .unwrap_or_else(|| panic!("the prompt never reached the model"));
    assert!(
        asked.body.to_string().contains(HANDOVER),
        "the handover went with the prompt: {}",
        asked.body
    );

    // A later process reloads the new session: the agent has its own context again.
    let mut input = h.input("claude-acp:lost", "And now?", env);
    input.session_id = Some(new_id.clone());
    input.lost_session_handover = Some(Arc::new(|| HANDOVER.to_string()));
    let d = driver(spec);
    let sink = TestSink::new();
    sink.accumulate(|acc| {
        acc.apply(
            &DriverEvent::Degraded {
                capability: CONTEXT.into(),
                reason: Some(lost.reason.clone()),
            },
            0,
        )
    });
    let (r, snap) = run(&d, input, &sink).await;
    d.shutdown().await;
    assert!(r.ok, "{r:?} {snap:#?}");
    assert_eq!(
        r.session_id.as_deref(),
        Some(new_id.as_str()),
        "reloaded: {:?}",
        snap.notices
    );
    assert!(snap.degraded.is_empty(), "{:#?}", snap.degraded);
}
