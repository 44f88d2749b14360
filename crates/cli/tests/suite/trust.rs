//! Workspace trust end to end (issue 32 §2): a folder's `.weft/` MCP server, hook,
//! check and allow rule do nothing until the user trusts it with `weft trust`, and a
//! socket client must prove it runs outside the sandbox.

use std::path::Path;

use weft_client::{Client, Home};

use super::support::{strings, Env};

fn write(dir: &Path, rel: &str, text: &str) {
    let path = dir.join(rel);
    std::fs::create_dir_all(path.parent().unwrap_or(dir)).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

#[tokio::test(flavor = "multi_thread")]
async fn nothing_a_workspace_grants_acts_until_it_is_trusted() {
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};
    let script = Script::new()
        .rule(when::no_tools(), Turn::text_reply("a title"))
        .rule(
            when::user_text_contains("go"),
            Turn::new().tool_use(
                "call-1",
                "bash",
                serde_json::json!({ "command": "touch by-rule" }),
            ),
        )
        .default_reply(Turn::text_reply("done"));
    let server = AnthropicServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let work = env.work.path().to_path_buf();
    let mark = |name: &str| work.join(format!("{name}-ran"));
    let w = work.display().to_string();
    write(
        &work,
        ".weft/mcp.json",
        &format!(
            r#"{{"mcpServers": {{"helper": {{"command": "sh", "args": ["-c", "touch {w}/mcp-ran"]}}}}}}"#
        ),
    );
    write(
        &work,
        ".weft/hooks.json",
        &format!(r#"{{"PreToolUse": [{{"command": "touch {w}/hook-ran"}}]}}"#),
    );
    write(
        &work,
        ".weft/native.toml",
        &format!("check = \"touch {w}/check-ran\"\n"),
    );
    write(
        &work,
        ".weft/permissions.json",
        r#"{"allow": ["touch by-rule"]}"#,
    );
    let base = server.base_url();
    let run = || {
        let mut cmd = env.cmd(&["run", "--agent", "native", "--yes", "go"]);
        cmd.env("WEFT_NATIVE_PROTOCOL", "anthropic-messages")
            .env("WEFT_NATIVE_BASE_URL", &base)
            .env("WEFT_NATIVE_API_KEY", "sk-test")
            .env("WEFT_NATIVE_MODEL", "scripted-model")
            .env("WEFT_NATIVE_PERMISSION", "ask");
        let out = cmd.output().unwrap_or_else(|e| panic!("run weft: {e}"));
        env.keep_output(&out);
        String::from_utf8_lossy(&out.stderr).into_owned()
    };

    let untrusted = tokio::task::block_in_place(run);
    assert!(
        untrusted.contains("this folder is not trusted") && untrusted.contains(".weft/hooks.json"),
        "{untrusted}"
    );
    for name in ["mcp", "hook", "check"] {
        assert!(
            !mark(name).exists(),
            "the untrusted {name} ran: {untrusted}"
        );
    }
    assert!(
        !work.join("by-rule").exists(),
        "an untrusted allow rule approved a command: {untrusted}"
    );

    let (code, shown, _) = env.json(&["trust", "--show", "--json"]);
    assert_eq!(code, 0);
    assert_eq!(shown["trusted"], false, "{shown}");
    let files = strings(&shown["grants"], "file");
    for f in [
        ".weft/mcp.json",
        ".weft/hooks.json",
        ".weft/native.toml",
        ".weft/permissions.json",
    ] {
        assert!(files.contains(&f), "{f} not shown: {shown}");
    }
    // No terminal, no --yes: it says how to decide instead of trusting.
    let out = env.weft(&["trust"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = env.weft(&["trust", "--yes"]);
    assert!(out.status.success(), "{out:?}");
    let (_, shown, _) = env.json(&["trust", "--show", "--json"]);
    assert_eq!(shown["trusted"], true, "{shown}");

    let trusted = tokio::task::block_in_place(run);
    assert!(!trusted.contains("not trusted"), "{trusted}");
    for name in ["mcp", "hook", "check"] {
        assert!(
            mark(name).exists(),
            "the trusted {name} did not run: {trusted}"
        );
    }
    assert!(work.join("by-rule").exists(), "{trusted}");

    // A change to what it grants asks again.
    write(
        &work,
        ".weft/hooks.json",
        r#"{"PreToolUse": [{"command": "true"}]}"#,
    );
    let (_, shown, _) = env.json(&["trust", "--show", "--json"]);
    assert_eq!(shown["trusted"], false, "{shown}");
    let out = env.weft(&["trust", "--revoke"]);
    assert!(out.status.success(), "{out:?}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_socket_client_without_the_home_s_key_is_refused() {
    let env = Env::new();
    // Starts the daemon (its key is made before it listens).
    let out = env.weft(&["run", "hi"]);
    assert!(out.status.success(), "{out:?}");
    let home = Home::at(env.home.path());
    let hello = |proof: Option<&str>| weft_protocol::Hello {
        version: weft_client::VERSION.into(),
        surface: "test".into(),
        env: Some(weft_protocol::ClientEnv(
            [("WEFT_CLAUDE_BIN".to_string(), "/tmp/evil".to_string())].into(),
        )),
        proof: proof.map(str::to_string),
        ..Default::default()
    };
    let refused = Client::connect(&home, hello(Some("not-the-key")))
        .await
        .err()
        .unwrap_or_else(|| panic!("a hello with a wrong key was accepted"));
    assert!(
        refused.to_string().contains("outside Weft's sandbox"),
        "{refused}"
    );
    // The same client reading the key (as every `weft` does by itself) is let in.
    let (client, _events) = Client::connect(&home, hello(None))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!client.welcome().scopes.is_empty());
}
