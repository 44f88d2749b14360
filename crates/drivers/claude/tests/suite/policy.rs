//! Weft's permission rules answer the real Claude Code's Bash requests before a
//! surface sees them (the daemon's ShellPolicy).

use serde_json::json;
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::cli::{weft_run, StopDaemon};
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
