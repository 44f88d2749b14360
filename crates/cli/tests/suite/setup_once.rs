//! `weft mcp` and `weft skills` end to end against a daemon: the servers configured in
//! Weft with their files and state (a broken file named, the rest listed), a session's
//! own choices from `weft run --mcp` and `weft mcp enable/disable`, a secret taken only
//! from standard input, and skills placed, listed, turned off and removed.

use std::io::Write as _;
use std::path::Path;
use std::process::Stdio;

use serde_json::Value;

use super::support::{claude_home, Env};
use weft_testkit::leaks::AMBIENT_ANTHROPIC_KEY;

fn servers(v: &Value) -> Vec<(String, String, bool)> {
    v["servers"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|s| {
                    (
                        s["name"].as_str().unwrap_or_default().to_string(),
                        s["scope"].as_str().unwrap_or_default().to_string(),
                        s["enabled"].as_bool().unwrap_or_default(),
                    )
                })
                .collect()
        })
        .unwrap_or_default()
}

#[test]
fn mcp_list_shows_each_servers_file_and_state_and_a_session_turns_one_off() {
    let env = Env::new();
    std::fs::write(
        env.home.path().join("mcp.json"),
        r#"{"mcpServers": {
            "gh": {"command": "gh-mcp", "env": {"GH_TOKEN": "${secret:gh-token}"}},
            "docs": {"url": "http://127.0.0.1:9/mcp", "disabled": true}}}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(env.work.path().join(".weft")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(env.work.path().join(".weft/mcp.json"), "{ not json")
        .unwrap_or_else(|e| panic!("{e}"));

    let (code, v, _) = env.json(&["mcp", "list", "--json"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        servers(&v),
        [
            ("docs".into(), "global".into(), false),
            ("gh".into(), "global".into(), true)
        ]
    );
    let gh = &v["servers"][1];
    assert_eq!(gh["secrets"], serde_json::json!(["gh-token"]));
    assert_eq!(gh["envNames"], serde_json::json!(["GH_TOKEN"]));
    assert!(gh["source"]
        .as_str()
        .is_some_and(|s| s.ends_with("mcp.json")));
    assert!(
        v["problems"][0]
            .as_str()
            .is_some_and(|p| p.contains(".weft/mcp.json") && p.contains("not a valid mcp.json")),
        "{v}"
    );
    let out = env.weft(&["mcp", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("off docs") && text.contains("secrets: gh-token"),
        "{text}"
    );

    // A session turns gh off and docs on from its first turn.
    let (code, run, err) =
        env.json(&["run", "--mcp", "gh=off", "--mcp", "docs=on", "--json", "hi"]);
    assert_eq!(code, 0, "{err}");
    let key = run["sessionKey"].as_str().unwrap_or_default().to_string();
    let (_, v, _) = env.json(&["mcp", "list", "--session", &key, "--json"]);
    assert_eq!(
        servers(&v),
        [
            ("docs".into(), "global".into(), true),
            ("gh".into(), "global".into(), false)
        ]
    );
    assert!(env
        .weft(&["mcp", "enable", "--session", &key, "gh"])
        .status
        .success());
    let (_, v, _) = env.json(&["mcp", "list", "--session", &key, "--json"]);
    assert_eq!(servers(&v)[1], ("gh".into(), "global".into(), true));
    let (_, other, _) = env.json(&["mcp", "list", "--json"]);
    assert!(
        !servers(&other)[0].2,
        "other sessions keep the file's state"
    );

    let bad = env.weft(&["run", "--mcp", "gh=maybe", "hi"]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("expected on or off"));
    let bad = env.weft(&["mcp", "disable", "--session", &key, "not a name"]);
    assert!(!bad.status.success());
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not an MCP server name"));
}

fn agent_bin(name: &str) -> Option<std::path::PathBuf> {
    super::support::agent_bin(name, &format!("WEFT_{}_BIN", name.to_uppercase()))
}

/// `weft ARGS` with `vars` and `stdin`; everything it printed is kept in `shown`.
fn weft_with(
    env: &Env,
    vars: &[(String, String)],
    args: &[&str],
    stdin: Option<&str>,
    shown: &mut Vec<u8>,
) -> std::process::Output {
    let mut cmd = env.cmd(args);
    cmd.envs(vars.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .stdin(if stdin.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("run weft: {e}"));
    if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
        pipe.write_all(text.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    shown.extend_from_slice(&out.stdout);
    shown.extend_from_slice(&out.stderr);
    out
}

/// A secret a server names is kept in the OS secret store from standard input, reaches
/// the server the real Claude starts, and no file, argument or output holds it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_secret_reaches_the_server_and_nothing_else() {
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};
    let Some(claude) = agent_bin("claude") else {
        return;
    };
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_s1",
            "mcp__rec__record",
            serde_json::json!({"text": "hi"}),
        ))
        .turn_when(
            when::tool_result_for("toolu_s1"),
            Turn::text_reply("Recorded."),
        )
        .default_reply(Turn::text_reply("ok"));
    let server = AnthropicServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let agent_home = claude_home();
    let path = format!(
        "{}:{}",
        claude
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        std::env::var("PATH").unwrap_or_default()
    );
    let vars: Vec<(String, String)> = [
        ("PATH", path),
        ("HOME", agent_home.path().display().to_string()),
        ("ANTHROPIC_BASE_URL", server.base_url()),
        ("ANTHROPIC_API_KEY", AMBIENT_ANTHROPIC_KEY.to_string()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".to_string()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".to_string()),
        ("IS_SANDBOX", "1".to_string()),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v))
    .collect();
    let mut shown = Vec::new();
    let no_stdin = weft_with(
        &env,
        &vars,
        &["mcp", "secret", "set", "gh"],
        None,
        &mut shown,
    );
    assert_eq!(no_stdin.status.code(), Some(2), "--stdin is required");
    let empty = weft_with(
        &env,
        &vars,
        &["mcp", "secret", "set", "gh", "--stdin"],
        Some("\n"),
        &mut shown,
    );
    assert!(String::from_utf8_lossy(&empty.stderr).contains("the secret is empty"));

    let stamp = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    let name = format!("who-{stamp:x}");
    let value = format!("sk-mcp-{stamp:x}-{}", std::process::id());
    env.watch_secret(&value);
    let out = weft_with(
        &env,
        &vars,
        &["mcp", "secret", "set", &name, "--stdin"],
        Some(&value),
        &mut shown,
    );
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if stderr.contains("secret store is not available") {
        // scripts/lib/with-keyring.sh (where CI runs the suite) provides one.
        assert!(
            std::env::var("WEFT_IN_KEYRING_SESSION").map_or(true, |v| v != "1"),
            "no Secret Service inside scripts/lib/with-keyring.sh: {stderr}"
        );
        eprintln!("SKIPPED: no Secret Service here ({stderr})");
        return;
    }
    assert!(out.status.success(), "{stderr}");
    let record = agent_home.path().join("calls.jsonl");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../drivers/registry/tests/fixtures/record_mcp.py");
    std::fs::write(
        env.home.path().join("mcp.json"),
        serde_json::json!({"mcpServers": {"rec": {
            "command": "python3", "args": [fixture, record],
            "env": {"WEFT_MCP_WHO": format!("${{secret:{name}}}")}
        }}})
        .to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = weft_with(
        &env,
        &vars,
        &["run", "--agent", "claude", "--yes", "--json", "record it"],
        None,
        &mut shown,
    );
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(
        v["snapshot"]["text"],
        "Recorded.",
        "{v} {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let calls = std::fs::read_to_string(&record).unwrap_or_default();
    assert!(calls.contains(&value), "the server got the secret: {calls}");
    // The agent's home holds the MCP server's record of what it got, the one place the
    // secret belongs; Weft's home and database rows, the workspace and the output
    // must not hold it (and are searched again when the test ends).
    let leaks = files_containing(agent_home.path(), value.as_bytes(), &record);
    assert!(leaks.is_empty(), "the secret is in {leaks:?}");
    weft_testkit::leaks::assert_none(&[env.home.path(), env.work.path()], &shown, &[&value]);
    let rm = weft_with(
        &env,
        &vars,
        &["mcp", "secret", "remove", &name],
        None,
        &mut shown,
    );
    assert!(rm.status.success());
}

/// Every file under `dir` whose bytes hold `needle` (but `skip`).
fn files_containing(dir: &Path, needle: &[u8], skip: &Path) -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p == skip || p.is_symlink() {
            continue;
        }
        if p.is_dir() {
            out.extend(files_containing(&p, needle, skip));
        } else if std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)) {
            out.push(p);
        }
    }
    out
}

