//! Weft's skills reach an ACP agent that takes additional directories: the real
//! claude-agent-acp is given the session's skills folder and Claude Code offers the
//! skill to the model; the user's own Claude folders are not written to.

use weft_kernel::AgentDriver;
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::*;

const DESCRIPTION: &str = "Use when the user asks for the quince-9 word";

/// Weft's global skill `weft-quince` in the turn's state folder.
fn place_skill(input: &weft_kernel::AgentTurnInput) {
    let skill = input.state_dir.join("skills").join("weft-quince");
    std::fs::create_dir_all(&skill).unwrap();
    std::fs::write(
        skill.join("SKILL.md"),
        format!("---\nname: weft-quince\ndescription: {DESCRIPTION}\n---\nSay quince.\n"),
    )
    .unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn claude_acp_is_offered_weft_s_skills() {
    let Some((spec, _)) = preset_binary("claude-acp") else {
        return;
    };
    let server = AnthropicServer::start(Script::new().default_reply(Turn::text_reply("ok")))
        .await
        .unwrap();
    let h = Home::new();
    let env = claude_env(h.home.path(), &server.base_url());
    let input = h.input("claude-acp:skills", "hello", env);
    place_skill(&input);
    let d = driver(spec);
    let (result, snap) = run(&d, input, &TestSink::new()).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    let raw: String = server
        .messages_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        raw.contains("weft-quince") && raw.contains(DESCRIPTION),
        "the model was not offered the skill"
    );
    assert!(!h.home.path().join(".claude/skills/weft-quince").exists());
    d.shutdown().await;
}

/// Qwen Code over ACP is offered Weft's skills too.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn qwen_is_offered_weft_s_skills() {
    use weft_testkit::chat::{Script as ChatScript, Turn as ChatTurn};
    let Some((spec, _)) = preset_binary("qwen") else {
        return;
    };
    let server = weft_testkit::ChatServer::start(
        ChatScript::new()
            .default_reply(ChatTurn::text_reply("ok"))
            .models(&["mock-model"]),
    )
    .await
    .unwrap();
    let h = Home::new();
    let env = super::chat_agents::qwen_setup(h.home.path(), &server.v1_url(), false);
    let input = h.input("qwen:skills", "hello", env);
    place_skill(&input);
    let d = driver(spec);
    let (result, snap) = run(&d, input, &TestSink::new()).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    let raw: String = server
        .chat_requests()
        .iter()
        .map(|r| format!("{:?}{:?}", r.messages(), r.tools()))
        .collect();
    assert!(
        raw.contains("weft-quince") && raw.contains(DESCRIPTION),
        "the model was not offered the skill: {raw}"
    );
    assert!(!h.home.path().join(".qwen/skills/weft-quince").exists());
    d.shutdown().await;
}
