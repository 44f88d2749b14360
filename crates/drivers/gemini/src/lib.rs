//! Weft's Gemini CLI driver: the real `gemini`, unchanged.
//!
//! Two transports, each where it gives the user the most:
//! - **ACP (`gemini --acp`) for every live session** — through [`weft_acp`]: one
//!   process per active session, streamed text and thoughts, tool calls, permission
//!   prompts with Gemini's own options (allow once / for the session / reject),
//!   stop as `session/cancel`, the agent's models and modes. ACP's updates carry no
//!   tool output in 0.61.0, so after each turn the driver reads the results back
//!   from the session's own file ([`sessions::tool_output`], also given to the
//!   `gemini-acp` preset by the registry).
//! - **A session continued in a new process** (after the idle close, a daemon restart,
//!   an environment or account change) is loaded over ACP (`session/load`), so it keeps
//!   the interactive rail (permission prompts, questions) and Gemini's own memory. Gemini
//!   0.61.0's load first starts a fresh chat under `session-<this minute>-<id8>.jsonl`;
//!   when that is the session's own file's name the fresh chat wipes the conversation
//!   and the load fails, so the driver first moves such a file to an earlier minute's
//!   name ([`sessions::clear_load_collision`]) and afterwards removes the stub the load
//!   leaves. A load that still fails starts a new session from Weft's handover and says
//!   so in `degraded` (the ACP driver's path). `WEFT_GEMINI_RESUME=headless` instead
//!   continues with `gemini -p --resume <id>` ([`headless`]): no permission channel (it
//!   runs under `WEFT_GEMINI_RESUME_APPROVAL`, default `default`, where the CLI withholds
//!   tools that need approval), also said in `degraded`.
//!
//! Binary: the turn's `$WEFT_GEMINI_BIN`, the project-local
//! `.tools/agents/node_modules/.bin` above the running executable, then the turn's
//! `PATH` (never relative to the current folder). The session library reads
//! `~/.gemini`'s chat files through [`native_sessions`].

pub mod follow;
pub mod headless;
pub mod limits;
pub mod native_sessions;
pub mod sessions;
pub mod spec;
pub mod stream;
pub mod trust;
pub mod tui;

use std::time::Duration;

use async_trait::async_trait;
use weft_acp::{AcpDriver, AcpSpec};
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{AgentInfo, Capabilities, DriverEvent, ModelInfo, ToolInfo};

/// The driver's id.
pub const GEMINI_ID: &str = "gemini";

/// Knobs, from `WEFT_GEMINI_*`: the stop grace of the ACP side is read when the driver
/// is made; a turn's own variables override both for a headless turn.
#[derive(Debug, Clone)]
pub struct Config {
    /// `WEFT_GEMINI_RESUME`: how a session continues in a new process.
    pub resume: Resume,
    /// `WEFT_GEMINI_RESUME_APPROVAL`: `--approval-mode` of a resumed (headless) turn.
    pub resume_approval: String,
    /// `WEFT_GEMINI_STOP_GRACE_MS`: how long a stop waits before the kill.
    pub stop_grace: Duration,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            resume: Resume::Load,
            resume_approval: "default".into(),
            stop_grace: Duration::from_secs(5),
        }
    }
}

impl Config {
    /// The defaults, overridden by the kernel's own `WEFT_GEMINI_*`.
    pub fn from_env() -> Self {
        Self::default().with_vars(&|n| std::env::var(n).ok())
    }

    /// This config, with each `WEFT_GEMINI_*` that `get` (a turn's environment) sets
    /// in place of its field.
    pub fn with_vars(&self, get: &dyn Fn(&str) -> Option<String>) -> Self {
        let d = self.clone();
        let var = |n: &str| get(n).filter(|v| !v.trim().is_empty());
        Self {
            resume: match var("WEFT_GEMINI_RESUME").as_deref().map(str::trim) {
                Some("headless") => Resume::Headless,
                Some("load") => Resume::Load,
                _ => d.resume,
            },
            resume_approval: var("WEFT_GEMINI_RESUME_APPROVAL").unwrap_or(d.resume_approval),
            stop_grace: var("WEFT_GEMINI_STOP_GRACE_MS")
                .and_then(|v| v.trim().parse().ok())
                .map_or(d.stop_grace, Duration::from_millis),
        }
    }
}

