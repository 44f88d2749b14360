//! Weft's Claude Code driver: the real `claude` CLI, unchanged, over stream-json.
//!
//! One long-lived `claude -p --input-format stream-json --output-format stream-json
//! --verbose --include-partial-messages --replay-user-messages` process per session
//! while the session is active ([`process`]), in its own process group and killed
//! with it when the session closes, the host shuts down, or the turn's future is
//! dropped. Each turn writes one user message and reads until the turn has really
//! ended ([`turn`], where the CLI's surprises are listed); every line becomes
//! [`DriverEvent`](weft_protocol::DriverEvent)s through a pure [`normalize::Normalizer`]
//! that the replay tests drive without a process.
//!
//! Files: [`spawn`] (finding the binary, argv), [`wire`] (serde types of the format),
//! [`normalize`] (lines → events), [`lines`] (bounded line reading), [`interact`]
//! (permissions and questions), [`recover`] (the CLI's session files), [`tools`] (tool
//! vocabulary), [`config`] (the `WEFT_CLAUDE_*` knobs).
//!
//! The PTY rail: [`tui`] builds the command line of Claude Code's own interactive UI
//! for a session, and [`follow`] tails its session file while that terminal is open so
//! the structured view follows what is typed there.

pub mod commands;
pub mod config;
pub mod effort;
pub mod follow;
pub mod interact;
pub mod lines;
pub mod native_sessions;
pub mod normalize;
pub mod process;
pub mod recover;
pub mod spawn;
pub mod spec;
pub mod tools;
pub mod tui;
pub mod turn;
pub mod wire;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_agent_process::probe_output;
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, TuiSpec};
use weft_protocol::{AgentInfo, Capabilities, DriverEvent, ModelInfo, ToolInfo};

pub use config::Config;

use crate::lines::RawLine;
use crate::process::ClaudeProcess;
use crate::spawn::{ProcessShape, SessionArg};

/// How long a closing session's CLI gets to exit by itself once stdin closes.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// The Claude Code driver.
pub struct ClaudeDriver {
    cfg: Config,
    procs: Arc<Mutex<HashMap<String, ClaudeProcess>>>,
    /// The CLI session id last seen per session key, for resuming after the process
    /// ended when the kernel did not pass one.
    known: Mutex<HashMap<String, String>>,
    /// The tools the CLI last listed at a turn's start, per (folder, trusted).
    reported_tools: Mutex<HashMap<(PathBuf, bool), Vec<String>>>,
}

impl Default for ClaudeDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl ClaudeDriver {
    /// A driver with the default knobs: each turn's `WEFT_CLAUDE_*` variables (the
    /// client's environment, when a client started it) adjust them for that turn.
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// A driver with explicit knobs (tests); a turn's variables still override them.
    pub fn with_config(cfg: Config) -> Self {
        Self {
            cfg,
            procs: Arc::new(Mutex::new(HashMap::new())),
            known: Mutex::new(HashMap::new()),
            reported_tools: Mutex::new(HashMap::new()),
        }
    }

    /// Process ids of the live session processes (tests check for orphans).
    pub fn live_pids(&self) -> Vec<u32> {
        self.procs.lock().values().filter_map(|p| p.pid()).collect()
    }

    /// The knobs for `input`'s turn: the driver's, with the turn's variables on top.
    fn turn_config(&self, input: &AgentTurnInput) -> Config {
        self.cfg.with_vars(&|n| input.var(n))
    }

    async fn process_for(
        &self,
        input: &AgentTurnInput,
        ctx: &DriverContext,
        cfg: &Config,
    ) -> Result<ClaudeProcess, String> {
        let shape = ProcessShape::of(input);
        let existing = self.procs.lock().remove(&input.session_key);
        // A fresh turn (after a handover) must not fall back on the remembered session.
        let mut resume = input
            .session_id
            .clone()
            .or_else(|| self.known.lock().get(&input.session_key).cloned())
            .filter(|_| !input.fresh);
        if let Some(mut p) = existing {
            let usable = p.shape == shape && !p.eof && !p.exited() && !input.fresh;
            if usable && !p.stale {
                drain_between_turns(&mut p, ctx);
                return Ok(p);
            }
            if usable && p.stale && settle_stale(&mut p, cfg.stop_grace).await {
                drain_between_turns(&mut p, ctx);
                return Ok(p);
            }
            if !input.fresh {
                resume = resume.or_else(|| Some(p.session_id.clone()));
            }
            if !usable && p.shape != shape {
                ctx.emit(DriverEvent::Notice {
                    text: "Claude Code restarted for the new model, effort, settings or \
                           environment"
                        .into(),
                });
            }
            p.close(CLOSE_GRACE).await;
        }
        let program = spawn::find_binary(cfg, &|n| input.var(n))?;
        // Killed before it saved anything (a crash early in a session's first turn):
        // `--resume` would fail with "No conversation found", so the session starts
        // afresh under the same id (a fork forks again).
        let never_saved = resume
            .as_deref()
            .is_some_and(|id| tui::never_saved(input, id));
        let session = SessionArg::choose(input, resume, never_saved);
        if never_saved && matches!(session, SessionArg::New(_)) {
            ctx.emit(DriverEvent::Notice {
                text: "Claude Code had not saved this conversation before it stopped; \
                       it starts afresh"
                    .into(),
            });
        }
        let spec = spawn::spec(&program, input, &session, cfg);
        ClaudeProcess::spawn(&spec, shape, session.id().to_string(), cfg.max_line)
            .map_err(|e| format!("could not start Claude Code ({}): {e}", program.display()))
    }
}

