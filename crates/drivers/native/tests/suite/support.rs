//! Shared helpers: a driver with short retry waits, and environments pointing it at a
//! scripted server.

use std::time::Duration;

use weft_native::model::RetryPolicy;
use weft_native::{Config, NativeDriver};

/// A driver whose retries wait milliseconds, reading no process environment.
pub fn driver() -> NativeDriver {
    NativeDriver::with_config(fast_config())
}

/// The config of [`driver`].
pub fn fast_config() -> Config {
    Config {
        home: Some(std::env::temp_dir().join("weft-native-test-no-home")),
        process_env: false,
        retry: RetryPolicy {
            retries: 3,
            base: Duration::from_millis(20),
            max_wait: Duration::from_secs(5),
        },
        max_steps: 50,
    }
}

/// The spawn environment for an endpoint.
pub fn endpoint_env(protocol: &str, base_url: &str, permission: &str) -> Vec<(String, String)> {
    vec![
        ("WEFT_NATIVE_PROTOCOL".into(), protocol.into()),
        ("WEFT_NATIVE_BASE_URL".into(), base_url.into()),
        ("WEFT_NATIVE_API_KEY".into(), "sk-test".into()),
        ("WEFT_NATIVE_MODEL".into(), "scripted-model".into()),
        ("WEFT_NATIVE_PERMISSION".into(), permission.into()),
    ]
}

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;
use tokio_util::sync::CancellationToken;
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_native::pack::{coding::Coding, DomainPack};
use weft_native::tools::{Tool, ToolCx, ToolOutput, Workspace};
use weft_protocol::UniversalSnapshot;
use weft_testkit::sink::{self, TestSink};
use weft_testkit::{AnthropicServer, Script, Turn};

/// A state folder and a workspace for direct driver runs.
pub struct Dirs {
    pub state: tempfile::TempDir,
    pub work: tempfile::TempDir,
}

impl Dirs {
    pub fn new() -> Self {
        Self {
            state: tempfile::tempdir().expect("state"),
            work: tempfile::tempdir().expect("work"),
        }
    }

    /// Dirs whose workspace holds `name` (parents made) with `text`.
    pub fn with_file(name: &str, text: &str) -> Self {
        let dirs = Self::new();
        write(&dirs.work(), name, text);
        dirs
    }

    pub fn work(&self) -> std::path::PathBuf {
        self.work.path().canonicalize().expect("work")
    }

    /// A turn's input.
    pub fn input(
        &self,
        env: &[(String, String)],
        prompt: &str,
        session: Option<&str>,
    ) -> AgentTurnInput {
        AgentTurnInput {
            session_key: "native:test".into(),
            task_id: uuid_like(),
            prompt: prompt.into(),
            workdir: self.work(),
            session_id: session.map(String::from),
            env: env.to_vec(),
            state_dir: self.state.path().to_path_buf(),
            ..Default::default()
        }
    }
}

impl Dirs {
    /// A turn's input in a workspace the user trusted: its `.weft/` hooks, settings,
    /// packs, skills, MCP servers and allow rules count.
    pub fn trusted_input(&self, env: &[(String, String)], prompt: &str) -> AgentTurnInput {
        AgentTurnInput {
            workspace_trusted: true,
            ..self.input(env, prompt, None)
        }
    }
}

fn uuid_like() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    format!("task-{}", N.fetch_add(1, Ordering::Relaxed))
}

/// Runs one turn directly (no kernel), every interaction answered by `answer`.
pub async fn run_turn(
    driver: &dyn AgentDriver,
    input: AgentTurnInput,
) -> (DriverResult, UniversalSnapshot, Arc<TestSink>) {
    let sink = TestSink::new();
    let (r, s) = sink::run(driver, input, &sink).await;
    (r, s, sink)
}

/// Fails unless one of the turn's notices says `text`.
#[track_caller]
pub fn assert_notice(snap: &UniversalSnapshot, text: &str) {
    assert!(
        snap.notices.iter().any(|n| n.contains(text)),
        "{:?}",
        snap.notices
    );
}

