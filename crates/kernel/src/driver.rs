//! The contract between the kernel and one agent.
//!
//! A driver turns one agent's wire format into [`DriverEvent`]s. It never touches the
//! snapshot: it emits events through its [`DriverContext`], asks the user through it,
//! and takes steer messages from it. Everything else (queueing, persistence, patches,
//! activity lines) is the kernel's.

use std::path::PathBuf;
use std::sync::Arc;

use async_trait::async_trait;
use tokio::sync::mpsc;
use tokio_util::sync::CancellationToken;
use weft_protocol::{
    AgentInfo, Capabilities, ClientEnv, DriverEvent, Interaction, InteractionResponse, ModelInfo,
    ToolInfo,
};

/// Everything a driver needs to run one turn. Its `Debug` names environment
/// variables without their values (they may be secrets).
#[derive(Clone, Default)]
pub struct AgentTurnInput {
    /// The Weft session this turn belongs to (`agent:id`).
    pub session_key: String,
    /// This turn's task id.
    pub task_id: String,
    /// What the user asked.
    pub prompt: String,
    /// The folder the agent works in (exists; absolute).
    pub workdir: PathBuf,
    /// The agent's own session id to resume, when the session has one.
    pub session_id: Option<String>,
    /// Model asked for.
    pub model: Option<String>,
    /// Reasoning effort asked for.
    pub effort: Option<String>,
    /// Files attached to the prompt.
    pub attachments: Vec<PathBuf>,
    /// Extra system prompt: plugins' fragments and an agent switch's handover.
    pub system_prompt: Option<String>,
    /// Environment for this spawn only (accounts, model endpoints, plugin contributions).
    /// Never logged, never persisted: it may hold secrets.
    pub env: Vec<(String, String)>,
    /// Extra arguments for this spawn (plugin contributions).
    pub extra_args: Vec<String>,
    /// The environment of the client that started this turn (a `weft run` sends its
    /// own). When set, the agent's process starts from exactly this environment, not
    /// the kernel's own, and `env` is added on top; a driver that keeps a process per
    /// session respawns it when this differs from what the process was started with.
    /// When `None`, the kernel's own environment is inherited. It may hold secrets.
    pub client_env: Option<Arc<ClientEnv>>,
    /// Weft's global state folder (`~/.weft` or `$WEFT_HOME`).
    pub state_dir: PathBuf,
    /// The account this turn runs on (none: the agent's own login).
    pub account: Option<String>,
    /// Set by the account: the agent starts from the allow-listed part of the client's
    /// environment ([`isolated_env`]) plus `env`, not the client's whole environment.
    pub isolated: bool,
    /// The domain pack asked for (Weft's own agent; other drivers ignore it).
    pub pack: Option<String>,
    /// MCP servers Weft's plugins give this spawn, for the driver to hand its agent
    /// in the agent's own form (their `env` may hold secrets).
    pub mcp_servers: Vec<crate::mcp::McpServer>,
    /// Start a new agent session: the first turn after a handover (a change of agent,
    /// or of account the agent's own session cannot follow). A driver must not resume
    /// a session it remembers for this Weft session, nor reuse its process.
    pub fresh: bool,
    /// The session was forked from another of the same agent: while the agent has no
    /// session of its own for it (`session_id` is none, or its file was never written),
    /// the driver starts one with the agent's own fork from this point. Ignored on a
    /// `fresh` turn.
    pub fork: Option<weft_protocol::ForkOrigin>,
    /// The user trusted what the workspace grants (`weft trust`): its `.weft/` hooks,
    /// checks, packs, skills, allow rules and MCP servers, and the agents' own project
    /// files. When false, a driver runs its agent without any of them (Claude Code
    /// without the folder's settings and `.mcp.json`, the native agent without hooks,
    /// check, packs or its permission mode). Deny and ask rules hold either way.
    pub workspace_trusted: bool,
    /// For a turn that resumes `session_id`: Weft's handover of the conversation so
    /// far, for a driver whose agent cannot reload that session and starts a new one
    /// (an ACP agent whose `session/load` fails). Built only when called: it reads the
    /// session's history from the store.
    pub lost_session_handover: Option<HandoverSource>,
}

