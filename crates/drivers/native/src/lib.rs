//! Weft's own agent, the `native` driver: an in-process agent loop that any model
//! endpoint can power (Anthropic Messages, OpenAI Chat Completions and compatible
//! servers) and any domain can shape through a [`pack::DomainPack`].
//!
//! The shape:
//! - [`model`]: one streaming trait, a thin client per protocol on reqwest and
//!   eventsource-stream, typed errors, and the rule that a request is never sent again
//!   once part of its response arrived. General LLM crates were passed over because
//!   they drop thinking signatures on replay (see the research note).
//! - [`turn`]: the loop. [`guard`]: the one place every tool call passes.
//! - [`pack`]: domains (`coding` ships); [`tools`]: what packs offer.
//! - [`store`]: the conversation on disk, so a new process resumes it exactly.
//!
//! The loop knows no domain word: every tool name it runs comes from the session's pack
//! or from its own domain-free tools (`update_plan`, `ask_user`).

pub mod attachments;
pub mod commands;
pub mod compact;
pub mod config;
pub mod conversation;
pub mod guard;
pub mod hooks;
pub mod mcp;
pub mod model;
pub mod pack;
pub mod prompt;
pub mod secrets;
pub mod settings;
pub mod shell;
pub mod skills;
pub mod spec;
pub mod store;
pub mod subagent;
pub mod tools;
pub mod turn;

use std::collections::{HashMap, HashSet};
use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{AgentInfo, Capabilities, DriverEvent, ModelInfo, ToolInfo};

use crate::guard::SessionFlags;
use crate::model::RetryPolicy;
use crate::pack::PermissionMode;
use crate::store::Record;
use crate::tools::{ToolRef, Workspace};

/// The driver's id.
pub const NATIVE_ID: &str = "native";

/// How the driver is set up (tests shorten the retry waits).
#[derive(Debug, Clone)]
pub struct Config {
    /// Where `providers.json` is looked for by `info` and `models` (turns use their own
    /// state folder); default: Weft's global state folder.
    pub home: Option<PathBuf>,
    /// Whether `info` and `models` read the process environment.
    pub process_env: bool,
    /// Retries before a response arrived.
    pub retry: RetryPolicy,
    /// The step limit when neither the turn nor the workspace sets one.
    pub max_steps: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            home: None,
            process_env: true,
            retry: RetryPolicy::default(),
            max_steps: 50,
        }
    }
}

/// What a session keeps in memory between its turns.
struct Live {
    workspace: Arc<Workspace>,
    allowed: Mutex<HashSet<String>>,
}

/// The native agent.
pub struct NativeDriver {
    config: Config,
    live: Mutex<HashMap<String, Arc<Live>>>,
}

impl Default for NativeDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl NativeDriver {
    /// The driver with default settings.
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// The driver with `config`.
    pub fn with_config(config: Config) -> Self {
        Self {
            config,
            live: Mutex::new(HashMap::new()),
        }
    }

    fn home(&self) -> PathBuf {
        self.config
            .home
            .clone()
            .unwrap_or_else(weft_kernel::state::global_state_dir)
    }

    fn own_endpoint(&self) -> Result<config::Endpoint, String> {
        let env = self.config.process_env;
        config::resolve(
            &|n| if env { std::env::var(n).ok() } else { None },
            &self.home(),
            None,
        )
    }

    /// What session `key` (the kernel's session key) keeps between its turns.
    fn live(&self, key: &str, workdir: &std::path::Path) -> Arc<Live> {
        let mut live = self.live.lock();
        let entry = live.entry(key.to_string()).or_insert_with(|| {
            Arc::new(Live {
                workspace: Arc::new(Workspace::new(workdir)),
                allowed: Mutex::new(HashSet::new()),
            })
        });
        if entry.workspace.root()
            != workdir
                .canonicalize()
                .unwrap_or_else(|_| workdir.to_path_buf())
        {
            *entry = Arc::new(Live {
                workspace: Arc::new(Workspace::new(workdir)),
                allowed: Mutex::new(HashSet::new()),
            });
        }
        entry.clone()
    }
}