#[test]
fn skills_are_added_once_listed_turned_off_and_removed() {
    let env = Env::new();
    let src = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let dir = src.path().join("tidy-repo");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        dir.join("SKILL.md"),
        "---\nname: tidy-repo\ndescription: Tidy the repository\n---\nDo it.\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let d = dir.display().to_string();
    let out = env.weft(&["skills", "add", &d]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "tidy-repo");
    assert!(env.home.path().join("skills/tidy-repo/SKILL.md").exists());
    let again = env.weft(&["skills", "add", &d]);
    assert!(String::from_utf8_lossy(&again.stderr).contains("already placed"));

    let (_, v, _) = env.json(&["skills", "list", "--json"]);
    let s = &v[0];
    assert_eq!(
        (
            s["name"].as_str(),
            s["description"].as_str(),
            s["source"].as_str(),
            s["enabled"].as_bool()
        ),
        (
            Some("tidy-repo"),
            Some("Tidy the repository"),
            Some("global"),
            Some(true)
        ),
        "{v}"
    );
    assert!(env
        .weft(&["skills", "disable", "tidy-repo"])
        .status
        .success());
    let (_, v, _) = env.json(&["skills", "list", "--json"]);
    assert_eq!(v[0]["enabled"], false);
    assert!(env
        .weft(&["skills", "remove", "tidy-repo"])
        .status
        .success());
    let (_, v, _) = env.json(&["skills", "list", "--json"]);
    assert_eq!(v, serde_json::json!([]));

    let bare = env.weft(&["skills", "add", &src.path().display().to_string()]);
    assert!(!bare.status.success());
    assert!(String::from_utf8_lossy(&bare.stderr).contains("SKILL.md"));
}