/// Builds a handover on demand (see [`AgentTurnInput::lost_session_handover`]).
pub type HandoverSource = Arc<dyn Fn() -> String + Send + Sync>;

/// Variables a spawn on a chosen account keeps from the client's environment.
const KEEP: &[&str] = &[
    "PATH",
    "HOME",
    "USER",
    "LOGNAME",
    "SHELL",
    "LANG",
    "LANGUAGE",
    "TERM",
    "COLORTERM",
    "TZ",
    "TMPDIR",
    "DISPLAY",
    "WAYLAND_DISPLAY",
    "DBUS_SESSION_BUS_ADDRESS",
    "SSH_AUTH_SOCK",
    "HTTP_PROXY",
    "HTTPS_PROXY",
    "NO_PROXY",
    "ALL_PROXY",
    "http_proxy",
    "https_proxy",
    "no_proxy",
    "all_proxy",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// Prefixes kept the same way: locale, the XDG folders, Weft's own driver settings.
const KEEP_PREFIXES: &[&str] = &["LC_", "XDG_", "WEFT_"];

/// Weft settings that pick an endpoint or a key: an account says those itself.
const DROP: &[&str] = &[
    "WEFT_CODEX_BASE_URL",
    "WEFT_CODEX_API_KEY_ENV",
    "WEFT_NATIVE_PROVIDER",
    "WEFT_NATIVE_PROTOCOL",
    "WEFT_NATIVE_BASE_URL",
    "WEFT_NATIVE_API_KEY",
];

/// True when a spawn on a chosen account keeps variable `name` of the client's
/// environment: the allow-list (PATH, HOME, LANG, TERM, XDG_*, proxies, …) and Weft's
/// own settings. Every credential-bearing family (ANTHROPIC_*, CLAUDE_*, OPENAI_*,
/// CODEX_*, GEMINI_*, GOOGLE_*, AWS_*, …) is left out: only the account sets those.
pub fn kept_on_account(name: &str) -> bool {
    !DROP.contains(&name)
        && (KEEP.contains(&name) || KEEP_PREFIXES.iter().any(|p| name.starts_with(p)))
}

/// The allow-listed part of `env` (see [`kept_on_account`]).
pub fn isolated_env(
    env: impl IntoIterator<Item = (String, String)>,
) -> std::collections::BTreeMap<String, String> {
    env.into_iter()
        .filter(|(k, _)| kept_on_account(k))
        .collect()
}

/// An environment shown by its names only.
pub struct EnvNames<'a>(pub &'a [(String, String)]);

impl std::fmt::Debug for EnvNames<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set()
            .entries(self.0.iter().map(|(k, _)| k))
            .finish()
    }
}

impl std::fmt::Debug for AgentTurnInput {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AgentTurnInput")
            .field("session_key", &self.session_key)
            .field("task_id", &self.task_id)
            .field("prompt", &self.prompt)
            .field("workdir", &self.workdir)
            .field("session_id", &self.session_id)
            .field("model", &self.model)
            .field("effort", &self.effort)
            .field("attachments", &self.attachments)
            .field("system_prompt", &self.system_prompt)
            .field("env", &EnvNames(&self.env))
            .field("extra_args", &self.extra_args)
            .field("client_env", &self.client_env)
            .field("state_dir", &self.state_dir)
            .field("account", &self.account)
            .field("isolated", &self.isolated)
            .field("pack", &self.pack)
            .field("mcp_servers", &self.mcp_servers)
            .field("fresh", &self.fresh)
            .field("fork", &self.fork)
            .field("workspace_trusted", &self.workspace_trusted)
            .field(
                "lost_session_handover",
                &self.lost_session_handover.is_some(),
            )
            .finish()
    }
}