/// How a session continues once its ACP process is gone.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resume {
    /// `session/load` over ACP: the interactive rail and Gemini's memory (the default).
    Load,
    /// `gemini -p --resume <id>`: Gemini's own memory, no permission prompts.
    Headless,
}

/// The spec of the ACP side: `gemini --acp` (with `--skip-trust` as Weft's trust
/// allows: [`trust::trust_args`]), `session/load` with the session's file out of the
/// fresh chat's way ([`before_load`]).
pub fn acp_spec() -> AcpSpec {
    let mut spec = AcpSpec::new(GEMINI_ID, "gemini", &["--acp"]);
    spec.trust_args = Some(trust::trust_args);
    spec.name = "Gemini CLI".into();
    spec.load_session = true;
    spec.before_load = Some(before_load);
    spec.version_args = Some(vec!["--version".into()]);
    spec.install_hint = "install it with `scripts/setup.sh setup_gemini_acp` or \
                         `npm install -g @google/gemini-cli`"
        .into();
    spec.tool_output = Some(sessions::tool_output);
    spec
}

/// What the `gemini-acp` preset of the ACP driver takes from this driver: tool output
/// read back from the session file, the folder-trust switch, and a `session/load` that
/// works.
pub fn wire_preset(spec: &mut AcpSpec) {
    spec.tool_output = Some(sessions::tool_output);
    spec.trust_args = Some(trust::trust_args);
    spec.load_session = true;
    spec.before_load = Some(before_load);
}

/// See [`sessions::clear_load_collision`].
fn before_load(input: &AgentTurnInput, session_id: &str) {
    let Some(gemini) = sessions::gemini_dir_for(input) else {
        return;
    };
    for moved in sessions::clear_load_collision(&gemini, session_id, jiff::Timestamp::now()) {
        tracing::debug!(path = %moved.display(), "gemini: the session's file moved out of the load's way");
    }
}

/// The Gemini CLI driver.
pub struct GeminiDriver {
    acp: AcpDriver,
    cfg: Config,
}

impl Default for GeminiDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl GeminiDriver {
    /// A driver configured from the environment.
    pub fn new() -> Self {
        let cfg = Config::from_env();
        let mut spec = acp_spec();
        spec.stop_grace = cfg.stop_grace;
        Self::with(spec, cfg)
    }

    /// A driver over an explicit spec and knobs (tests).
    pub fn with(spec: AcpSpec, cfg: Config) -> Self {
        Self {
            acp: AcpDriver::new(spec),
            cfg,
        }
    }

    /// Process ids of the live ACP session processes.
    pub fn live_pids(&self) -> Vec<u32> {
        self.acp.live_pids()
    }

    /// A turn on the ACP rail.
    async fn run_acp(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let sink = ctx.clone();
        // On the ACP rail the session has its prompts again.
        ctx.emit(DriverEvent::Degraded {
            capability: weft_protocol::degraded::capability::PROMPTS.into(),
            reason: None,
        });
        let result = self.acp.run(input, ctx).await;
        // Over ACP a used-up quota comes back as the prompt's error only.
        if let Some(hit) = result.error.as_deref().and_then(limits::from_failure) {
            sink.emit(hit);
        }
        result
    }

    async fn run_headless(
        &self,
        input: &AgentTurnInput,
        session_id: &str,
        ctx: &DriverContext,
    ) -> DriverResult {
        let program = match self.acp.spec().find_binary(&|n| input.var(n)) {
            Ok(p) => p,
            Err(e) => return DriverResult::failed(e),
        };
        if let Err(e) = trust::trust_args(input) {
            return DriverResult::failed(e);
        }
        let cfg = self.cfg.with_vars(&|n| input.var(n));
        let approval = cfg.resume_approval.clone();
        ctx.emit(DriverEvent::Notice {
            text: format!(
                "Continued with `gemini -p --resume` (Gemini's ACP cannot reload a session): \
                 no permission prompts in this turn; approval mode `{approval}`"
            ),
        });
        ctx.emit(DriverEvent::Degraded {
            capability: weft_protocol::degraded::capability::PROMPTS.into(),
            reason: Some(format!(
                "Gemini's ACP cannot reload this session, so its turns run headless \
                 (`gemini -p --resume`): no permission prompts or questions; tools that need \
                 approval follow approval mode `{approval}`"
            )),
        });
        // Before (what the user's own `gemini --resume` left) and after this resume:
        // see `remove_resume_stubs`.
        tidy_resume_stubs(input, session_id);
        let result =
            headless::run(&program, input, session_id, &approval, cfg.stop_grace, ctx).await;
        tidy_resume_stubs(input, session_id);
        result
    }
}