/// The workspace's `.weft/native.toml` when it is trusted (`own`), else defaults; a
/// file that cannot be used is a notice, not a failed turn.
fn workspace_settings(own: Option<&std::path::Path>, ctx: &DriverContext) -> settings::Settings {
    match own.map(settings::load) {
        Some(Ok(s)) => s,
        Some(Err(e)) => {
            ctx.emit(DriverEvent::Notice {
                text: format!("workspace settings ignored: {e}"),
            });
            Default::default()
        }
        None => Default::default(),
    }
}

/// The pack's tools, the loop's own, and the skills (the trusted workspace's, `own`,
/// and the global ones, less those turned off), with the skills' prompt section.
fn loop_tools(
    pack: &dyn pack::DomainPack,
    own: Option<&std::path::Path>,
    home: &std::path::Path,
) -> (Vec<ToolRef>, Option<String>) {
    let mut tools: Vec<ToolRef> = pack.tools();
    tools.push(Arc::new(tools::builtin::UpdatePlan));
    tools.push(Arc::new(tools::builtin::AskUser));
    tools.push(Arc::new(subagent::Task));
    tools.push(Arc::new(skills::MemorySave));
    tools.push(Arc::new(skills::MemoryList));
    let mut found = skills::find(own, home);
    let off = weft_kernel::skills::disabled(home);
    found.retain(|s| !off.contains(&s.name));
    let prompt = skills::prompt(&found);
    if !found.is_empty() {
        tools.push(Arc::new(skills::SkillTool(found)));
    }
    (tools, prompt)
}

/// What a workspace not trusted holds that this turn leaves alone, said once per turn;
/// `None` when it holds nothing of the kind.
fn untrusted_notice(workdir: &std::path::Path) -> Option<String> {
    let dir = workdir.join(".weft");
    let found: Vec<&str> = ["hooks.json", "native.toml", "packs", "skills"]
        .into_iter()
        .filter(|n| std::fs::symlink_metadata(dir.join(n)).is_ok())
        .collect();
    (!found.is_empty()).then(|| {
        format!(
            "this workspace is not trusted, so its .weft/ {} {} ignored (`weft trust` to use them)",
            found.join(", "),
            if found.len() == 1 { "is" } else { "are" }
        )
    })
}

fn nonempty(v: Option<String>) -> Option<String> {
    v.filter(|s| !s.trim().is_empty())
}

#[async_trait]
impl AgentDriver for NativeDriver {
    fn id(&self) -> &str {
        NATIVE_ID
    }

