//! Weft's ACP driver: any Agent Client Protocol agent over stdio.
//!
//! [`AcpDriver`] runs one agent process per active session ([`process`], in its own
//! process group, killed on close, shutdown or when a turn's future is dropped) and
//! speaks ACP to it through the official `agent-client-protocol` SDK ([`conn`]):
//! `initialize`, then `session/new` — or `session/load` to resume, where the agent
//! advertises it and the spec allows it — then one `session/prompt` per turn. Every
//! `session/update` becomes [`DriverEvent`](weft_protocol::DriverEvent)s through a pure
//! [`normalize::Normalizer`]; `session/request_permission` becomes a permission
//! interaction offering the agent's own options ([`permission`]); stop is
//! `session/cancel`, then a kill if the agent does not answer `cancelled` in time.
//! The agent's models and modes (from `session/new`) are what [`AgentDriver::models`]
//! lists; a model id `mode:<id>` switches the session's mode.
//!
//! Presets ([`config::presets`]): `hermes`, `kimi`, `claude-acp` (claude-agent-acp),
//! `gemini-acp` (`gemini --acp`); a user adds their own in `<WEFT_HOME>/agents.json`
//! ([`config::user_agents`]). [`drivers`] gives all of them.
//!
//! Hazards: the SDK's dispatch loop must never wait on us (handlers only forward to a
//! channel); the agent's request ids are its own (the SDK keeps the two id spaces
//! apart); a request no handler claims is answered `method_not_found` by the SDK, and a
//! permission request still open when a turn ends is answered `cancelled`.

pub mod backfill;
pub mod config;
pub mod conn;
pub mod elicit;
pub use weft_kernel::live;
pub mod normalize;
pub mod permission;
pub mod process;
pub mod quirks;
pub mod session;
pub mod skills;
pub mod spec;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_agent_process::{npm_package_version, probe_output};
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{AgentInfo, Capabilities, DriverEvent, ModelInfo, ToolInfo};

pub use config::AcpSpec;
pub use session::{Catalog, LiveSession, Shape, TurnEnd};

use crate::conn::AcpConnection;
use crate::process::SpawnSpec;

/// How long a closing session's agent gets to exit by itself (it is waited on only
/// until it exits). Half a second was too short for claude-agent-acp on a loaded
/// 2-core machine: killed before it wrote its session out, the next process's
/// `session/load` of it failed (the conformance suite's resume_in_new_process, now and
/// then, under load).
const CLOSE_GRACE: Duration = Duration::from_secs(3);

/// One ACP agent.
pub struct AcpDriver {
    spec: AcpSpec,
    sessions: Arc<Mutex<HashMap<String, LiveSession>>>,
    catalog: Mutex<Option<Catalog>>,
    agent_version: Mutex<Option<String>>,
}

/// Every ACP agent: the presets, then the user's from `<state_dir>/agents.json` (a
/// user agent with a preset's id replaces it). A broken agents.json is logged and
/// skipped, never fatal.
pub fn drivers(state_dir: &Path) -> Vec<Arc<dyn AgentDriver>> {
    drivers_with(state_dir, |_| {})
}

/// Like [`drivers`], letting the caller adjust each spec first (the registry gives
/// the `gemini-acp` preset the Gemini driver's session-file reader).
pub fn drivers_with(state_dir: &Path, adjust: impl Fn(&mut AcpSpec)) -> Vec<Arc<dyn AgentDriver>> {
    specs_with(state_dir, adjust)
        .into_iter()
        .map(|s| Arc::new(AcpDriver::new(s)) as Arc<dyn AgentDriver>)
        .collect()
}

/// The specs [`drivers_with`] makes drivers of: the presets, and the user's own from
/// `<state_dir>/agents.json` (one of a preset's id replaces it), each `adjust`ed.
pub fn specs_with(state_dir: &Path, adjust: impl Fn(&mut AcpSpec)) -> Vec<AcpSpec> {
    let mut specs = config::presets();
    match config::user_agents(state_dir) {
        Ok(user) => {
            for u in user {
                specs.retain(|s| s.id != u.id);
                specs.push(u);
            }
        }
        Err(e) => tracing::warn!("ignoring agents.json: {e}"),
    }
    for s in &mut specs {
        adjust(s);
    }
    specs
}

impl AcpDriver {
    /// A driver for `spec`.
    pub fn new(spec: AcpSpec) -> Self {
        Self {
            spec,
            sessions: Arc::new(Mutex::new(HashMap::new())),
            catalog: Mutex::new(None),
            agent_version: Mutex::new(None),
        }
    }

    /// The spec it runs.
    pub fn spec(&self) -> &AcpSpec {
        &self.spec
    }

