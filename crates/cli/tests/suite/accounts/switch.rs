//! Switching a session's account: `weft accounts switch --continue` runs the cut-short
//! prompt again on the new account (the agent resumes its own session there), and a
//! switch the agent's session cannot follow (a Claude session moving to a gateway) is
//! explained and refused until confirmed, then goes on from a handover — the real
//! claude against scripted servers.

use std::process::Output;

use serde_json::Value;
use weft_testkit::{AnthropicServer, Script, Turn};

use super::{agent_bin, only_credential, secret, World};

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_switches_account_and_continues_and_is_warned_before_one_it_cannot_follow() {
    let Some(claude) = agent_bin("claude") else {
        return;
    };
    let reply = |t: &str| Script::new().default_reply(Turn::new().text(t));
    let capped = AnthropicServer::start(Script::new().default_reply(Turn::status(429)))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let two = AnthropicServer::start(reply("reply from two"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let gateway = AnthropicServer::start(reply("reply from the gateway"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new("http://127.0.0.1:9");
    w.vars
        .push(("WEFT_CLAUDE_BIN".into(), claude.display().to_string()));
    let (k1, k2, kg) = (secret("capped"), secret("two"), secret("gw"));
    let Some(a1) = w.add_account(
        ["claude", "api-key", "capped", &capped.base_url()],
        &[],
        &k1,
    ) else {
        return;
    };
    let a2 = w
        .add_account(["claude", "api-key", "second", &two.base_url()], &[], &k2)
        .unwrap_or_default();
    let ag = w
        .add_account(
            ["claude", "gateway", "gateway", &gateway.base_url()],
            &["--model", "claude-sonnet-4-5"],
            &kg,
        )
        .unwrap_or_default();

    // The first account refuses the turn.
    let out = w.weft(&[
        "run",
        "--json",
        "--agent",
        "claude",
        "--account",
        &a1,
        "name a colour",
    ]);
    let first: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let key = first["sessionKey"].as_str().unwrap_or_default().to_string();
    assert!(!key.is_empty(), "{first} / {}", stderr(&out));
    assert!(first["snapshot"]["error"].is_string(), "{first}");
    let native_id = first["snapshot"]["sessionId"].clone();

    // One verb: switch to the second account and run that prompt again there. Same
    // provider, so claude resumes its own session.
    let outcome = w.run_json(&[
        "accounts",
        "switch",
        &a2,
        "--session",
        &key,
        "--continue",
        "--json",
    ]);
    assert_eq!(outcome["switched"], true, "{outcome}");
    assert_eq!(outcome["handover"], false, "{outcome}");
    assert!(outcome["taskId"].is_string(), "{outcome}");
    let last = w.wait_reply(&key, "reply from two");
    assert_eq!(last["prompt"], "name a colour");
    assert_eq!(
        last["sessionId"], native_id,
        "the agent's own session resumed"
    );
    assert!(two
        .messages_requests()
        .iter()
        .any(|r| r.last_user_text().contains("name a colour")));
    only_credential(&two.recorder().requests(), ("x-api-key", &k2));
    assert_eq!(w.account_of(&key), Value::from(a2.clone()));

    // A gateway is another provider: the switch is explained and, with nobody to say
    // yes, refused; nothing changes.
    let on_gateway = ["--session", &key, "--account", &ag, "and on the gateway"];
    let said = w.refused(&[&["run"], &on_gateway[..]].concat(), Some(""));
    assert!(said.contains("signs its thinking"), "{said}");
    assert!(said.contains("handover"), "{said}");
    assert!(said.contains("--yes"), "{said}");
    assert!(
        gateway.messages_requests().is_empty(),
        "the gateway was asked"
    );
    assert_eq!(w.account_of(&key), Value::from(a2.clone()));
    w.refused(
        &["accounts", "switch", &ag, "--session", &key, "--json"],
        Some(""),
    );
    assert_eq!(w.account_of(&key), Value::from(a2.clone()));

    // Confirmed: a new claude session on the gateway, started from a handover of the
    // conversation; the Weft session and its history stay one.
    let out = w.weft_in(
        &[&["run", "--json", "--yes"], &on_gateway[..]].concat(),
        Some(""),
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(v["sessionKey"], key.as_str(), "{v} / {}", stderr(&out));
    assert!(
        v["snapshot"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("reply from the gateway")),
        "{v} / {}",
        stderr(&out)
    );
    assert_ne!(v["snapshot"]["sessionId"], native_id, "a new agent session");
    // Claude Code sends the appended system prompt in the request's `system` blocks.
    let seeded = gateway.messages_requests().into_iter().any(|r| {
        let system = r.body["system"].to_string();
        system.contains("take it over")
            && system.contains("name a colour")
            && system.contains("reply from two")
    });
    assert!(seeded, "the gateway's first request carried no handover");
    only_credential(
        &gateway.recorder().requests(),
        ("authorization", &format!("Bearer {kg}")),
    );
    let history = w.run_json(&["history", &key, "--json"]);
    assert_eq!(
        history.as_array().map(Vec::len),
        Some(3),
        "one session, three turns: {history}"
    );
}
