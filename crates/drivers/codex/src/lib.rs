//! Weft's Codex driver: the real `codex app-server`, unchanged, over JSON-RPC on stdio.
//!
//! One long-lived `codex app-server` per active session ([`session`]), in its own
//! process group and killed with it when the session closes, the host shuts down, or
//! the turn's future is dropped ([`process`]). The session's thread is Weft's session
//! id: a new session starts one (`thread/start`), a later process resumes it
//! (`thread/resume`). Each Weft turn is a `turn/start` read to its `turn/completed`
//! ([`turn`]); every notification becomes [`DriverEvent`](weft_protocol::DriverEvent)s
//! through a pure [`normalize::Normalizer`] that the replay tests drive without a
//! process. Steer is `turn/steer`, stop is `turn/interrupt`, approvals and questions
//! are interactions ([`interact`]).
//!
//! The model provider and endpoint come from the turn's environment (the kernel's
//! Accounts) as `-c` overrides ([`spawn`], [`config`]); the user's
//! `config.toml` is never edited.
//!
//! Hazards (all observed in codex-cli 0.171.0, see the shared protocol notes):
//! messages carry no `"jsonrpc"` field; `request_user_input` exists in default mode
//! only with `features.default_mode_request_user_input` (which the driver sets); a
//! CODEX_HOME under `/tmp` breaks the `workspace-write` sandbox (tests use
//! `danger-full-access`); `update_plan` is not offered by this version, so plans
//! come from plan mode's proposed plan (`WEFT_CODEX_COLLABORATION_MODE=plan`).

pub mod commands;
pub mod config;
pub mod elicit;
pub mod follow;
pub mod interact;
pub mod items;
pub mod limits;
pub use weft_kernel::live;
pub mod native_sessions;
pub mod normalize;
pub mod process;
pub mod rpc;
pub mod session;
pub mod spawn;
pub mod spec;
pub mod tools;
pub mod trust;
pub mod tui;
pub mod turn;
pub mod wire;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;
use weft_agent_process::probe_output;
use weft_kernel::driver::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, TuiSpec};
use weft_protocol::{AgentInfo, Capabilities, DriverEvent, ModelInfo, ToolInfo};

pub use config::{Config, TurnKnobs};

use crate::session::CodexSession;
use crate::spawn::ProcessShape;
use crate::turn::CLOSE_GRACE;

/// The agent id.
pub const CODEX_ID: &str = "codex";

const DEFAULT_EFFORTS: &[&str] = &["low", "medium", "high", "xhigh"];

/// The models and efforts the binary's own catalog lists (`codex debug models`).
#[derive(Debug, Clone, Default)]
struct Catalog {
    models: Vec<ModelInfo>,
    /// Every effort some model takes, in the catalog's order.
    efforts: Vec<String>,
    /// Each model's own efforts, by slug.
    model_efforts: HashMap<String, Vec<String>>,
}

/// The Codex driver.
pub struct CodexDriver {
    cfg: Config,
    sessions: Arc<Mutex<HashMap<String, CodexSession>>>,
    catalog: OnceLock<Catalog>,
}

impl Default for CodexDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl CodexDriver {
    /// A driver with the default knobs: each turn's `WEFT_CODEX_*` variables (the
    /// client's environment, when a client started it) adjust them for that turn.
    pub fn new() -> Self {
        Self::with_config(Config::default())
    }

    /// A driver with explicit knobs (tests); a turn's variables still override them.
    pub fn with_config(cfg: Config) -> Self {
        Self {
            cfg,
            sessions: Arc::new(Mutex::new(HashMap::new())),
            catalog: OnceLock::new(),
        }
    }

    /// Process ids of the live session processes (tests check for orphans).
    pub fn live_pids(&self) -> Vec<u32> {
        self.sessions
            .lock()
            .values()
            .filter_map(|s| s.proc.pid())
            .collect()
    }

    /// The knobs for `input`'s turn: the driver's, with the turn's variables on top.
    fn turn_config(&self, input: &AgentTurnInput) -> Config {
        self.cfg.with_vars(&|n| input.var(n))
    }

    async fn session_for(
        &self,
        input: &AgentTurnInput,
        ctx: &DriverContext,
        cfg: &Config,
    ) -> Result<CodexSession, String> {
        let shape = ProcessShape::of(input);
        let knobs = TurnKnobs::of(input);
        let existing = self.sessions.lock().remove(&input.session_key);
        let mut resume = input.session_id.clone();
        if let Some(mut s) = existing {
            let same_thread = input
                .session_id
                .as_ref()
                .is_none_or(|id| *id == s.thread_id);
            let usable = !s.eof && !s.proc.exited() && !input.fresh;
            if usable && same_thread && s.shape == shape && s.knobs == knobs {
                return Ok(s);
            }
            // A fresh turn (after a handover) starts a new thread.
            if !input.fresh {
                resume = resume.or_else(|| Some(s.thread_id.clone()));
            }
            if usable && (s.shape != shape || s.knobs != knobs) {
                ctx.emit(DriverEvent::Notice {
                    text: "codex restarted for the new folder, settings, account or \
                           environment"
                        .into(),
                });
            }
            s.close(CLOSE_GRACE).await;
        }
        let program = spawn::find_binary(cfg, &|n| input.var(n))?;
        CodexSession::open(&program, input, knobs, resume.as_deref(), cfg).await
    }