    fn name(&self) -> &str {
        "Weft agent (native)"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            steer: true,
            interact: true,
            resume: true,
            tui: false,
        }
    }

    async fn info(&self) -> AgentInfo {
        let problem = self.own_endpoint().err();
        AgentInfo {
            id: NATIVE_ID.into(),
            name: self.name().into(),
            installed: problem.is_none(),
            version: Some(env!("CARGO_PKG_VERSION").into()),
            capabilities: self.capabilities(),
            problem,
            facts: weft_protocol::AgentFacts {
                commands: commands::list(),
                ..spec::spec().facts()
            },
        }
    }

    async fn models(&self) -> Vec<ModelInfo> {
        let Ok(e) = self.own_endpoint() else {
            return Vec::new();
        };
        let mut ids = e.models.clone();
        if ids.is_empty() {
            ids.push(e.model.clone());
        }
        ids.iter()
            .map(|id| ModelInfo {
                id: id.clone(),
                label: id.clone(),
                default: *id == e.model,
            })
            .collect()
    }

    async fn tools(&self, input: &AgentTurnInput) -> Result<Vec<ToolInfo>, String> {
        let home = if input.state_dir.as_os_str().is_empty() {
            self.home()
        } else {
            input.state_dir.clone()
        };
        let own = input.workspace_trusted.then_some(input.workdir.as_path());
        let env_pack = if self.config.process_env {
            input.var("WEFT_NATIVE_PACK")
        } else {
            None
        };
        let pack_name = nonempty(input.pack.clone())
            .or_else(|| nonempty(env_pack))
            .unwrap_or_else(|| pack::DEFAULT.to_string());
        let pack = pack::find(&pack_name, own, &home)?;
        let (mut tools, _) = loop_tools(pack.as_ref(), own, &home);
        // The MCP servers are started to ask them, as a turn would, then closed.
        let env = secrets::scrub(input.spawn_env(), &[]);
        let (mcp, mcp_tools, problems) = mcp::tools(
            &input.workdir,
            &home,
            input.workspace_trusted,
            pack.mcp_servers().as_deref(),
            &env,
            &input.mcp_servers,
        )
        .await;
        for p in problems {
            tracing::info!("listing the native agent's tools: {p}");
        }
        tools.extend(mcp_tools);
        let out = tools
            .iter()
            .map(|t| ToolInfo {
                name: t.name().to_string(),
                description: t.description().to_string(),
                server: (t.kind() == weft_protocol::ToolKind::Mcp)
                    .then(|| t.name().strip_prefix("mcp__"))
                    .flatten()
                    .and_then(|rest| rest.split_once("__"))
                    .map(|(server, _)| server.to_string()),
            })
            .collect();
        mcp.close().await;
        Ok(out)
    }

    async fn close_session(&self, session_key: &str) {
        self.live.lock().remove(session_key);
        tools::warm::clear();
    }

    async fn shutdown(&self) {
        // Sandboxes started ahead for the next bash call end with the host.
        tools::warm::clear();
    }

    fn efforts(&self) -> Vec<String> {
        ["low", "medium", "high"].map(String::from).to_vec()
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let session_id = input
            .session_id
            .clone()
            .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
        let failed = |e: String| DriverResult {
            session_id: Some(session_id.clone()),
            ..DriverResult::failed(e)
        };
        // Without a client environment the turn would read the kernel's own; a driver
        // told not to (tests) reads only what the kernel passed for this turn.
        let own_env = self.config.process_env || input.client_env.is_some();
        let var = |n: &str| {
            if own_env {
                input.var(n)
            } else {
                input
                    .env
                    .iter()
                    .rev()
                    .find(|(k, _)| k == n)
                    .map(|(_, v)| v.clone())
            }
        };
        let endpoint = match config::resolve(&var, &input.state_dir, input.model.as_deref()) {
            Ok(e) => e,
            Err(e) => return failed(e),
        };
        ctx.emit(DriverEvent::Session {
            session_id: session_id.clone(),
            model: Some(endpoint.model.clone()),
        });
        ctx.emit(DriverEvent::Commands {
            commands: commands::list(),
        });
        let home = input.state_dir.clone();
        // What the workspace's .weft/ grants (hooks, native.toml, packs, skills) counts
        // only once the user trusted it; until then only the global ones apply.
        let trusted = input.workspace_trusted;
        let own = trusted.then_some(input.workdir.as_path());
        if !trusted {
            if let Some(text) = untrusted_notice(&input.workdir) {
                ctx.emit(DriverEvent::Notice { text });
            }
        }
        let loaded = store::load(&home, &session_id);
        let pack_name = nonempty(input.pack.clone())
            .or_else(|| nonempty(var("WEFT_NATIVE_PACK")))
            .or_else(|| loaded.pack.clone())
            .unwrap_or_else(|| pack::DEFAULT.to_string());
        let pack = match pack::find(&pack_name, own, &home) {
            Ok(p) => p,
            Err(e) => return failed(e),
        };
        let settings = workspace_settings(own, &ctx);
        let plan_mode = loaded.plan_mode;
        if loaded.pack.as_deref() != Some(pack_name.as_str()) {
            if let Err(e) = store::append(
                &home,
                &session_id,
                &[Record::Meta {
                    pack: pack_name.clone(),
                    plan_mode,
                }],
            ) {
                return failed(format!("cannot save the session: {e}"));
            }
        }
        let mut plan_mode = plan_mode;
        let mut prompt = input.prompt.clone();
        match commands::parse(&prompt) {
            Some(commands::Command::Undo) => {
                return commands::undo(&ctx, &home, &session_id, &input.workdir);
            }
            Some(commands::Command::Plan(rest)) => {
                plan_mode = true;
                if let Err(e) = commands::save_meta(&home, &session_id, &pack_name, true) {
                    return failed(e);
                }
                ctx.emit(DriverEvent::Notice {
                    text: "plan mode is on: changes are refused until you approve a plan".into(),
                });
                if rest.trim().is_empty() {
                    ctx.emit(DriverEvent::Text {
                        delta: "Plan mode is on. Tell me what to plan; I will only look, not change anything, until you approve the plan.".into(),
                    });
                    return DriverResult {
                        ok: true,
                        session_id: Some(session_id),
                        ..Default::default()
                    };
                }
                prompt = rest;
            }
            Some(commands::Command::Compact) => {
                return commands::compact(&ctx, &endpoint, &home, &session_id, loaded.messages)
                    .await;
            }
            Some(commands::Command::Unknown(name)) => {
                return commands::unknown(&ctx, &session_id, &name);
            }
            None => {}
        }
        let permission = nonempty(var("WEFT_NATIVE_PERMISSION"))
            .or(settings.permission.clone())
            .and_then(|p| PermissionMode::parse(&p))
            .unwrap_or_else(|| pack.permission_default());
        let max_steps = nonempty(var("WEFT_NATIVE_MAX_STEPS"))
            .and_then(|v| v.trim().parse().ok())
            .or(settings.max_steps)
            .unwrap_or(self.config.max_steps)
            .max(1);
        let (mut tools, skills_prompt) = loop_tools(pack.as_ref(), own, &home);
        // Every process the agent starts gets the turn's environment without the model's
        // key or any other credential.
        let keys: Vec<&str> = endpoint.api_key.iter().map(String::as_str).collect();
        let tool_env = secrets::scrub(input.spawn_env(), &keys);
        let (mcp, mcp_tools, mcp_problems) = mcp::tools(
            &input.workdir,
            &home,
            input.workspace_trusted,
            pack.mcp_servers().as_deref(),
            &tool_env,
            &input.mcp_servers,
        )
        .await;
        for p in mcp_problems {
            ctx.emit(DriverEvent::Notice { text: p });
        }
        for server in mcp.statuses.clone() {
            ctx.emit(DriverEvent::Mcp { server });
        }
        tools.extend(mcp_tools);
        let live = self.live(&input.session_key, &input.workdir);
        let flags = SessionFlags {
            plan_mode: plan_mode.into(),
            permission,
            allowed: Mutex::new(live.allowed.lock().clone()),
            shell: shell::ShellFlags::from_vars(&var, &input.state_dir, permission),
            workspace_trusted: trusted,
        };
        ctx.emit(DriverEvent::Degraded {
            capability: weft_protocol::degraded::capability::SANDBOX.into(),
            reason: flags.shell.without_sandbox(),
        });
        let mut system = prompt::system(
            pack.as_ref(),
            live.workspace.root(),
            input.system_prompt.as_deref(),
        );
        for section in [skills_prompt, skills::memory_prompt(&input.workdir)]
            .into_iter()
            .flatten()
        {
            system.push_str("\n\n");
            system.push_str(&section);
        }
        if plan_mode {
            system.push_str(prompt::PLAN_MODE);
        }
        let setup = turn::TurnSetup {
            client: endpoint.client(),
            pack_name: pack_name.clone(),
            parent: None,
            system,
            endpoint,
            pack,
            tools,
            max_steps,
            retry: self.config.retry,
            settings,
            env: {
                let mut env = tool_env;
                // The session's private scratch folder for sandboxed commands.
                let tmp = home.join("sandbox-tmp").join(&session_id);
                env.push((shell::SESSION_TMP_VAR.into(), tmp.display().to_string()));
                env.push((shell::SESSION_HOME_VAR.into(), home.display().to_string()));
                env
            },
            home: home.clone(),
            session_id: session_id.clone(),
            task_id: input.task_id.clone(),
            effort: input.effort.clone(),
        };
        let mut messages = loaded.messages;
        let first = match attachments::user_message(&prompt, &input.attachments) {
            Ok(m) => m,
            Err(e) => return failed(e),
        };
        if let Err(e) = store::append(&home, &session_id, &[Record::Msg { m: first.clone() }]) {
            return failed(format!("cannot save the session: {e}"));
        }
        messages.push(first);
        let result = turn::run(&setup, &ctx, &live.workspace, &flags, &mut messages).await;
        drop(setup);
        mcp.close().await;
        *live.allowed.lock() = flags.allowed.lock().clone();
        let originals = live.workspace.take_originals();
        if !originals.is_empty() {
            let _ = store::append(
                &home,
                &session_id,
                &[store::undo_record(&input.task_id, originals)],
            );
        }
        result
    }
}