/// Where a turn's reported tools are kept: its folder (as the file system names it)
/// and whether the folder was trusted.
fn tools_key(workdir: &std::path::Path, trusted: bool) -> (PathBuf, bool) {
    (
        workdir
            .canonicalize()
            .unwrap_or_else(|_| workdir.to_path_buf()),
        trusted,
    )
}

/// Output the CLI wrote between turns (a late wake-up) is reported, not mixed into the
/// new turn's reply.
fn drain_between_turns(p: &mut ClaudeProcess, ctx: &DriverContext) {
    let mut norm = normalize::Normalizer::new(p.cost_total);
    let mut events = Vec::new();
    let mut n = 0;
    while let Ok(raw) = p.lines.try_recv() {
        n += 1;
        match raw {
            RawLine::Line(bytes) => {
                if let lines::Parsed::Line(l) | lines::Parsed::Lossy(l) = lines::parse(&bytes) {
                    norm.line(l, &mut events);
                }
            }
            RawLine::Eof => p.eof = true,
            _ => {}
        }
    }
    if n == 0 {
        return;
    }
    if let Some(cost) = norm.process_cost() {
        p.cost_total = cost;
    }
    let text: String = events
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Text { delta } => Some(delta.as_str()),
            _ => None,
        })
        .collect();
    if !text.trim().is_empty() {
        let short: String = text.chars().take(500).collect();
        ctx.emit(DriverEvent::Notice {
            text: format!("Claude Code wrote after the last turn had settled: {short}"),
        });
    }
}

/// After a stalled turn: read up to the interrupted turn's `result` so the next turn
/// starts clean. False when it does not come in time.
async fn settle_stale(p: &mut ClaudeProcess, grace: Duration) -> bool {
    let deadline = tokio::time::Instant::now() + grace;
    loop {
        match tokio::time::timeout_at(deadline, p.lines.recv()).await {
            Ok(Some(RawLine::Line(bytes))) => {
                if let lines::Parsed::Line(wire::OutLine::Result(_)) = lines::parse(&bytes) {
                    p.stale = false;
                    return true;
                }
            }
            Ok(Some(RawLine::TooLong { .. } | RawLine::Cut(_))) => {}
            Ok(Some(RawLine::Eof) | None) | Err(_) => return false,
        }
    }
}

#[async_trait]
impl AgentDriver for ClaudeDriver {
    fn id(&self) -> &str {
        "claude"
    }

    fn name(&self) -> &str {
        "Claude Code"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities {
            steer: true,
            interact: true,
            resume: true,
            tui: true,
        }
    }

    async fn info(&self) -> AgentInfo {
        let caps = self.capabilities();
        let base = AgentInfo {
            id: "claude".into(),
            name: "Claude Code".into(),
            installed: false,
            version: None,
            capabilities: caps,
            problem: None,
            facts: spec::spec().facts(),
        };
        // No turn: the kernel's own environment.
        let own = |n: &str| std::env::var(n).ok();
        let program = match spawn::find_binary(&self.cfg.with_vars(&own), &own) {
            Ok(p) => p,
            Err(problem) => {
                return AgentInfo {
                    problem: Some(problem),
                    ..base
                }
            }
        };
        if let Some(version) = weft_agent_process::npm_package_version(&program) {
            return AgentInfo {
                installed: true,
                version: Some(version),
                ..base
            };
        }
        match probe_output(&program, &["--version"]).await {
            Ok(stdout) => AgentInfo {
                installed: true,
                version: stdout.split_whitespace().next().map(String::from),
                ..base
            },
            Err(problem) => AgentInfo {
                problem: Some(problem),
                ..base
            },
        }
    }