impl AgentTurnInput {
    /// The value of variable `name` as this turn's agent will see it: `env`, else the
    /// client's environment (or the kernel's own when there is none). Drivers read
    /// their settings (`WEFT_<AGENT>_BIN`, model endpoints, …) through this, never
    /// from the process environment directly.
    pub fn var(&self, name: &str) -> Option<String> {
        if let Some((_, v)) = self.env.iter().rev().find(|(k, _)| k == name) {
            return Some(v.clone());
        }
        if self.isolated && !kept_on_account(name) {
            return None;
        }
        match &self.client_env {
            Some(client) => client.0.get(name).cloned(),
            None => std::env::var(name).ok(),
        }
    }

    /// What the agent's process starts from before `env`: the client's environment (or
    /// the kernel's own), only its allow-listed part when the account asks for that.
    pub fn base_env(&self) -> std::collections::BTreeMap<String, String> {
        let all: std::collections::BTreeMap<String, String> = match &self.client_env {
            Some(client) => client.0.clone(),
            None => std::env::vars().collect(),
        };
        if self.isolated {
            isolated_env(all)
        } else {
            all
        }
    }

    /// The whole environment the agent's process gets: [`Self::base_env`], then `env`
    /// on top.
    pub fn spawn_env(&self) -> Vec<(String, String)> {
        let mut all = self.base_env();
        all.extend(self.env.iter().cloned());
        all.into_iter().collect()
    }
}

/// How a turn ended, as the driver sees it.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct DriverResult {
    /// True when the agent finished the turn normally.
    pub ok: bool,
    /// The final reply, when the agent reports one apart from the streamed text; used
    /// when nothing was streamed.
    pub text: Option<String>,
    /// The agent's session id, when learned at the end.
    pub session_id: Option<String>,
    /// Why the turn failed.
    pub error: Option<String>,
}

impl DriverResult {
    /// A normal end.
    pub fn ok() -> Self {
        Self {
            ok: true,
            ..Default::default()
        }
    }

    /// A failure with a reason.
    pub fn failed(error: impl Into<String>) -> Self {
        Self {
            ok: false,
            error: Some(error.into()),
            ..Default::default()
        }
    }
}

/// A program to run in a PTY: an agent's own terminal UI. Its `Debug` names the
/// environment's variables without their values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct TuiSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment.
    pub env: Vec<(String, String)>,
    /// Where it runs.
    pub cwd: PathBuf,
    /// The agent session id the program will use, when the driver chose it (a new
    /// session started with a fixed id), so the structured rail can resume it later.
    pub session_id: Option<String>,
}

impl std::fmt::Debug for TuiSpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TuiSpec")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("env", &EnvNames(&self.env))
            .field("cwd", &self.cwd)
            .field("session_id", &self.session_id)
            .finish()
    }
}

/// What the kernel offers a running driver. Implemented by the session runner, and by
/// the plain callbacks of [`crate::run_turn`].
pub trait TurnSink: Send + Sync {
    /// Folds an event into the turn.
    fn emit(&self, event: DriverEvent);
    /// Makes `interaction` pending and returns the channel its answer arrives on.
    /// Dropping the sender means cancelled.
    fn ask(&self, interaction: Interaction) -> tokio::sync::oneshot::Receiver<InteractionResponse>;
    /// Routes steer messages for this turn to the returned channel.
    fn register_steer(&self) -> mpsc::UnboundedReceiver<Steer>;
}

/// A message the user sends into a running turn: text, and files attached to it as to
/// a prompt (checked like a prompt's; a driver sends them the way it sends a prompt's).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Steer {
    /// What the user wrote.
    pub text: String,
    /// Files attached to it (absolute, checked).
    pub attachments: Vec<PathBuf>,
}

impl From<String> for Steer {
    fn from(text: String) -> Self {
        Self {
            text,
            attachments: Vec::new(),
        }
    }
}

impl From<&str> for Steer {
    fn from(text: &str) -> Self {
        text.to_string().into()
    }
}

/// The sink of [`DriverContext::detached`].
struct Detached;

