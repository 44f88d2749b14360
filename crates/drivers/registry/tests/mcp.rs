//! One MCP server configured once in Weft (`$WEFT_HOME/mcp.json`) is used by the real
//! Claude, Codex and Gemini CLIs and by Weft's own agent, each against its scripted
//! model server: the model calls the server's `record` tool and the server (a small
//! stdio one, tests/fixtures/record_mcp.py) writes down the call.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use weft_kernel::{AgentDriver, AgentTurnInput, DriverResult, Plugins, TurnCallbacks};
use weft_protocol::{permission, InteractionResponse, UniversalSnapshot};

type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

fn agents_bin() -> Option<PathBuf> {
    let dir =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.tools/agents/node_modules/.bin");
    let dir = dir.canonicalize().ok()?;
    if dir.join("claude").exists() {
        return Some(dir);
    }
    if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
        panic!("CI=true and the agent CLIs are not installed in .tools/agents");
    }
    eprintln!("SKIPPED: the agent CLIs are not installed in .tools/agents");
    None
}

/// A Weft home with the one mcp.json, a workspace, and the file the server records to.
struct Setup {
    home: tempfile::TempDir,
    weft: PathBuf,
    work: tempfile::TempDir,
    record: PathBuf,
    path: String,
}

impl Setup {
    fn new(bin: &Path) -> Res<Self> {
        // Gemini skips a settings file under a folder others may write (/tmp).
        let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
        let weft = home.path().join(".weft");
        std::fs::create_dir_all(&weft)?;
        let work = tempfile::tempdir()?;
        let record = home.path().join("calls.jsonl");
        let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/record_mcp.py");
        std::fs::write(
            weft.join("mcp.json"),
            json!({"mcpServers": {"rec": {
                "command": "python3",
                "args": [fixture, record],
                "env": {"WEFT_MCP_WHO": "configured-in-weft"}
            }}})
            .to_string(),
        )?;
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        Ok(Self {
            home,
            weft,
            work,
            record,
            path,
        })
    }

    fn input(&self, agent: &str, env: Vec<(String, String)>) -> Res<AgentTurnInput> {
        let mut all = vec![
            ("PATH".to_string(), self.path.clone()),
            ("HOME".to_string(), self.home.path().display().to_string()),
        ];
        all.extend(env);
        Ok(AgentTurnInput {
            session_key: format!("{agent}:mcp-e2e"),
            task_id: format!("{agent}-t1"),
            prompt: "record it".into(),
            workdir: self.work.path().canonicalize()?,
            env: all,
            state_dir: self.weft.clone(),
            ..Default::default()
        })
    }

