//! Weft's permission rules answer the real Claude Code's Bash requests before a
//! surface sees them (the daemon's ShellPolicy).

use serde_json::json;
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::cli::{weft, weft_run, StopDaemon};
use super::support::*;

#[tokio::test]
async fn a_deny_rule_refuses_a_claude_bash_request_without_a_dialog() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(
        Script::new()
            .rule(
                when::user_text_contains("push it"),
                Turn::new().tool_use(
                    "toolu_push",
                    "Bash",
                    json!({"command": "git -C . push --force origin main", "description": "push"}),
                ),
            )
            .rule(
                when::tool_result_for("toolu_push"),
                Turn::text_reply("not pushed"),
            )
            .rule(
                when::user_text_contains("list it"),
                Turn::new().tool_use(
                    "toolu_ls",
                    "Bash",
                    json!({"command": "touch listed.txt", "description": "touch"}),
                ),
            )
            .rule(
                when::tool_result_for("toolu_ls"),
                Turn::text_reply("touched"),
            ),
    )
    .await;
    let workdir = env.workdir();
    std::fs::create_dir_all(workdir.join(".weft")).unwrap();
    std::fs::write(
        workdir.join(".weft/permissions.json"),
        r#"{"deny": ["git push"], "allow": ["touch"]}"#,
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let _daemon = StopDaemon(state.path().to_path_buf());

    // No --yes and no terminal: a dialog would be cancelled; the rule answers first.
    let r = weft_run(
        &env,
        state.path(),
        &["--agent", "claude", "--json", "push it"],
    )
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("cancelled"),
        "a dialog was shown: {}",
        r.stderr
    );
    let told = env
        .server
        .messages_requests()
        .iter()
        .find_map(|m| m.last_tool_result("toolu_push"))
        .unwrap_or_default();
    assert!(
        told.contains("denied by the Weft rule `git push`"),
        "claude was told: {told}"
    );
    assert_eq!(r.json["snapshot"]["text"], "not pushed");

    // A workspace's allow rule acts once the user trusted the folder (a deny rule,
    // above, held untrusted).
    let trusted = weft(&env, state.path())
        .args(["trust", "--yes"])
        .output()
        .await
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    // An allow rule lets the request through, still without --yes.
    let r = weft_run(
        &env,
        state.path(),
        &["--agent", "claude", "--json", "list it"],
    )
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(workdir.join("listed.txt").exists(), "{}", r.stderr);
    assert_eq!(r.json["snapshot"]["text"], "touched");
}

async fn weft_json(env: &ClaudeEnv, state: &std::path::Path, args: &[&str]) -> serde_json::Value {
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        weft(env, state).args(args).output(),
    )
    .await
    .expect("weft did not finish in 120 s")
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "weft {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}"))
}

#[tokio::test]
async fn always_allow_on_a_claude_bash_request_writes_a_weft_rule_that_answers_the_next() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(
        Script::new()
            .rule(
                when::user_text_contains("touch it"),
                Turn::new().tool_use(
                    "toolu_t1",
                    "Bash",
                    json!({"command": "touch first.txt", "description": "touch"}),
                ),
            )
            .rule(
                when::tool_result_for("toolu_t1"),
                Turn::text_reply("touched"),
            )
            .rule(
                when::user_text_contains("touch more"),
                Turn::new().tool_use(
                    "toolu_t2",
                    "Bash",
                    json!({"command": "touch second.txt", "description": "touch"}),
                ),
            )
            .rule(
                when::tool_result_for("toolu_t2"),
                Turn::text_reply("touched more"),
            ),
    )
    .await;
    let workdir = env.workdir();
    let state = tempfile::tempdir().unwrap();
    let _daemon = StopDaemon(state.path().to_path_buf());

    // Detached, so the request waits in the inbox for an answer from another terminal.
    let started = weft_json(
        &env,
        state.path(),
        &["run", "--agent", "claude", "--detach", "touch it"],
    )
    .await;
    let key = started["sessionKey"].as_str().unwrap().to_string();
    let deadline = tokio::time::Instant::now() + std::time::Duration::from_secs(90);
    let item = loop {
        let inbox = weft_json(&env, state.path(), &["inbox", "--json"]).await;
        if let Some(item) = inbox.as_array().and_then(|a| a.first()) {
            break item.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "claude asked nothing"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    };
    let choices = &item["questions"][0]["choices"];
    let values: Vec<&str> = choices
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["value"].as_str())
        .collect();
    assert_eq!(
        values,
        ["allow", "allowSession", "allowPrefix", "deny"],
        "{item}"
    );
    assert_eq!(
        choices[2]["label"],
        "Always allow `touch` in this workspace (Weft rule)"
    );
    assert!(!workdir.join(".weft/permissions.json").exists());

    let prompt_id = item["promptId"].as_str().unwrap();
    let out = weft(&env, state.path())
        .args(["answer", prompt_id, "--select", "allowPrefix"])
        .output()
        .await
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let last = weft_json(&env, state.path(), &["wait", &key, "--json"]).await;
    assert_eq!(last["text"], "touched", "{last}");
    assert!(workdir.join("first.txt").exists(), "{last}");
    assert!(
        last["notices"]
            .to_string()
            .contains("the Weft rule `touch` was added"),
        "{last}"
    );
    let rules: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(workdir.join(".weft/permissions.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rules, json!({"allow": ["touch"]}));

    // A new session's request for a matching command: the rule answers it. No --yes
    // and no terminal, so a dialog would have been cancelled.
    let r = weft_run(
        &env,
        state.path(),
        &["--agent", "claude", "--json", "touch more"],
    )
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert!(
        !r.stderr.contains("cancelled"),
        "a dialog was shown: {}",
        r.stderr
    );
    assert!(workdir.join("second.txt").exists(), "{}", r.stderr);
    assert_eq!(r.json["snapshot"]["text"], "touched more");
    assert!(
        r.json["snapshot"]["notices"]
            .to_string()
            .contains("allowed by the Weft rule touch"),
        "{}",
        r.json
    );
}