    async fn catalog(&self) -> Catalog {
        if let Some(c) = self.catalog.get() {
            return c.clone();
        }
        let Ok(program) = self.own_binary() else {
            return Catalog::default();
        };
        let catalog = match probe_output(&program, &["debug", "models"]).await {
            Ok(stdout) => parse_catalog(stdout.as_bytes()),
            Err(_) => Catalog::default(),
        };
        let _ = self.catalog.set(catalog.clone());
        catalog
    }

    /// The executable as the kernel's own environment finds it: for what belongs to
    /// no turn (info, the model catalog).
    fn own_binary(&self) -> Result<std::path::PathBuf, String> {
        let own = |n: &str| std::env::var(n).ok();
        spawn::find_binary(&self.cfg.with_vars(&own), &own)
    }
}

/// The models `codex debug models` lists for pickers (hidden ones left out), after a
/// "default" entry that leaves the choice to codex's own configuration.
fn parse_catalog(json: &[u8]) -> Catalog {
    let Ok(v) = serde_json::from_slice::<Value>(json) else {
        return Catalog::default();
    };
    let mut models = vec![ModelInfo {
        id: "default".into(),
        label: "Default (codex's choice)".into(),
        default: true,
    }];
    let mut efforts: Vec<String> = Vec::new();
    let mut model_efforts = HashMap::new();
    for m in v["models"].as_array().into_iter().flatten() {
        if m["visibility"].as_str() == Some("hide") {
            continue;
        }
        let Some(slug) = m["slug"].as_str() else {
            continue;
        };
        models.push(ModelInfo {
            id: slug.into(),
            label: m["display_name"].as_str().unwrap_or(slug).into(),
            default: false,
        });
        let own: Vec<String> = m["supported_reasoning_levels"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|level| level["effort"].as_str().map(String::from))
            .collect();
        for e in &own {
            if !efforts.contains(e) {
                efforts.push(e.clone());
            }
        }
        model_efforts.insert(slug.to_string(), own);
    }
    Catalog {
        models,
        efforts,
        model_efforts,
    }
}

#[async_trait]
impl AgentDriver for CodexDriver {
    fn id(&self) -> &str {
        CODEX_ID
    }