    fn calls(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// Runs one turn with the MCP plugin applied as the kernel applies it; every
/// permission is allowed.
async fn run(
    driver: Arc<dyn AgentDriver>,
    mut input: AgentTurnInput,
) -> Res<(DriverResult, UniversalSnapshot)> {
    let plugins = Plugins::new(vec![Arc::new(weft_drivers::McpPlugin)]);
    let held = plugins.apply(driver.id(), &mut input, true)?;
    let callbacks = TurnCallbacks {
        on_interaction: Box::new(|_| InteractionResponse::select(permission::ALLOW)),
        ..Default::default()
    };
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        weft_kernel::run_turn(driver.clone(), input, callbacks),
    )
    .await?;
    drop(held);
    driver.shutdown().await;
    Ok(out)
}

fn driver(id: &str) -> Res<Arc<dyn AgentDriver>> {
    weft_drivers::all()
        .into_iter()
        .find(|d| d.id() == id)
        .ok_or_else(|| format!("no driver {id}").into())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mcp_server_configured_once_is_called_by_every_agent() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;

    // Claude: --mcp-config, a private file that is gone after the turn.
    {
        use weft_testkit::anthropic::when;
        use weft_testkit::{AnthropicServer, Script, Turn};
        std::fs::write(
            s.home.path().join(".claude.json"),
            r#"{"hasCompletedOnboarding":true}"#,
        )?;
        let script = Script::new()
            .turn(Turn::new().tool_use(
                "toolu_m1",
                "mcp__rec__record",
                json!({"text": "from claude"}),
            ))
            .turn_when(
                when::tool_result_for("toolu_m1"),
                Turn::text_reply("Recorded."),
            );
        let server = AnthropicServer::start(script).await?;
        let input = s.input(
            "claude",
            vec![
                ("IS_SANDBOX".into(), "1".into()),
                ("ANTHROPIC_BASE_URL".into(), server.base_url()),
                ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
                (
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                    "1".into(),
                ),
                ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
            ],
        )?;
        let (r, snap) = run(driver("claude")?, input).await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        let calls = s.calls();
        assert_eq!(
            calls.last().map(|c| c["text"].clone()),
            Some(json!("from claude")),
            "{calls:?} {snap:#?}"
        );
        assert_eq!(calls[0]["who"], "configured-in-weft");
        let left: Vec<_> = std::fs::read_dir(s.weft.join("run/mcp"))?.collect();
        assert!(
            left.is_empty(),
            "the --mcp-config file is removed: {left:?}"
        );
    }

    // Codex: -c mcp_servers.rec.… (its env named by env_vars, in the spawn's env).
    {
        use weft_testkit::openai::{when, Script, Turn};
        use weft_testkit::ResponsesServer;
        let script = Script::new()
            .turn_when(
                when::user_text_contains("record it"),
                Turn::new().namespaced_call(
                    "call_m1",
                    "mcp__rec",
                    "record",
                    json!({"text": "from codex"}),
                ),
            )
            .turn_when(
                when::tool_output_for("call_m1"),
                Turn::text_reply("Recorded."),
            );
        let server = ResponsesServer::start(script).await?;
        let codex_home = s.home.path().join("codex");
        std::fs::create_dir_all(&codex_home)?;
        let input = s.input(
            "codex",
            vec![
                ("CODEX_HOME".into(), codex_home.display().to_string()),
                ("WEFT_CODEX_BASE_URL".into(), server.v1_url()),
                (
                    "WEFT_CODEX_API_KEY_ENV".into(),
                    "WEFT_TEST_OPENAI_KEY".into(),
                ),
                ("WEFT_TEST_OPENAI_KEY".into(), "sk-test".into()),
                ("WEFT_CODEX_MAX_RETRIES".into(), "0".into()),
                ("WEFT_CODEX_SANDBOX".into(), "danger-full-access".into()),
                ("WEFT_CODEX_APPROVAL_POLICY".into(), "never".into()),
                ("WEFT_CODEX_CONFIG".into(), "model=\"mock-model\"".into()),
            ],
        )?;
        let (r, snap) = run(driver("codex")?, input).await?;
        let tools: Vec<Value> = server
            .responses_requests()
            .iter()
            .map(|q| q.body["tools"].clone())
            .filter(|t| t.to_string().contains("mcp__rec"))
            .take(1)
            .collect();
        assert!(r.ok, "{r:?} {snap:#?} {tools:?}");
        let calls = s.calls();
        assert_eq!(
            calls.last().map(|c| c["text"].clone()),
            Some(json!("from codex")),
            "{calls:?} {tools:?} {snap:#?}"
        );
        assert_eq!(
            calls.last().map(|c| c["who"].clone()),
            Some(json!("configured-in-weft"))
        );
    }

    // Gemini: a system-defaults settings file; the user's own settings untouched.
    {
        use weft_testkit::gemini::{when, Script, Turn};
        use weft_testkit::GeminiServer;
        let gdir = s.home.path().join(".gemini");
        std::fs::create_dir_all(&gdir)?;
        let user_settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false}
        })
        .to_string();
        std::fs::write(gdir.join("settings.json"), &user_settings)?;
        let script = Script::new()
            .rule(
                when::function_response_for(GEMINI_TOOL),
                Turn::text_reply("Recorded."),
            )
            .turn(Turn::new().function_call(GEMINI_TOOL, json!({"text": "from gemini"})));
        let server = GeminiServer::start(script).await?;
        let input = s.input(
            "gemini",
            vec![
                ("GEMINI_API_KEY".into(), "test-key".into()),
                ("GOOGLE_GEMINI_BASE_URL".into(), server.base_url()),
                ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
            ],
        )?;
        let (r, snap) = run(driver("gemini")?, input).await?;
        let tools: Vec<Vec<String>> = server
            .generate_requests()
            .iter()
            .map(|q| q.tool_names())
            .collect();
        assert!(r.ok, "{r:?} {snap:#?} {tools:?}");
        let calls = s.calls();
        assert_eq!(
            calls.last().map(|c| c["text"].clone()),
            Some(json!("from gemini")),
            "{calls:?} {tools:?} {snap:#?}"
        );
        assert_eq!(
            std::fs::read_to_string(gdir.join("settings.json"))?,
            user_settings
        );
    }

    // Weft's own agent: rmcp, from AgentTurnInput::mcp_servers.
    {
        use weft_testkit::anthropic::when;
        use weft_testkit::{AnthropicServer, Script, Turn};
        let script = Script::new()
            .turn(Turn::new().tool_use(
                "toolu_n1",
                "mcp__rec__record",
                json!({"text": "from native"}),
            ))
            .turn_when(
                when::tool_result_for("toolu_n1"),
                Turn::text_reply("Recorded."),
            );
        let server = AnthropicServer::start(script).await?;
        let input = s.input(
            "native",
            vec![
                ("WEFT_NATIVE_PROTOCOL".into(), "anthropic-messages".into()),
                ("WEFT_NATIVE_BASE_URL".into(), server.base_url()),
                ("WEFT_NATIVE_API_KEY".into(), "sk-test".into()),
                ("WEFT_NATIVE_MODEL".into(), "scripted-model".into()),
                ("WEFT_NATIVE_PERMISSION".into(), "trusted".into()),
            ],
        )?;
        let (r, snap) = run(driver("native")?, input).await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        let calls = s.calls();
        assert_eq!(
            calls.last().map(|c| c["text"].clone()),
            Some(json!("from native")),
            "{calls:?} {snap:#?}"
        );
    }
    assert_eq!(s.calls().len(), 4, "{:?}", s.calls());
    Ok(())
}