/// Writes `text` to `dir/name` (parents made).
pub fn write(dir: &Path, name: &str, text: &str) {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().expect("parent")).expect("mkdir");
    std::fs::write(p, text).expect("write");
}

/// A workspace in a temporary folder and what a tool needs to run there, for calling
/// tools directly (no model, no guard chain).
pub struct ToolBench {
    pub dir: tempfile::TempDir,
    pub ws: Workspace,
    ctx: DriverContext,
    cancel: CancellationToken,
}

impl ToolBench {
    pub fn new() -> Self {
        let dir = tempfile::tempdir().expect("workspace");
        let ws = Workspace::new(dir.path());
        let cancel = CancellationToken::new();
        Self {
            ctx: DriverContext::new(cancel.clone(), TestSink::new()),
            dir,
            ws,
            cancel,
        }
    }

    pub fn root(&self) -> std::path::PathBuf {
        self.ws.root().to_path_buf()
    }

    pub fn path(&self, p: &str) -> std::path::PathBuf {
        self.dir.path().join(p)
    }

    async fn run_tool(
        &self,
        tool: &dyn Tool,
        input: &Value,
        env: &[(String, String)],
    ) -> ToolOutput {
        let progress = weft_native::tools::Progress::new(self.ctx.clone(), Default::default());
        let cx = ToolCx {
            workspace: &self.ws,
            cancel: &self.cancel,
            env,
            ctx: &self.ctx,
            progress: &progress,
        };
        tool.run(input, &cx).await
    }

    /// Runs the coding pack's `name` with this process's environment.
    pub async fn run(&self, name: &str, input: Value) -> ToolOutput {
        let tool = Coding
            .tools()
            .into_iter()
            .find(|t| t.name() == name)
            .expect("tool");
        let env: Vec<(String, String)> = std::env::vars().collect();
        self.run_tool(tool.as_ref(), &input, &env).await
    }

    /// Runs `name` of `pack` through its policy, then the tool (as the guard chain does).
    pub async fn call(&self, pack: &dyn DomainPack, name: &str, input: Value) -> ToolOutput {
        if let Err(e) = pack.policy(name, &input, &self.ws) {
            return ToolOutput::error(e);
        }
        let tool = pack
            .tools()
            .into_iter()
            .find(|t| t.name() == name)
            .expect("tool");
        let out = self.run_tool(tool.as_ref(), &input, &[]).await;
        if !out.is_error {
            self.ws.mark_used(name);
        }
        out
    }

    /// git in the workspace, as a fixed author (no global config is needed).
    pub fn git_output(&self, args: &[&str]) -> std::process::Output {
        std::process::Command::new("git")
            .args(args)
            .current_dir(self.dir.path())
            .env("GIT_AUTHOR_NAME", "t")
            .env("GIT_AUTHOR_EMAIL", "t@example.com")
            .env("GIT_COMMITTER_NAME", "t")
            .env("GIT_COMMITTER_EMAIL", "t@example.com")
            .output()
            .expect("git")
    }

    pub fn git(&self, args: &[&str]) {
        let out = self.git_output(args);
        assert!(out.status.success(), "git {args:?}: {out:?}");
    }
}

/// A scripted Anthropic server, and the environment pointing a turn at it in the
/// permission `mode`.
pub async fn anthropic(script: Script, mode: &str) -> (AnthropicServer, Vec<(String, String)>) {
    let server = AnthropicServer::start(script).await.expect("server");
    let env = endpoint_env("anthropic-messages", &server.base_url(), mode);
    (server, env)
}

/// A script whose model hands a prompt saying "Investigate" to a subagent (the `task`
/// call t1 with `description` and `prompt`, which says "weft-subtask"), whose first
/// request is answered with `child`.
pub fn delegating(description: &str, prompt: &str, child: Turn) -> Script {
    use weft_testkit::anthropic::when;
    Script::new()
        .turn_when(
            when::user_text_contains("Investigate"),
            Turn::new().tool_use(
                "t1",
                "task",
                serde_json::json!({"description": description, "prompt": prompt}),
            ),
        )
        .rule(when::user_text_contains("weft-subtask"), child)
}