    async fn models(&self) -> Vec<ModelInfo> {
        [
            ("default", "Default (the CLI's choice)", true),
            ("opus", "Opus", false),
            ("sonnet", "Sonnet", false),
            ("haiku", "Haiku", false),
        ]
        .into_iter()
        .map(|(id, label, default)| ModelInfo {
            id: id.into(),
            label: label.into(),
            default,
        })
        .collect()
    }

    fn efforts(&self) -> Vec<String> {
        effort::ALL.into_iter().map(String::from).collect()
    }

    async fn model_efforts(&self, model: &str) -> Vec<String> {
        effort::for_model(model)
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let mut input = input;
        if input.model.as_deref() == Some("default") {
            input.model = None;
        }
        let cfg = self.turn_config(&input);
        let mut proc = match self.process_for(&input, &ctx, &cfg).await {
            Ok(p) => p,
            Err(e) => return DriverResult::failed(e),
        };
        // `proc` is owned here: if this future is dropped mid-turn, dropping it kills
        // the process group.
        let outcome = turn::run(&mut proc, &input, &ctx, &cfg).await;
        self.known
            .lock()
            .insert(input.session_key.clone(), proc.session_id.clone());
        if let Some(tools) = proc.tools.clone() {
            self.reported_tools
                .lock()
                .insert(tools_key(&input.workdir, input.workspace_trusted), tools);
        }
        if outcome.keep && !proc.eof {
            self.procs.lock().insert(input.session_key.clone(), proc);
        } else {
            proc.close(CLOSE_GRACE).await;
        }
        outcome.result
    }

    async fn tools(&self, input: &AgentTurnInput) -> Result<Vec<ToolInfo>, String> {
        // The CLI lists its tools only in the `init` line that starts a turn: a prompt
        // would have to be sent (and paid for) to learn them, so until a turn ran in
        // this folder the listing says so instead.
        let key = tools_key(&input.workdir, input.workspace_trusted);
        let Some(names) = self.reported_tools.lock().get(&key).cloned() else {
            return Err(format!(
                "Claude Code lists its tools when a turn starts; none has run in {} \
                 (with this trust) since the daemon started: run one, then list again",
                input.workdir.display()
            ));
        };
        Ok(names
            .into_iter()
            .map(|name| ToolInfo {
                server: name
                    .strip_prefix("mcp__")
                    .and_then(|rest| rest.split_once("__"))
                    .map(|(server, _)| server.to_string()),
                description: String::new(),
                name,
            })
            .collect())
    }

    fn tui(&self, input: &AgentTurnInput) -> Option<TuiSpec> {
        let cfg = self.turn_config(input);
        let program = spawn::find_binary(&cfg, &|n| input.var(n)).ok()?;
        Some(tui::spec(&program, input, &cfg))
    }

    async fn follow_tui(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let id = input
            .session_id
            .clone()
            .or_else(|| self.known.lock().get(&input.session_key).cloned());
        if let Some(id) = &id {
            self.known
                .lock()
                .insert(input.session_key.clone(), id.clone());
        }
        // One writer per session: an idle structured process would resume from its own
        // memory afterwards, missing what the terminal adds, so it goes now and the
        // next structured turn resumes from the session file. It goes *before* the
        // follower takes its starting point: the CLI writes its last records to the
        // session file as it exits, and those are history, not the terminal's. (The
        // TUI takes longer to start than this takes.)
        self.close_session(&input.session_key).await;
        match &id {
            Some(id) => follow::follow(&input, id, &ctx).await,
            None => {
                ctx.cancelled().await;
                DriverResult::ok()
            }
        }
    }

    async fn prewarm(&self, input: AgentTurnInput) -> Result<Option<u32>, String> {
        let mut input = input;
        if input.model.as_deref() == Some("default") {
            input.model = None;
        }
        if self.procs.lock().contains_key(&input.session_key) {
            return Ok(None);
        }
        let cfg = self.turn_config(&input);
        // The CLI reads its settings and starts its MCP servers before it reads its
        // first message, so the next turn's message goes to a process past all that.
        let p = self
            .process_for(&input, &DriverContext::detached(), &cfg)
            .await?;
        let pid = p.pid();
        let mut procs = self.procs.lock();
        if procs.contains_key(&input.session_key) {
            return Ok(None);
        }
        procs.insert(input.session_key.clone(), p);
        Ok(pid)
    }

    async fn close_session(&self, session_key: &str) {
        let proc = self.procs.lock().remove(session_key);
        if let Some(p) = proc {
            p.close(CLOSE_GRACE).await;
        }
    }

    async fn shutdown(&self) {
        let all: Vec<ClaudeProcess> = self.procs.lock().drain().map(|(_, p)| p).collect();
        // Each gets its grace at the same time: one by one, ten sessions took ten graces.
        futures::future::join_all(all.into_iter().map(|p| p.close(CLOSE_GRACE))).await;
    }
}