impl TurnSink for Detached {
    fn emit(&self, _event: DriverEvent) {}
    fn ask(
        &self,
        _interaction: Interaction,
    ) -> tokio::sync::oneshot::Receiver<InteractionResponse> {
        // The sender dropped at once: the question is cancelled.
        tokio::sync::oneshot::channel().1
    }
    fn register_steer(&self) -> mpsc::UnboundedReceiver<Steer> {
        mpsc::unbounded_channel().1
    }
}

/// A running driver's handle on its turn.
#[derive(Clone)]
pub struct DriverContext {
    cancel: CancellationToken,
    sink: Arc<dyn TurnSink>,
}

impl DriverContext {
    /// A context with no turn behind it (a process started ahead of its turn): what
    /// it emits is dropped, a question it asks is cancelled, steers never come.
    pub fn detached() -> Self {
        Self::new(CancellationToken::new(), Arc::new(Detached))
    }

    /// A context over `sink`, cancelled through `cancel`.
    pub fn new(cancel: CancellationToken, sink: Arc<dyn TurnSink>) -> Self {
        Self { cancel, sink }
    }

    /// Resolves when the turn is stopped.
    pub async fn cancelled(&self) {
        self.cancel.cancelled().await
    }

    /// True once the turn is stopped.
    pub fn is_cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }

    /// The stop signal, for handing to spawned tasks.
    pub fn cancel_token(&self) -> CancellationToken {
        self.cancel.clone()
    }

    /// Reports an event.
    pub fn emit(&self, event: DriverEvent) {
        self.sink.emit(event)
    }

    /// Asks the user and waits for the answer. A stopped turn, or an interaction that
    /// is withdrawn, answers `cancel`.
    pub async fn ask_user(&self, interaction: Interaction) -> InteractionResponse {
        let rx = self.sink.ask(interaction);
        tokio::select! {
            answer = rx => answer.unwrap_or_else(|_| InteractionResponse::cancel()),
            _ = self.cancel.cancelled() => InteractionResponse::cancel(),
        }
    }

    /// Declares that this turn takes steer messages; they arrive on the returned channel.
    /// A driver that never calls this gets steers queued as the next turn instead; one
    /// that does sends each steer's attachments as it sends a prompt's.
    pub fn register_steer(&self) -> mpsc::UnboundedReceiver<Steer> {
        self.sink.register_steer()
    }
}

/// One agent.
#[async_trait]
pub trait AgentDriver: Send + Sync {
    /// Its id: the first part of its session keys. No `:`.
    fn id(&self) -> &str;

    /// Its display name.
    fn name(&self) -> &str {
        self.id()
    }

    /// What it can do.
    fn capabilities(&self) -> Capabilities;

    /// Whether it is installed, and its version. May run the binary.
    async fn info(&self) -> AgentInfo;

    /// Models it offers.
    async fn models(&self) -> Vec<ModelInfo> {
        Vec::new()
    }

    /// Reasoning efforts it takes.
    fn efforts(&self) -> Vec<String> {
        Vec::new()
    }

    /// The tools its agent would have in a turn of `input` (its prompt empty; its
    /// `workdir`, `state_dir`, `workspace_trusted` and Weft's `mcp_servers` set), as the
    /// agent reports them: `Err` says why they cannot be listed yet (an agent that
    /// reports its tools only once a turn starts). The default: none known.
    async fn tools(&self, _input: &AgentTurnInput) -> Result<Vec<ToolInfo>, String> {
        Ok(Vec::new())
    }

    /// Reasoning efforts `model` takes (the default: [`Self::efforts`], the same for
    /// every model).
    async fn model_efforts(&self, _model: &str) -> Vec<String> {
        self.efforts()
    }

    /// Runs one turn to its end. Must return soon after `ctx` is cancelled, and must
    /// leave no process behind when its future is dropped.
    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult;

    /// The agent's own terminal UI for this session, when it has one.
    fn tui(&self, _input: &AgentTurnInput) -> Option<TuiSpec> {
        None
    }