/// How Gemini names it.
const GEMINI_TOOL: &str = "mcp_rec_record";

/// ACP: the same server through `session/new.mcpServers` (claude-agent-acp).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_agent_gets_the_server_in_session_new() -> Res {
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    std::fs::write(
        s.home.path().join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )?;
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "toolu_a1",
            "mcp__rec__record",
            json!({"text": "from claude-acp"}),
        ))
        .turn_when(
            when::tool_result_for("toolu_a1"),
            Turn::text_reply("Recorded."),
        )
        .default_reply(Turn::text_reply("ok"));
    let server = AnthropicServer::start(script).await?;
    let input = s.input(
        "claude-acp",
        vec![
            ("IS_SANDBOX".into(), "1".into()),
            ("ANTHROPIC_BASE_URL".into(), server.base_url()),
            ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ],
    )?;
    let (r, snap) = run(driver("claude-acp")?, input).await?;
    let calls = s.calls();
    assert!(r.ok, "{r:?} {snap:#?}");
    assert_eq!(
        calls.last().map(|c| c["text"].clone()),
        Some(json!("from claude-acp")),
        "{calls:?} {snap:#?}"
    );
    Ok(())
}

/// A server that fails to start is named in the turn, and the turn still runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_is_noted_and_the_turn_runs() -> Res {
    use weft_testkit::{AnthropicServer, Script, Turn};
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/record_mcp.py");
    std::fs::write(
        s.weft.join("mcp.json"),
        json!({"mcpServers": {"bad": {"command": "python3", "args": [fixture, "--fail"]}}})
            .to_string(),
    )?;
    std::fs::write(
        s.home.path().join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )?;
    let server = AnthropicServer::start(Script::new().turn(Turn::text_reply("Fine."))).await?;
    let input = s.input(
        "claude",
        vec![
            ("IS_SANDBOX".into(), "1".into()),
            ("ANTHROPIC_BASE_URL".into(), server.base_url()),
            ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                "1".into(),
            ),
            ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
        ],
    )?;
    let (r, snap) = run(driver("claude")?, input).await?;
    assert!(r.ok, "{r:?} {snap:#?}");
    assert_eq!(snap.text, "Fine.");
    assert!(
        snap.notices.iter().any(|n| n == "MCP server bad: failed"),
        "{:?}",
        snap.notices
    );
    Ok(())
}
