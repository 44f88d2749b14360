//! What the end-to-end suites share: a Weft home and workspace, each real agent's
//! set-up against its scripted model server, and one turn run with plugins applied as
//! the kernel applies them.
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use weft_kernel::{AgentDriver, AgentTurnInput, DriverResult, Plugin, Plugins, TurnCallbacks};
use weft_protocol::{permission, InteractionResponse, UniversalSnapshot};

pub type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

pub fn agents_bin() -> Option<PathBuf> {
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

pub fn fixture() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/record_mcp.py")
}

/// A Weft home with the one mcp.json, a workspace, and the file the server records to.
pub struct Setup {
    pub home: tempfile::TempDir,
    pub weft: PathBuf,
    pub work: tempfile::TempDir,
    pub record: PathBuf,
    pub path: String,
}

impl Setup {
    pub fn new(bin: &Path) -> Res<Self> {
        // Gemini skips a settings file under a folder others may write (/tmp).
        let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
        let weft = home.path().join(".weft");
        std::fs::create_dir_all(&weft)?;
        let work = tempfile::tempdir()?;
        let record = home.path().join("calls.jsonl");
        std::fs::write(
            weft.join("mcp.json"),
            json!({"mcpServers": {"rec": {
                "command": "python3",
                "args": [fixture(), record],
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

    pub fn input(&self, agent: &str, env: Vec<(String, String)>) -> Res<AgentTurnInput> {
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

    /// Replaces the Weft configuration.
    pub fn configure(&self, servers: Value) -> Res {
        std::fs::write(
            self.weft.join("mcp.json"),
            json!({ "mcpServers": servers }).to_string(),
        )?;
        Ok(())
    }

    /// The input for `agent` against its scripted server at `url`, the agent's own
    /// home prepared (onboarding done, key auth, a CODEX_HOME).
    pub fn agent_input(&self, agent: &str, url: &str) -> Res<AgentTurnInput> {
        let claude = || -> Vec<(String, String)> {
            vec![
                ("IS_SANDBOX".into(), "1".into()),
                ("ANTHROPIC_BASE_URL".into(), url.into()),
                ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
                (
                    "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
                    "1".into(),
                ),
                ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
            ]
        };
        let env = match agent {
            "claude" | "claude-acp" => {
                std::fs::write(
                    self.home.path().join(".claude.json"),
                    r#"{"hasCompletedOnboarding":true}"#,
                )?;
                claude()
            }
            "codex" => {
                let codex_home = self.home.path().join("codex");
                std::fs::create_dir_all(&codex_home)?;
                vec![
                    ("CODEX_HOME".into(), codex_home.display().to_string()),
                    ("WEFT_CODEX_BASE_URL".into(), url.into()),
                    (
                        "WEFT_CODEX_API_KEY_ENV".into(),
                        "WEFT_TEST_OPENAI_KEY".into(),
                    ),
                    ("WEFT_TEST_OPENAI_KEY".into(), "sk-test".into()),
                    ("WEFT_CODEX_MAX_RETRIES".into(), "0".into()),
                    ("WEFT_CODEX_SANDBOX".into(), "danger-full-access".into()),
                    ("WEFT_CODEX_APPROVAL_POLICY".into(), "never".into()),
                    ("WEFT_CODEX_CONFIG".into(), "model=\"mock-model\"".into()),
                ]
            }
            "gemini" => vec![
                ("GEMINI_API_KEY".into(), "test-key".into()),
                ("GOOGLE_GEMINI_BASE_URL".into(), url.into()),
                ("GEMINI_CLI_NO_RELAUNCH".into(), "true".into()),
            ],
            "native" => vec![
                ("WEFT_NATIVE_PROTOCOL".into(), "anthropic-messages".into()),
                ("WEFT_NATIVE_BASE_URL".into(), url.into()),
                ("WEFT_NATIVE_API_KEY".into(), "sk-test".into()),
                ("WEFT_NATIVE_MODEL".into(), "scripted-model".into()),
                ("WEFT_NATIVE_PERMISSION".into(), "trusted".into()),
            ],
            other => return Err(format!("no set-up for {other}").into()),
        };
        self.input(agent, env)
    }

    pub fn calls(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.record)
            .unwrap_or_default()
            .lines()
            .filter_map(|l| serde_json::from_str(l).ok())
            .collect()
    }
}

/// Runs one turn with `plugin` applied as the kernel applies it; every permission is
/// allowed.
pub async fn run_with(
    plugins: Vec<Arc<dyn Plugin>>,
    driver: Arc<dyn AgentDriver>,
    mut input: AgentTurnInput,
) -> Res<(DriverResult, UniversalSnapshot)> {
    let plugins = Plugins::new(plugins);
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

/// One turn with the MCP plugin alone.
pub async fn run(
    driver: Arc<dyn AgentDriver>,
    input: AgentTurnInput,
) -> Res<(DriverResult, UniversalSnapshot)> {
    run_with(
        vec![Arc::new(weft_drivers::McpPlugin::default())],
        driver,
        input,
    )
    .await
}

pub fn driver(id: &str) -> Res<Arc<dyn AgentDriver>> {
    weft_drivers::all()
        .into_iter()
        .find(|d| d.id() == id)
        .ok_or_else(|| format!("no driver {id}").into())
}

/// Claude's script: call `record` with `text`, then say so.
pub async fn claude_server(id: &str, text: &str) -> Res<weft_testkit::AnthropicServer> {
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};
    let script = Script::new()
        .turn(Turn::new().tool_use(id, "mcp__rec__record", json!({ "text": text })))
        .turn_when(when::tool_result_for(id), Turn::text_reply("Recorded."))
        .default_reply(Turn::text_reply("ok"));
    Ok(AnthropicServer::start(script).await?)
}

pub fn last_text(s: &Setup) -> Option<Value> {
    s.calls().last().map(|c| c["text"].clone())
}