#[async_trait]
impl AgentDriver for GeminiDriver {
    fn id(&self) -> &str {
        GEMINI_ID
    }

    fn name(&self) -> &str {
        "Gemini CLI"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            steer: false,
            interact: true,
            resume: true,
            tui: true,
        }
    }

    async fn info(&self) -> AgentInfo {
        AgentInfo {
            capabilities: self.capabilities(),
            facts: spec::spec().facts(),
            ..self.acp.info().await
        }
    }

    async fn models(&self) -> Vec<ModelInfo> {
        self.acp.models().await
    }

    async fn tools(&self, _input: &AgentTurnInput) -> Result<Vec<ToolInfo>, String> {
        Err(weft_acp::no_tool_list(self.name()))
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let resumed = input
            .session_id
            .clone()
            .filter(|_| !self.acp.can_continue(&input));
        let Some(id) = resumed else {
            return self.run_acp(input, ctx).await;
        };
        self.acp.close_session(&input.session_key).await;
        if self.cfg.with_vars(&|n| input.var(n)).resume == Resume::Headless {
            return self.run_headless(&input, &id, &ctx).await;
        }
        let gemini = sessions::gemini_dir_for(&input);
        let result = self.run_acp(input, ctx).await;
        // What the load left with nothing to resume beside the session's file.
        for stub in gemini
            .iter()
            .flat_map(|g| sessions::remove_resume_stubs(g, &id))
        {
            tracing::debug!(path = %stub.display(), "gemini: removed the chat its load left empty");
        }
        result
    }

    fn tui(&self, input: &AgentTurnInput) -> Option<weft_kernel::TuiSpec> {
        let program = self.acp.spec().find_binary(&|n| input.var(n)).ok()?;
        Some(tui::spec(&program, input))
    }

    async fn follow_tui(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        // One writer per session: a live ACP process would go on from its own memory
        // afterwards, missing what the terminal adds; the next structured turn resumes
        // from the CLI's session file instead.
        self.acp.close_session(&input.session_key).await;
        match input.session_id.clone() {
            Some(id) => {
                let result = follow::follow(&input, &id, &ctx).await;
                // The terminal's `gemini --resume` leaves one too; it has closed now.
                tidy_resume_stubs(&input, &id);
                result
            }
            None => {
                ctx.cancelled().await;
                DriverResult::ok()
            }
        }
    }

    async fn prewarm(&self, input: AgentTurnInput) -> Result<Option<u32>, String> {
        let resumed = input
            .session_id
            .clone()
            .filter(|_| !self.acp.can_continue(&input));
        let Some(id) = resumed else {
            return self.acp.prewarm(input).await;
        };
        // Headless turns are a new process each: nothing to start ahead.
        if self.cfg.with_vars(&|n| input.var(n)).resume == Resume::Headless {
            return Ok(None);
        }
        let gemini = sessions::gemini_dir_for(&input);
        let started = self.acp.prewarm(input).await;
        // The load's empty stub goes now: the CLI's next start would take it for a
        // broken session and delete every file of the id, the real one too.
        if let Some(g) = &gemini {
            sessions::remove_resume_stubs(g, &id);
        }
        started
    }

    async fn close_session(&self, session_key: &str) {
        self.acp.close_session(session_key).await
    }

    async fn shutdown(&self) {
        self.acp.shutdown().await
    }
}

/// Removes what a resume of `session_id` left with nothing to resume beside the
/// session's file (see `sessions::remove_resume_stubs`).
fn tidy_resume_stubs(input: &AgentTurnInput, session_id: &str) {
    let gemini = sessions::gemini_dir_for(input);
    for stub in gemini
        .iter()
        .flat_map(|g| sessions::remove_resume_stubs(g, session_id))
    {
        tracing::debug!(path = %stub.display(), "gemini: removed a file its resume left with nothing to resume");
    }
}
