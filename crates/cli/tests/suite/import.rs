//! `weft mcp import` and `weft skills import` end to end: the three agents' own files
//! in a HOME of the test's, a dry run that reports and writes nothing, an import that
//! `weft mcp list` then shows (a secret never copied), and a second import that adds
//! nothing.

use std::path::Path;
use std::process::Output;

use serde_json::Value;

use super::support::{bounded, write, Env};

const TOKEN: &str = "ghp_importTestToken0123456789";

/// `weft ARGS` with the agents' HOME.
fn weft(env: &Env, home: &Path, args: &[&str]) -> Output {
    let mut cmd = env.cmd(args);
    cmd.env("HOME", home);
    let out = bounded(cmd, args);
    env.keep_output(&out);
    out
}

fn json(env: &Env, home: &Path, args: &[&str]) -> Value {
    let out = weft(env, home, args);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "weft {args:?}: {stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn outcomes(v: &Value, key: &str) -> Vec<(String, String, String)> {
    v[key]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    let f = |k: &str| s[k].as_str().unwrap_or_default().to_string();
                    (f("name"), f("agent"), f("outcome"))
                })
                .collect()
        })
        .unwrap_or_default()
}

fn agents_home() -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let h = home.path();
    write(
        &h.join(".claude.json"),
        &format!(
            r#"{{"numStartups": 7, "hasCompletedOnboarding": true,
              "mcpServers": {{
                "github": {{"type": "stdio", "command": "npx",
                           "args": ["-y", "@modelcontextprotocol/server-github"],
                           "env": {{"GITHUB_PERSONAL_ACCESS_TOKEN": "{TOKEN}"}}}},
                "events": {{"type": "sse", "url": "https://sse.example.com/sse"}}}}}}"#
        ),
    );
    write(
        &h.join(".codex/config.toml"),
        "model = \"gpt-5\"\n\n[mcp_servers.figma]\nurl = \"https://mcp.figma.com/mcp\"\n\
         bearer_token_env_var = \"FIGMA_TOKEN\"\n\n[mcp_servers.github]\ncommand = \"gh-mcp\"\n",
    );
    write(
        &h.join(".gemini/settings.json"),
        r#"{"security": {"auth": {"selectedType": "gemini-api-key"}},
            "mcpServers": {"time": {"command": "uvx", "args": ["mcp-server-time"],
                                    "env": {"TZ": "Europe/Berlin"}}}}"#,
    );
    write(
        &h.join(".claude/skills/review/SKILL.md"),
        "---\nname: review\ndescription: Reviews a diff.\n---\nRead the diff.\n",
    );
    home
}

#[test]
fn mcp_import_brings_in_every_agent_s_servers_once_and_never_a_secret() {
    let env = Env::new();
    env.watch_secret(TOKEN);
    let home = agents_home();
    let h = home.path();

    let dry = json(&env, h, &["mcp", "import", "--dry-run", "--json"]);
    assert_eq!(dry["dryRun"], true);
    let want = [
        ("events", "claude", "unsupported"),
        ("github", "claude", "added"),
        ("figma", "codex", "added"),
        ("github", "codex", "duplicate"),
        ("time", "gemini", "added"),
    ]
    .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()));
    assert_eq!(outcomes(&dry, "servers"), want, "{dry}");
    assert_eq!(outcomes(&dry, "skills"), [], "mcp import imports no skills");
    let gh = &dry["servers"][1];
    assert_eq!(
        gh["envNames"],
        serde_json::json!(["GITHUB_PERSONAL_ACCESS_TOKEN"])
    );
    assert_eq!(
        gh["secrets"],
        serde_json::json!(["github-GITHUB_PERSONAL_ACCESS_TOKEN"])
    );
    assert!(
        !env.home.path().join("mcp.json").exists(),
        "a dry run wrote"
    );
    let listed = json(&env, h, &["mcp", "list", "--json"]);
    assert_eq!(listed["servers"], serde_json::json!([]));

    let out = weft(&env, h, &["mcp", "import"]);
    let text = String::from_utf8_lossy(&out.stdout);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{text}");
    assert!(
        text.contains("3 server(s) added")
            && text.contains(
                "secrets go into the secret store as github-GITHUB_PERSONAL_ACCESS_TOKEN"
            )
            && text.contains("weft mcp secret set figma-FIGMA_TOKEN"),
        "{text}"
    );
    // The token the agent's file held moved into the OS secret store (there is one
    // inside scripts/lib/with-keyring.sh); with none, the import says how to set it.
    let refused =
        err.contains("github-GITHUB_PERSONAL_ACCESS_TOKEN could not go into the secret store");
    if std::env::var("WEFT_IN_KEYRING_SESSION").is_ok_and(|v| v == "1") {
        assert!(!refused, "{err}");
    } else if refused {
        assert!(
            err.contains("weft mcp secret set github-GITHUB_PERSONAL_ACCESS_TOKEN --stdin"),
            "{err}"
        );
    }

    let listed = json(&env, h, &["mcp", "list", "--json"]);
    let names: Vec<&str> = listed["servers"]
        .as_array()
        .map(|a| a.iter().filter_map(|s| s["name"].as_str()).collect())
        .unwrap_or_default();
    assert_eq!(names, ["figma", "github", "time"], "{listed}");
    assert!(
        listed["problems"].as_array().is_some_and(Vec::is_empty),
        "{listed}"
    );
    let gh = &listed["servers"][1];
    assert_eq!(gh["command"], "npx");
    assert_eq!(
        gh["secrets"],
        serde_json::json!(["github-GITHUB_PERSONAL_ACCESS_TOKEN"])
    );
    assert_eq!(
        listed["servers"][0]["secrets"],
        serde_json::json!(["figma-FIGMA_TOKEN"])
    );

    let again = json(&env, h, &["mcp", "import", "--json"]);
    assert!(
        outcomes(&again, "servers")
            .iter()
            .all(|(_, _, o)| o != "added"),
        "{again}"
    );
    let listed_again = json(&env, h, &["mcp", "list", "--json"]);
    assert_eq!(listed_again["servers"], listed["servers"]);
}

#[test]
fn skills_import_copies_an_agent_s_own_skill_once() {
    let env = Env::new();
    let home = agents_home();
    let h = home.path();
    let dry = json(&env, h, &["skills", "import", "--dry-run", "--json"]);
    assert_eq!(
        outcomes(&dry, "skills"),
        [("review".into(), "claude".into(), "added".into())],
        "{dry}"
    );
    assert_eq!(outcomes(&dry, "servers"), []);
    let out = weft(&env, h, &["skills", "import"]);
    assert!(out.status.success());
    let list = json(&env, h, &["skills", "list", "--json"]);
    assert!(
        list.as_array().is_some_and(|a| a
            .iter()
            .any(|s| s["name"] == "review" && s["source"] == "global")),
        "{list}"
    );
    let again = json(&env, h, &["skills", "import", "--json"]);
    assert_eq!(
        outcomes(&again, "skills"),
        [("review".into(), "claude".into(), "exists".into())]
    );
}