    /// A fork its terminal cannot make itself (one at a turn, say), about to open in
    /// the agent's terminal with no agent session of its own yet: made here through the
    /// agent's own fork, returning the new session's id, which the terminal then
    /// resumes. `None`: nothing to make (the terminal or the first turn makes it).
    async fn fork_for_tui(&self, _input: &AgentTurnInput) -> Result<Option<String>, String> {
        Ok(None)
    }

    /// Runs while the agent's own terminal UI is open for this session: follows what
    /// happens there (e.g. by tailing the agent's session file) and emits it as events,
    /// until `ctx` is cancelled when the terminal closes. The default only waits.
    async fn follow_tui(&self, _input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        ctx.cancelled().await;
        DriverResult::ok()
    }

    /// Starts, ahead of the turn, the process a turn of `input` (its prompt empty) would
    /// start, and keeps it for that session key: the next turn of that key with the same
    /// shape then goes straight to a ready process. Returns its process id, `None` when
    /// nothing was started (the driver keeps no process, or one is already live for the
    /// key). Only for starts without side effects beyond the agent's own start-up.
    async fn prewarm(&self, _input: AgentTurnInput) -> Result<Option<u32>, String> {
        Ok(None)
    }

    /// The session is closed: release what is held for it (a long-lived process).
    async fn close_session(&self, _session_key: &str) {}

    /// The host is shutting down: release everything.
    async fn shutdown(&self) {}
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_names_variables_and_never_shows_their_values() {
        let input = AgentTurnInput {
            env: vec![("ANTHROPIC_API_KEY".into(), "sk-secret-1".into())],
            client_env: Some(Arc::new(ClientEnv(
                [("OPENAI_API_KEY".to_string(), "sk-secret-2".to_string())].into(),
            ))),
            ..Default::default()
        };
        let spec = TuiSpec {
            env: vec![("TOKEN".into(), "sk-secret-3".into())],
            ..Default::default()
        };
        let shown = format!("{input:?} {spec:?}");
        for secret in ["sk-secret-1", "sk-secret-2", "sk-secret-3"] {
            assert!(!shown.contains(secret), "{shown}");
        }
        for name in ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "TOKEN"] {
            assert!(shown.contains(name), "{shown}");
        }
    }

    #[test]
    fn an_isolated_turn_keeps_only_the_allow_list_and_its_own_variables() {
        let client: std::collections::BTreeMap<String, String> = [
            ("PATH", "/bin"),
            ("HOME", "/home/u"),
            ("LC_ALL", "C"),
            ("WEFT_CLAUDE_BIN", "/x/claude"),
            ("WEFT_CODEX_BASE_URL", "http://ambient"),
            ("ANTHROPIC_API_KEY", "ambient-key"),
            ("CLAUDE_CONFIG_DIR", "/home/u/.claude"),
            ("AWS_PROFILE", "p"),
            ("RANDOM_THING", "x"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        let mut input = AgentTurnInput {
            env: vec![("ANTHROPIC_API_KEY".into(), "account-key".into())],
            client_env: Some(Arc::new(ClientEnv(client))),
            ..Default::default()
        };
        let ambient: std::collections::BTreeMap<_, _> = input.spawn_env().into_iter().collect();
        assert_eq!(ambient["CLAUDE_CONFIG_DIR"], "/home/u/.claude");
        assert_eq!(ambient["ANTHROPIC_API_KEY"], "account-key");
        input.isolated = true;
        let env: std::collections::BTreeMap<_, _> = input.spawn_env().into_iter().collect();
        let names: Vec<&str> = env.keys().map(String::as_str).collect();
        assert_eq!(
            names,
            [
                "ANTHROPIC_API_KEY",
                "HOME",
                "LC_ALL",
                "PATH",
                "WEFT_CLAUDE_BIN"
            ]
        );
        assert_eq!(env["ANTHROPIC_API_KEY"], "account-key");
        assert_eq!(input.var("AWS_PROFILE"), None);
        assert_eq!(input.var("WEFT_CODEX_BASE_URL"), None);
        assert_eq!(input.var("HOME").as_deref(), Some("/home/u"));
    }
}