    fn name(&self) -> &str {
        "Codex"
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
        let base = AgentInfo {
            id: CODEX_ID.into(),
            name: self.name().into(),
            installed: false,
            version: None,
            capabilities: self.capabilities(),
            problem: None,
            facts: weft_protocol::AgentFacts {
                commands: commands::slash_commands(),
                ..spec::spec().facts()
            },
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
                version: stdout.split_whitespace().last().map(String::from),
                ..base
            },
            Err(problem) => AgentInfo {
                problem: Some(problem),
                ..base
            },
        }
    }

    async fn models(&self) -> Vec<ModelInfo> {
        let c = self.catalog().await;
        if c.models.is_empty() {
            return vec![ModelInfo {
                id: "default".into(),
                label: "Default (codex's choice)".into(),
                default: true,
            }];
        }
        c.models
    }

    fn efforts(&self) -> Vec<String> {
        match self.catalog.get() {
            Some(c) if !c.efforts.is_empty() => c.efforts.clone(),
            _ => DEFAULT_EFFORTS.iter().map(|e| e.to_string()).collect(),
        }
    }

    async fn model_efforts(&self, model: &str) -> Vec<String> {
        // "default" leaves the model to codex's configuration: any effort some model
        // takes may apply. A model the catalog does not know (a newer one named by
        // hand) gets the same.
        let c = self.catalog().await;
        match c.model_efforts.get(model) {
            Some(own) => own.clone(),
            None => self.efforts(),
        }
    }

    async fn tools(&self, input: &AgentTurnInput) -> Result<Vec<ToolInfo>, String> {
        if let Some(why) = trust::refusal(input) {
            return Err(why);
        }
        let cfg = self.turn_config(input);
        let program = spawn::find_binary(&cfg, &|n| input.var(n))?;
        tools::list(&program, input, &cfg).await
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let mut input = input;
        if input.model.as_deref() == Some("default") {
            input.model = None;
        }
        if let Some(why) = trust::refusal(&input) {
            return DriverResult::failed(why);
        }
        let cfg = self.turn_config(&input);
        let mut session = match self.session_for(&input, &ctx, &cfg).await {
            Ok(s) => s,
            Err(e) => return DriverResult::failed(e),
        };
        // `session` is owned here: if this future is dropped mid-turn, dropping it
        // kills the process group.
        ctx.emit(weft_protocol::DriverEvent::Commands {
            commands: commands::slash_commands(),
        });
        let outcome = match commands::parse(&input.prompt) {
            Some(cmd) => commands::run(cmd, &mut session, &input, &ctx, &cfg).await,
            None => turn::run(&mut session, &input, &ctx, &cfg).await,
        };
        if outcome.keep && !session.eof {
            self.sessions
                .lock()
                .insert(input.session_key.clone(), session);
        } else {
            session.close(CLOSE_GRACE).await;
        }
        outcome.result
    }

    fn tui(&self, input: &AgentTurnInput) -> Option<TuiSpec> {
        let program = spawn::find_binary(&self.turn_config(input), &|n| input.var(n)).ok()?;
        Some(tui::spec(&program, input))
    }

    async fn fork_for_tui(&self, input: &AgentTurnInput) -> Result<Option<String>, String> {
        // `codex fork PARENT` forks a whole thread; one at a turn is made here, by
        // app-server's `thread/fork` (`lastTurnId`) as a first turn would, and the
        // terminal resumes it.
        let at_a_turn = input.fork.as_ref().is_some_and(|f| f.at.is_some());
        if !at_a_turn || input.session_id.is_some() || input.fresh {
            return Ok(None);
        }
        let cfg = self.turn_config(input);
        let program = spawn::find_binary(&cfg, &|n| input.var(n))?;
        let session = CodexSession::open(&program, input, TurnKnobs::of(input), None, &cfg).await?;
        let thread = session.thread_id.clone();
        let rollout = session.rollout.clone();
        session.close(CLOSE_GRACE).await;
        match rollout {
            Some(path) if std::path::Path::new(&path).is_file() => Ok(Some(thread)),
            Some(path) => Err(format!(
                "codex forked the thread but did not save it ({path} is not there)"
            )),
            None => Err("codex forked the thread but named no file for it".into()),
        }
    }

    async fn follow_tui(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        // One writer per thread: an idle app-server would resume from its own memory
        // afterwards, missing what the terminal adds. It closes before the follower
        // takes its starting point, so whatever it writes as it exits is history.
        self.close_session(&input.session_key).await;
        follow::follow(&input, &ctx).await
    }

    async fn prewarm(&self, input: AgentTurnInput) -> Result<Option<u32>, String> {
        let mut input = input;
        if input.model.as_deref() == Some("default") {
            input.model = None;
        }
        if let Some(why) = trust::refusal(&input) {
            return Err(why);
        }
        if self.sessions.lock().contains_key(&input.session_key) {
            return Ok(None);
        }
        let cfg = self.turn_config(&input);
        // Past `initialize` and the thread's start (or resume): the turn's
        // `turn/start` is the first thing the next prompt waits for.
        let s = self
            .session_for(&input, &DriverContext::detached(), &cfg)
            .await?;
        let pid = s.proc.pid();
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
            s.close(CLOSE_GRACE).await;
        }
    }

    async fn shutdown(&self) {
        let all: Vec<CodexSession> = self.sessions.lock().drain().map(|(_, s)| s).collect();
        let closing: Vec<_> = all.into_iter().map(|s| s.close(CLOSE_GRACE)).collect();
        futures::future::join_all(closing).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_catalog_lists_visible_models_and_their_efforts() {
        let json = br#"{"models":[
            {"slug":"gpt-a","display_name":"GPT A","visibility":"list",
             "supported_reasoning_levels":[{"effort":"low"},{"effort":"high"}]},
            {"slug":"gpt-hidden","visibility":"hide","supported_reasoning_levels":[{"effort":"max"}]},
            {"slug":"gpt-b","supported_reasoning_levels":[{"effort":"high"},{"effort":"xhigh"}]}]}"#;
        let c = parse_catalog(json);
        let ids: Vec<&str> = c.models.iter().map(|m| m.id.as_str()).collect();
        assert_eq!(ids, ["default", "gpt-a", "gpt-b"]);
        assert!(c.models[0].default);
        assert_eq!(c.models[1].label, "GPT A");
        assert_eq!(c.efforts, ["low", "high", "xhigh"]);
        assert_eq!(c.model_efforts["gpt-a"], ["low", "high"]);
        assert_eq!(c.model_efforts["gpt-b"], ["high", "xhigh"]);
        assert!(!c.model_efforts.contains_key("gpt-hidden"));
        assert!(parse_catalog(b"nope").models.is_empty());
    }
}
