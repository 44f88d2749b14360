//! Whole-process turn latency (not a test: run with
//! `cargo test --release -p weft-acp --test all measure -- --ignored --nocapture`;
//! figures in BENCHMARKS.md).

use std::time::{Duration, Instant};

use weft_acp::AcpDriver;
use weft_kernel::AgentDriver;
use weft_testkit::{AnthropicServer, ChatServer, ResponsesServer, Script, Turn};

use super::chat_agents::{preset, ChatAgent, COPILOT, HERMES, KIMI, QWEN};
use super::support::*;

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

async fn measure(name: &str, d: &AcpDriver, env: Vec<(String, String)>, h: &Home) {
    let (mut cold, mut warm) = (Vec::new(), Vec::new());
    for i in 0..5 {
        let key = format!("m:{i}");
        let t = Instant::now();
        let (r, _) = run(d, h.input(&key, "hello", env.clone()), &TestSink::new()).await;
        cold.push(t.elapsed());
        assert!(r.ok, "{r:?}");
        let mut input = h.input(&key, "again", env.clone());
        input.session_id = r.session_id.clone();
        let t = Instant::now();
        let (r2, _) = run(d, input, &TestSink::new()).await;
        warm.push(t.elapsed());
        assert!(r2.ok, "{r2:?}");
        d.close_session(&key).await;
    }
    eprintln!(
        "{name} turn latency (median of 5): cold (spawn, initialize, session/new, prompt) {:?}; warm {:?}",
        median(cold),
        median(warm)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test"]
async fn measure_turn_latency() {
    let h = Home::new();
    let script = format!(
        "{}/tests/fixtures/fake_agent.js",
        env!("CARGO_MANIFEST_DIR")
    );
    let mut spec = weft_acp::AcpSpec::new("fake", "node", &[]);
    spec.args = vec![script];
    measure("fake agent (node)", &AcpDriver::new(spec), vec![], &h).await;
    if let Some((spec, _)) = preset_binary("claude-acp") {
        let server = AnthropicServer::start(Script::new().default_reply(Turn::text_reply("ok")))
            .await
            .unwrap();
        let env = claude_env(h.home.path(), &server.base_url());
        measure("claude-agent-acp", &driver(spec), env, &h).await;
    }
}

/// The agents that take an OpenAI-compatible base URL, against the scripted Chat
/// Completions server, and codex-acp against the Responses server.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
#[ignore = "a measurement, not a test"]
async fn measure_turn_latency_chat_agents() {
    let agents: [&ChatAgent; 4] = [&QWEN, &COPILOT, &HERMES, &KIMI];
    for agent in agents {
        if preset_binary(agent.id).is_none() {
            continue;
        }
        let h = Home::new();
        let server = ChatServer::start(
            weft_testkit::chat::Script::new()
                .default_reply(weft_testkit::chat::Turn::text_reply("ok")),
        )
        .await
        .unwrap();
        let env = (agent.setup)(h.home.path(), &server.v1_url(), false);
        measure(agent.id, &driver(preset(agent.id)), env, &h).await;
    }
    if preset_binary("codex-acp").is_some() {
        let h = Home::new();
        let server = ResponsesServer::start(
            weft_testkit::openai::Script::new()
                .default_reply(weft_testkit::openai::Turn::text_reply("ok")),
        )
        .await
        .unwrap();
        std::fs::write(
            h.home.path().join("config.toml"),
            super::codex_acp::config(&server.v1_url(), false),
        )
        .unwrap();
        let home = h.home.path().display().to_string();
        let env = vec![
            ("CODEX_HOME".into(), home.clone()),
            ("HOME".into(), home),
            ("WEFT_TEST_OPENAI_KEY".into(), "sk-test".into()),
        ];
        measure("codex-acp", &driver(preset("codex-acp")), env, &h).await;
    }
}