    /// Adds the arguments the spec's folder-trust switch gives `input`'s folder (in the
    /// extra arguments, so the session's shape, and a change of trust is a new
    /// process), or says why the agent cannot run there.
    fn with_trust_args(&self, input: &mut AgentTurnInput) -> Result<(), String> {
        if let Some(trust_args) = self.spec.trust_args {
            input.extra_args.extend(trust_args(input)?);
        }
        Ok(())
    }

    /// Process ids of the live session processes (tests check for orphans).
    pub fn live_pids(&self) -> Vec<u32> {
        self.sessions
            .lock()
            .values()
            .filter_map(|s| s.conn.process.pid())
            .collect()
    }

    /// Whether `input`'s turn would continue a live session (same folder and settings,
    /// process alive) rather than start or resume one.
    pub fn can_continue(&self, input: &AgentTurnInput) -> bool {
        let mut input = input.clone();
        match self.with_trust_args(&mut input) {
            Ok(()) => {}
            Err(_) => return false,
        }
        let shape = Shape::of(&input);
        self.sessions
            .lock()
            .get_mut(&input.session_key)
            .is_some_and(|s| {
                !s.conn.closed && s.conn.process.exit_status().is_none() && s.shape == shape
            })
    }

    /// The slash commands the agent last announced in `session_key`.
    pub fn available_commands(&self, session_key: &str) -> Vec<String> {
        self.sessions
            .lock()
            .get(session_key)
            .map(|s| s.norm.commands.iter().map(|c| c.name.clone()).collect())
            .unwrap_or_default()
    }

    fn spawn_spec(&self, program: PathBuf, input: &AgentTurnInput) -> SpawnSpec {
        let mut args = self.spec.args.clone();
        args.extend(input.extra_args.iter().cloned());
        SpawnSpec {
            program,
            args,
            env: self.spec.spawn_env(input),
            cwd: input.workdir.clone(),
        }
    }

    /// The executable as the kernel's own environment finds it: for what belongs to
    /// no turn (info, the model catalog probe).
    fn own_binary(&self) -> Result<PathBuf, String> {
        self.spec.find_binary(&|n| std::env::var(n).ok())
    }

    /// A session ready for `input`'s turn: the live one, or a new process (resuming
    /// `input.session_id`, or the dead process's session, where possible).
    async fn session_for(
        &self,
        input: &AgentTurnInput,
        ctx: &DriverContext,
    ) -> Result<LiveSession, String> {
        let shape = Shape::of(input);
        let existing = self.sessions.lock().remove(&input.session_key);
        let mut resume = input.session_id.clone();
        if let Some(mut s) = existing {
            let alive = !s.conn.closed && s.conn.process.exit_status().is_none();
            if alive && s.shape == shape {
                return Ok(s);
            }
            resume = resume.or_else(|| Some(s.session_id.clone()));
            if alive {
                ctx.emit(DriverEvent::Notice {
                    text: format!(
                        "{} restarted for the new folder, settings or environment",
                        self.spec.name
                    ),
                });
            }
            s.conn.close(CLOSE_GRACE).await;
        }
        let program = self.spec.find_binary(&|n| input.var(n))?;
        let mut spawn = self.spawn_spec(program, input);
        let skills = skills::place(input);
        if let (Some(dir), Some(settings)) = (&skills, self.spec.skills_settings) {
            if let Some((name, file)) = settings.session_file(input, dir) {
                spawn.env.retain(|(k, _)| *k != name);
                spawn.env.push((name, file));
            }
        }
        let conn = AcpConnection::start(&spawn, self.spec.init_timeout)
            .await
            .map_err(|e| session::start_error(&self.spec.name, &e))?;
        if let Some(info) = &conn.init.agent_info {
            *self.agent_version.lock() = Some(info.version.clone());
        }
        if let (Some(id), Some(prepare), true) = (
            resume.as_deref(),
            self.spec.before_load,
            self.spec.load_session,
        ) {
            prepare(input, id);
        }
        match session::open(
            conn,
            &input.workdir,
            resume.as_deref(),
            self.spec.load_session,
            &input.mcp_servers,
            &skills.into_iter().collect::<Vec<_>>(),
            ctx,
        )
        .await
        {
            Ok(mut s) => {
                s.shape = shape;
                *self.catalog.lock() = Some(s.catalog.clone());
                Ok(s)
            }
            Err((conn, e)) => {
                conn.close(CLOSE_GRACE).await;
                Err(format!("{}: {e}", self.spec.name))
            }
        }
    }