/// Codex asks before each MCP tool call under its default approval policy: `weft run
/// --yes` allows it as it allows a shell request, and the server runs; with no terminal
/// and no `--yes` it is cancelled, visibly, and the server never runs; a Weft rule
/// naming the tool allows it without asking anyone.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_asks_before_an_mcp_tool_and_yes_allows_it() {
    use weft_testkit::openai::{when, Script, Turn};
    use weft_testkit::ResponsesServer;
    let Some(codex) = agent_bin("codex") else {
        return;
    };
    let mut script = Script::new();
    for (prompt, call, text) in [
        ("record yes", "call_y", "with yes"),
        ("record no", "call_n", "without yes"),
        ("record ruled", "call_r", "by rule"),
    ] {
        script = script
            .turn_when(
                when::user_text_contains(prompt),
                Turn::new().namespaced_call(
                    call,
                    "mcp__rec",
                    "record",
                    serde_json::json!({ "text": text }),
                ),
            )
            .turn_when(when::tool_output_for(call), Turn::text_reply("Done."));
    }
    let server = ResponsesServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let record = home.path().join("calls.jsonl");
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../drivers/registry/tests/fixtures/record_mcp.py");
    std::fs::write(
        env.home.path().join("mcp.json"),
        serde_json::json!({"mcpServers": {"rec": {"command": "python3", "args": [fixture, record]}}})
            .to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let run = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        super::support::codex_env(&mut cmd, home.path(), &codex, &server.v1_url(), "sk-test");
        cmd.env("WEFT_CODEX_APPROVAL_POLICY", "on-request");
        cmd.output().unwrap_or_else(|e| panic!("{e}"))
    };
    let calls = || std::fs::read_to_string(&record).unwrap_or_default();

    let out = run(&["run", "--agent", "codex", "--yes", "--json", "record yes"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(calls().contains("with yes"), "{stderr} {}", calls());
    assert!(
        stderr.contains("(--yes)") && stderr.contains("allowed"),
        "{stderr}"
    );

    let out = run(&["run", "--agent", "codex", "--json", "record no"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(!calls().contains("without yes"), "{}", calls());
    assert!(stderr.contains("pass --yes to allow"), "{stderr}");

    // A Weft rule naming the tool answers it, with no --yes, as a rule answers a command.
    std::fs::write(
        env.home.path().join("permissions.json"),
        r#"{"allow": ["mcp__rec__record"]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let out = run(&["run", "--agent", "codex", "--json", "record ruled"]);
    let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert!(calls().contains("by rule"), "{} {v}", calls());
    assert!(
        v["snapshot"]["notices"]
            .to_string()
            .contains("allowed by the Weft rule"),
        "{v}"
    );
}

/// `weft tools --agent codex`: through the daemon, the real codex is given Weft's MCP
/// server as a turn's spawn gives it (spawn arguments, not only the server list) and
/// lists that server's tools as its own.
#[test]
fn weft_tools_lists_codex_s_mcp_tools() {
    let Some(codex) = agent_bin("codex") else {
        return;
    };
    let env = Env::new();
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../drivers/registry/tests/fixtures/record_mcp.py");
    let record = home.path().join("calls.jsonl");
    std::fs::write(
        env.home.path().join("mcp.json"),
        serde_json::json!({"mcpServers": {"rec": {"command": "python3", "args": [fixture, record]}}})
            .to_string(),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let work = env.work.path().display().to_string();
    let mut cmd = env.cmd(&["tools", "--agent", "codex", "--workdir", &work, "--json"]);
    // Nothing is asked of a model: the address only has to be well formed.
    super::support::codex_env(&mut cmd, home.path(), &codex, "http://127.0.0.1:9/v1", "k");
    let out = cmd.output().unwrap_or_else(|e| panic!("{e}"));
    env.keep_output(&out);
    let tools = super::support::ok_json(&out);
    let record = tools
        .as_array()
        .and_then(|a| a.iter().find(|t| t["name"] == "mcp__rec__record"))
        .unwrap_or_else(|| panic!("no mcp__rec__record in {tools}"));
    assert_eq!(record["server"], "rec", "{record}");
    assert_eq!(record["description"], "Record a line of text", "{record}");
}
