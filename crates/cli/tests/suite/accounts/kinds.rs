//! The native agent's `endpoint` accounts (base URL, protocol, models, key) against
//! scripted servers of two protocols, and an ACP agent's `env` account whose variables
//! (its key among them, in the variable it names) reach the real claude-agent-acp.

use weft_testkit::{AnthropicServer, ResponsesServer, Script, Turn};

use super::{agent_bin, only_credential, secret, World};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn native_endpoint_accounts_carry_their_protocol_url_model_and_key() {
    let anthropic =
        AnthropicServer::start(Script::new().default_reply(Turn::new().text("native on messages")))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let responses = ResponsesServer::start(
        weft_testkit::openai::Script::new()
            .default_reply(weft_testkit::openai::Turn::new().text("native on responses")),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new("http://127.0.0.1:9");
    // An ambient endpoint of the user's own: an account's must win over it.
    w.vars
        .push(("ANTHROPIC_API_KEY".into(), "sk-ambient-native".into()));
    let (ka, ko) = (secret("native-a"), secret("native-o"));
    let Some(na) = w.add_account(
        ["native", "endpoint", "messages", &anthropic.base_url()],
        &[
            "--protocol",
            "anthropic-messages",
            "--model",
            "claude-scripted-1",
        ],
        &ka,
    ) else {
        return;
    };
    let no = w
        .add_account(
            ["native", "endpoint", "responses", &responses.v1_url()],
            &[
                "--protocol",
                "openai-responses",
                "--model",
                "gpt-scripted-1",
            ],
            &ko,
        )
        .unwrap_or_default();
    for (id, want) in [(&na, "native on messages"), (&no, "native on responses")] {
        w.run_on("native", id, "hi", want);
    }
    only_credential(&anthropic.recorder().requests(), ("x-api-key", &ka));
    assert!(anthropic
        .messages_requests()
        .iter()
        .all(|r| r.model() == "claude-scripted-1"));
    only_credential(
        &responses.recorder().requests(),
        ("authorization", &format!("Bearer {ko}")),
    );
    assert!(responses
        .responses_requests()
        .iter()
        .all(|r| r.model() == "gpt-scripted-1"));

    // A native account without its protocol is refused, naming the flag.
    let said = w.refused_add(
        &[
            "--agent",
            "native",
            "--kind",
            "endpoint",
            "--label",
            "x",
            "--base-url",
            "http://127.0.0.1:9",
        ],
        "k",
    );
    assert!(said.contains("--protocol"));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_agents_env_account_gives_it_its_variables_and_its_key() {
    if agent_bin("claude-agent-acp").is_none() {
        return;
    }
    let Some(claude) = agent_bin("claude") else {
        return;
    };
    let server =
        AnthropicServer::start(Script::new().default_reply(Turn::new().text("acp on its account")))
            .await
            .unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new("http://127.0.0.1:9");
    let key = secret("acp");
    let base = format!("ANTHROPIC_BASE_URL={}", server.base_url());
    let exe = format!(
        "CLAUDE_CODE_EXECUTABLE={}",
        claude.canonicalize().unwrap_or(claude.clone()).display()
    );
    let Some(id) = w.add_with_secret(
        &[
            "--agent",
            "claude-acp",
            "--kind",
            "env",
            "--label",
            "acp key",
            "--env",
            &base,
            "--env",
            &exe,
            "--env",
            "CLAUDE_CODE_ENABLE_TASKS=0",
            "--env",
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
            "--env",
            "CLAUDE_CODE_MAX_RETRIES=0",
            "--env",
            "IS_SANDBOX=1",
            "--secret-var",
            "ANTHROPIC_API_KEY",
        ],
        &key,
    ) else {
        return;
    };
    let record = w.account(&id);
    assert_eq!(record["secretVar"], "ANTHROPIC_API_KEY", "{record}");
    w.run_on("claude-acp", &id, "hello over acp", "acp on its account");
    only_credential(&server.recorder().requests(), ("x-api-key", &key));

    // An env account's secret goes in a named variable, and only an ACP agent's.
    let said = w.refused_add(
        &["--agent", "claude-acp", "--kind", "env", "--label", "y"],
        "k",
    );
    assert!(said.contains("--secret-var"));
}