    /// Learns the agent's models and modes by opening (and closing) a session in a
    /// scratch folder, when no session has told us yet.
    async fn probe_catalog(&self) -> Option<Catalog> {
        let program = self.own_binary().ok()?;
        let dir = std::env::temp_dir();
        // No turn: the kernel's own environment, with the agent's own on top.
        let spawn = SpawnSpec {
            program,
            args: self.spec.args.clone(),
            env: self.spec.spawn_env(&AgentTurnInput::default()),
            cwd: dir.clone(),
        };
        let reply = match AcpConnection::start(&spawn, self.spec.init_timeout).await {
            Ok(conn) => {
                let req = agent_client_protocol::v1::schema::NewSessionRequest::new(dir);
                let reply = conn::request(&conn.cx, "session/new", &req).await;
                conn.close(CLOSE_GRACE).await;
                reply.ok()
            }
            Err(_) => None,
        };
        // A failed probe (not logged in, crashed) is remembered as "no models" until a
        // session tells us more, so listing models never respawns the agent each time.
        let catalog = reply.map(|r| Catalog::from_reply(&r)).unwrap_or_default();
        *self.catalog.lock() = Some(catalog.clone());
        Some(catalog)
    }
}

/// The first word of a `--version` output that is a version: `v0.19.0` (Hermes) and
/// `1.0.102.` (Copilot's sentence) become `0.19.0` and `1.0.102`.
fn version_word(stdout: &str) -> Option<String> {
    stdout.split_whitespace().find_map(|w| {
        let w = w.strip_prefix('v').unwrap_or(w);
        let w = w.trim_end_matches(|c: char| !c.is_ascii_alphanumeric());
        w.chars()
            .next()
            .is_some_and(|c| c.is_ascii_digit())
            .then(|| w.to_string())
    })
}

/// Why an ACP agent's tools cannot be listed: the protocol has no message for it, so
/// an empty list would read as "no tools".
pub fn no_tool_list(name: &str) -> String {
    format!(
        "{name} speaks ACP, which gives an agent no way to list its tools: they show as \
         it calls them. The MCP servers Weft gives it are in `weft mcp list` (Settings → MCP)"
    )
}

#[async_trait]
impl AgentDriver for AcpDriver {
    fn id(&self) -> &str {
        &self.spec.id
    }

    fn name(&self) -> &str {
        &self.spec.name
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            steer: false,
            interact: true,
            resume: self.spec.load_session,
            tui: false,
        }
    }

    async fn info(&self) -> AgentInfo {
        let base = AgentInfo {
            id: self.spec.id.clone(),
            name: self.spec.name.clone(),
            installed: false,
            version: self.agent_version.lock().clone(),
            capabilities: self.capabilities(),
            problem: None,
            facts: spec::spec_of(&self.spec).facts(),
        };
        let program = match self.own_binary() {
            Ok(p) => p,
            Err(problem) => {
                return AgentInfo {
                    problem: Some(problem),
                    ..base
                }
            }
        };
        let mut version = base
            .version
            .clone()
            .or_else(|| npm_package_version(&program));
        if let (None, Some(args)) = (&version, &self.spec.version_args) {
            let args: Vec<&str> = args.iter().map(String::as_str).collect();
            if let Ok(stdout) = probe_output(&program, &args).await {
                version = version_word(&stdout);
            }
        }
        AgentInfo {
            installed: true,
            version,
            ..base
        }
    }

    async fn models(&self) -> Vec<ModelInfo> {
        let known = self.catalog.lock().clone();
        let catalog = match known {
            Some(c) => Some(c),
            None => self.probe_catalog().await,
        };
        catalog.map(|c| c.model_infos()).unwrap_or_default()
    }

    async fn tools(&self, _input: &AgentTurnInput) -> Result<Vec<ToolInfo>, String> {
        Err(no_tool_list(&self.spec.name))
    }

    async fn run(&self, mut input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        if let Err(e) = self.with_trust_args(&mut input) {
            return DriverResult::failed(e);
        }
        let Some(read) = self.spec.tool_output else {
            return self.run_turn(input, ctx).await;
        };
        let recording = Arc::new(backfill::Recording::new(ctx.clone()));
        let inner = DriverContext::new(ctx.cancel_token(), recording.clone());
        let env = self.spec.spawn_env(&input);
        let result = self.run_turn(input, inner).await;
        if let Some(sid) = result.session_id.clone() {
            backfill::fill(read, env, sid, recording.missing(), &ctx).await;
        }
        result
    }

    async fn prewarm(&self, mut input: AgentTurnInput) -> Result<Option<u32>, String> {
        self.with_trust_args(&mut input)?;
        if self.sessions.lock().contains_key(&input.session_key) {
            return Ok(None);
        }
        // Past `initialize` and `session/new` (or `session/load`): the next prompt's
        // `session/prompt` is the first thing it waits for. What opening the session
        // reports that lasts (a context lost to a failed load) stays on the session
        // and is reported by the turn.
        let s = self.session_for(&input, &DriverContext::detached()).await?;
        let pid = s.conn.process.pid();
        let mut sessions = self.sessions.lock();
        if sessions.contains_key(&input.session_key) {
            return Ok(None);
        }
        sessions.insert(input.session_key.clone(), s);
        Ok(pid)
    }

    async fn close_session(&self, session_key: &str) {
        let s = self.sessions.lock().remove(session_key);
        if let Some(s) = s {
            s.conn.close(CLOSE_GRACE).await;
        }
    }

    async fn shutdown(&self) {
        let all: Vec<LiveSession> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        // Each gets its grace at the same time: one by one, ten sessions took ten graces.
        futures::future::join_all(all.into_iter().map(|s| s.conn.close(CLOSE_GRACE))).await;
    }
}

