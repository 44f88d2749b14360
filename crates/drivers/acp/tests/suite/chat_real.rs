//! One turn of each agent that takes an OpenAI-compatible base URL, through the driver:
//! what the conformance suite does not check — the key the agent sent the endpoint,
//! and the commands, models and modes it announced.

use weft_kernel::AgentDriver;
use weft_testkit::chat::{Script, Turn};
use weft_testkit::ChatServer;

use super::chat_agents::{preset, ChatAgent, COPILOT, HERMES, KIMI, QWEN};
use super::support::*;

async fn one_turn(agent: &ChatAgent, mode: Option<&str>) {
    let Some(_) = preset_binary(agent.id) else {
        return;
    };
    let server = ChatServer::start(Script::new().default_reply(Turn::text_reply("Hi there.")))
        .await
        .unwrap();
    let h = Home::new();
    let mut env = (agent.setup)(h.home.path(), &server.v1_url(), false);
    if let Some(mode) = mode {
        let name = weft_acp::config::mode_env_name(agent.id);
        env.retain(|(k, _)| *k != name);
        env.push((name, mode.into()));
    }
    let d = driver(preset(agent.id));
    let key = format!("{}:a", agent.id);
    let sink = TestSink::new();
    let (result, snap) = run(&d, h.input(&key, "Say hello.", env.clone()), &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    assert!(snap.text.contains("Hi there."), "{snap:#?}");
    // A second turn in the live session: an agent that announces its commands late
    // (Qwen, half a second after session/new) has them read by then.
    let mut again = h.input(&key, "Again.", env.clone());
    again.session_id = result.session_id.clone();
    let (second, _) = run(&d, again, &TestSink::new()).await;
    assert!(second.ok, "{second:?}");
    // On a loaded machine the announcement can come later still: a few more turns.
    for _ in 0..4 {
        if !d.available_commands(&key).is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_secs(1)).await;
        let mut more = h.input(&key, "Again.", env.clone());
        more.session_id = result.session_id.clone();
        let (more, _) = run(&d, more, &TestSink::new()).await;
        assert!(more.ok, "{more:?}");
    }
    let sent = server.chat_requests();
    assert!(!sent.is_empty());
    assert!(
        sent.iter().all(|r| r.bearer() == Some("sk-test")),
        "{}: a request without the configured key: {:?}",
        agent.id,
        sent.iter()
            .map(|r| r.header("authorization"))
            .collect::<Vec<_>>()
    );
    assert!(
        sent.iter().any(|r| r.stream()),
        "{}: nothing streamed",
        agent.id
    );
    assert!(
        !d.available_commands(&key).is_empty(),
        "{}: no slash commands announced",
        agent.id
    );
    let models = d.models().await;
    assert!(
        models.iter().any(|m| m.id.starts_with("mode:")),
        "{}: no modes: {models:#?}",
        agent.id
    );
    if let Some(mode) = mode {
        assert!(
            snap.notices.iter().all(|n| !n.contains("Could not switch")),
            "{}: {:?}",
            agent.id,
            snap.notices
        );
        assert!(
            models.iter().any(|m| m.id == format!("mode:{mode}")),
            "{models:#?}"
        );
    }
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_turn_key_commands_and_modes() {
    one_turn(&QWEN, Some("plan")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_turn_key_commands_and_modes() {
    // Copilot's modes are URLs; session/set_mode takes them as they are.
    one_turn(
        &COPILOT,
        Some("https://agentclientprotocol.com/protocol/session-modes#plan"),
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn hermes_turn_key_commands_and_modes() {
    one_turn(&HERMES, Some("accept_edits")).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kimi_turn_key_commands_and_modes() {
    one_turn(&KIMI, None).await;
}