impl AcpDriver {
    async fn run_turn(&self, mut input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let mut s = match self.session_for(&input, &ctx).await {
            Ok(s) => s,
            Err(e) => return DriverResult::failed(e),
        };
        recover_context(&mut s, &mut input, &ctx);
        if let Some(mode) = config::knob(&input, &config::mode_env_name(&self.spec.id)) {
            let wanted = format!("{}{mode}", session::MODE_PREFIX);
            s.apply_model(Some(&wanted), &ctx).await;
        }
        s.apply_model(input.model.as_deref(), &ctx).await;
        ctx.emit(DriverEvent::Session {
            session_id: s.session_id.clone(),
            model: s.catalog.current_model.clone(),
        });
        // `s` is owned here: if this future is dropped mid-turn, dropping it kills the
        // process group.
        let end = s.prompt(&input, &ctx, self.spec.stop_grace).await;
        let session_id = Some(s.session_id.clone());
        let (result, keep) = match end {
            TurnEnd::Done { stop_reason } => match stop_reason.as_str() {
                "refusal" => (DriverResult::failed("the agent refused the prompt"), true),
                "max_tokens" | "max_turn_requests" => {
                    ctx.emit(DriverEvent::Notice {
                        text: format!("The agent ended the turn early ({stop_reason})"),
                    });
                    (DriverResult::ok(), true)
                }
                _ => (DriverResult::ok(), true),
            },
            TurnEnd::Stopped { clean } => (
                DriverResult {
                    ok: false,
                    ..Default::default()
                },
                clean,
            ),
            TurnEnd::Died(e) => (
                DriverResult::failed(format!("{} exited mid-turn: {e}", self.spec.name)),
                false,
            ),
            TurnEnd::Failed(e) => (
                DriverResult::failed(format!("{}: {e}", self.spec.name)),
                true,
            ),
        };
        if keep && !s.conn.closed {
            self.sessions.lock().insert(input.session_key.clone(), s);
        } else {
            s.conn.close(CLOSE_GRACE).await;
        }
        DriverResult {
            session_id,
            ..result
        }
    }
}

/// A session that replaced one the agent could not reload starts from Weft's handover
/// of the conversation (what a change of agent gives the new agent), and the session
/// says it runs on that account of the past, not the agent's own memory of it. A
/// session the agent did reload has its context again.
fn recover_context(s: &mut LiveSession, input: &mut AgentTurnInput, ctx: &DriverContext) {
    use weft_protocol::degraded::capability::CONTEXT;
    let Some(why) = s.lost.take() else {
        if std::mem::take(&mut s.reloaded) {
            ctx.emit(DriverEvent::Degraded {
                capability: CONTEXT.into(),
                reason: None,
            });
        }
        return;
    };
    let reason = match input.lost_session_handover.as_ref() {
        Some(handover) => {
            let text = handover();
            input.system_prompt = Some(match input.system_prompt.take() {
                Some(sp) if !sp.trim().is_empty() => format!("{text}\n\n{sp}"),
                _ => text,
            });
            format!(
                "the agent's own memory of the conversation is gone: {why}; its new session \
                 started from Weft's handover of the conversation"
            )
        }
        None => format!("the agent's own memory of the conversation is gone: {why}"),
    };
    ctx.emit(DriverEvent::Degraded {
        capability: CONTEXT.into(),
        reason: Some(reason),
    });
}

#[cfg(test)]
mod tests {
    use super::version_word;

    #[test]
    fn version_words_of_the_presets() {
        let v = |s: &str| version_word(s).unwrap_or_default();
        assert_eq!(
            v("Hermes Agent v0.19.0 (2026.7.20)\nInstall directory: /x"),
            "0.19.0"
        );
        assert_eq!(
            v("GitHub Copilot CLI 1.0.102.\nRun 'copilot update'"),
            "1.0.102"
        );
        assert_eq!(v("kimi, version 1.51.0"), "1.51.0");
        assert_eq!(v("0.36.0 (commit 7c61e5bb)"), "0.36.0");
        assert_eq!(v("0.24.4"), "0.24.4");
        assert_eq!(version_word("no version here"), None);
    }
}
