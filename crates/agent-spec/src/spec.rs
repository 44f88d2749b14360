//! [`AgentSpec`]: everything Weft knows about one agent that is not code. Each driver
//! declares its own in its crate; the registry lists them (`weft_drivers::specs()`)
//! and the daemon hands them to whoever used to keep a per-agent table (accounts, MCP,
//! skills), so those ask the spec instead of matching agent ids.

use serde::{Deserialize, Serialize};
use weft_protocol::{AccountKindInfo, AgentFacts, Capabilities};

/// One agent, as data.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AgentSpec {
    /// Its id in Weft (`claude`, `hermes`, …).
    pub id: String,
    /// What to show.
    pub name: String,
    /// Where its CLI comes from, when Weft installs one.
    pub install: Option<Install>,
    /// The variable naming its config folder, and that folder's default under `HOME`.
    pub config_home: Option<ConfigHome>,
    /// The arguments that log it in to an account's home (after its binary), when it
    /// logs in by itself.
    pub login: Option<Vec<String>>,
    /// The accounts it takes.
    pub accounts: AccountForm,
    /// Its kinds in the order the add dialog offers them (the most used first); the
    /// order of `accounts` when empty.
    pub offer: Vec<String>,
    /// Variables every spawn on an account of it gets, whatever the kind.
    pub account_env: Vec<(String, String)>,
    /// Where its own skills live (the user's, for conflicts).
    pub skills: Vec<SkillsDir>,
    /// How Weft's own skills reach it.
    pub skills_form: SkillsForm,
    /// How Weft's MCP servers reach it.
    pub mcp: McpForm,
    /// Where the user configured MCP servers in the agent itself (the files an import
    /// into Weft reads).
    #[serde(default)]
    pub own_mcp: Vec<OwnMcpFile>,
    /// Where a conversation's transcript sits in its config home, so a handover to
    /// another account's home can carry it.
    pub transcript: Option<TranscriptLayout>,
    /// What it can do.
    pub can: Can,
    /// The packs a new session of it can start with (the first is the default).
    pub packs: Vec<String>,
    /// What a conversation on no account is bound to (see [`Binding`]).
    pub ambient_binding: String,
    /// Why its own conversation cannot follow to an account bound elsewhere.
    pub switch_reason: Option<String>,
}

/// An agent CLI Weft installs, pinned.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Install {
    /// The command its package puts on the path.
    pub command: String,
    /// The package.
    pub package: Package,
    /// The version Weft is tested with, from the repository's `agents.toml` (empty
    /// until the registry fills it in).
    pub version: String,
    /// Offered to the user (the Agents view, `weft agents install`); the other pins
    /// are what `scripts/setup.sh` installs for the tests.
    #[serde(default)]
    pub offered: bool,
    /// Run in the installed package's folder when its command does not run once npm
    /// is done (a postinstall step npm may skip).
    #[serde(default)]
    pub repair: Option<Vec<String>>,
}

impl Install {
    /// An npm package offered to the user, with nothing to repair.
    pub fn npm(command: &str, package: &str) -> Self {
        Self {
            command: command.into(),
            package: Package::Npm {
                name: package.into(),
            },
            version: String::new(),
            offered: true,
            repair: None,
        }
    }
}

/// A registry package.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "registry")]
pub enum Package {
    /// An npm package; its binaries land in `node_modules/.bin`.
    Npm {
        /// The package name.
        name: String,
    },
    /// A PyPI package (extras included), installed into a venv of its own.
    PyPi {
        /// The requirement name, extras included (`hermes-agent[acp]`).
        name: String,
        /// The lowest Python it runs on.
        python: (u32, u32),
    },
}

impl Package {
    /// The package's name.
    pub fn name(&self) -> &str {
        match self {
            Self::Npm { name } | Self::PyPi { name, .. } => name,
        }
    }
}

/// A config folder: the variable that moves it, and where it is by default.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfigHome {
    /// `CLAUDE_CONFIG_DIR`, `CODEX_HOME`, …
    pub var: String,
    /// Its default, relative to `HOME` (`.claude`); `None` when the variable names a
    /// folder the CLI puts its own dot-folder in (gemini's `GEMINI_CLI_HOME`).
    pub default_dir: Option<String>,
    /// What says a login home is logged in.
    pub logged_in: Option<LoggedIn>,
}

/// A login home's credentials file.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LoggedIn {
    /// The file, relative to the home.
    pub file: String,
    /// The JSON key of an OAuth record in it (`expiresAt`, `refreshToken`): an expired
    /// one with nothing to refresh it is logged out. `None`: the file is enough.
    pub oauth: Option<String>,
}

/// The accounts an agent takes.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "form", content = "kinds")]
pub enum AccountForm {
    /// None: it is built in, nothing to sign in to.
    #[default]
    None,
    /// Its own kinds, in the order their checks list them.
    Kinds(Vec<AccountKind>),
    /// An ACP agent's `env` account: named variables, public ones in `env` and at most
    /// one secret in the variable `secret_var` names.
    Env,
}

impl AccountForm {
    /// The kinds, when the agent has its own.
    pub fn kinds(&self) -> &[AccountKind] {
        match self {
            Self::Kinds(k) => k,
            _ => &[],
        }
    }
}

/// Required, optional or refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum Need {
    /// Must be given.
    Required,
    /// May be given.
    Optional,
    /// Must not be given.
    No,
}

/// One kind of account and what it puts into a spawn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AccountKind {
    /// `login`, `api-key`, …
    pub id: String,
    /// Has its own home folder the CLI logs in to.
    pub login: bool,
    /// Whether it needs a secret.
    pub secret: Need,
    /// Whether it takes a base URL.
    pub base_url: Need,
    /// The wire protocols it speaks, one of which it needs (`--protocol`); empty: it
    /// takes none.
    pub protocols: Vec<String>,
    /// The variables it sets, in order; one whose value is missing is left out.
    pub env: Vec<(String, EnvValue)>,
    /// Arguments every spawn on it gets.
    pub args: Vec<String>,
    /// What binds a conversation to where it ran: two accounts with the same binding
    /// resume each other's conversations.
    pub binding: Binding,
    /// How `weft accounts test` checks its key, when it can.
    pub probe: Option<Probe>,
    /// The auth type written into a system-settings file of its own (Gemini's
    /// `security.auth.selectedType`), when the CLI reads one.
    pub settings_auth: Option<String>,
}

impl AccountKind {
    /// A kind with no variables yet.
    pub fn new(id: &str, login: bool, secret: Need, base_url: Need) -> Self {
        Self {
            id: id.into(),
            login,
            secret,
            base_url,
            protocols: Vec::new(),
            env: Vec::new(),
            args: Vec::new(),
            binding: Binding::Ambient,
            probe: None,
            settings_auth: None,
        }
    }

    /// Binds conversations by `binding`.
    #[must_use]
    pub fn bound(mut self, binding: Binding) -> Self {
        self.binding = binding;
        self
    }

    /// Checks its key with `probe`.
    #[must_use]
    pub fn probed(mut self, probe: Probe) -> Self {
        self.probe = Some(probe);
        self
    }

    /// Sets `var` to `value` too.
    #[must_use]
    pub fn set(mut self, var: &str, value: EnvValue) -> Self {
        self.env.push((var.into(), value));
        self
    }
}

/// What a conversation on an account is bound to.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "by", content = "value")]
pub enum Binding {
    /// Nothing of the account's: it follows anywhere the ambient login goes.
    Ambient,
    /// One provider, whichever account (Claude's thinking signatures hold across
    /// Anthropic's API, Bedrock and Vertex).
    Fixed(String),
    /// The base URL, under this word (`gateway https://…`).
    BaseUrl(String),
    /// The account itself (Codex encrypts reasoning for the account's organisation).
    Account,
    /// The account's login home (Gemini keeps its sessions there).
    Home,
    /// The wire protocol and base URL.
    ProtocolAndUrl,
}

/// A request that checks an account's key: `GET <base or default_base><path>`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Probe {
    /// The base when the account has none.
    pub default_base: String,
    /// Appended to the base.
    pub path: String,
    /// The header the key goes in; `None`: `Authorization: Bearer <key>`.
    pub key_header: Option<String>,
    /// Other headers.
    pub headers: Vec<(String, String)>,
}

/// Where a variable's value comes from.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "from", content = "value")]
pub enum EnvValue {
    /// The account's own login home.
    Home,
    /// The config folder the client's environment names (kept for key kinds, so a
    /// conversation started on one key resumes on another).
    AmbientHome,
    /// The account's base URL.
    BaseUrl,
    /// The account's base URL, else this.
    BaseUrlOr(String),
    /// The account's secret.
    Secret,
    /// Always this.
    Literal(String),
    /// The account's first model.
    FirstModel,
    /// The account's models, comma-separated.
    Models,
    /// The account's id.
    AccountId,
    /// The account's wire protocol.
    Protocol,
}

/// A skills folder of the agent's own.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "under", content = "path")]
pub enum SkillsDir {
    /// Relative to the project and to `HOME` both.
    Both(String),
    /// Relative to `HOME` only.
    Home(String),
}

/// How Weft's own skills reach an agent.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", tag = "form", content = "own")]
pub enum SkillsForm {
    /// They do not (or its driver gives them itself).
    #[default]
    None,
    /// Linked into `<dir>/<own>/skills` of a folder of the session's, given with
    /// `--add-dir <dir>` (Claude: own = `.claude`).
    AddDir(String),
    /// Linked into the shared `.agents/skills` of the home (global skills) and of the
    /// project (the project's), leaving those the user keeps in `<own>/skills`.
    Shared(String),
}

/// How Weft's MCP servers reach an agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum McpForm {
    /// It takes none (or its driver wires them itself).
    #[default]
    None,
    /// Claude's `--mcp-config` JSON.
    ClaudeConfig,
    /// Codex's `-c mcp_servers.*` overrides.
    CodexOverrides,
    /// Gemini's settings file.
    GeminiSettings,
    /// ACP's `mcpServers` in `session/new`.
    Acp,
    /// Weft's own agent reads them itself.
    Native,
}

/// A file where the user configures MCP servers in the agent itself.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OwnMcpFile {
    /// The file, relative to `HOME` (`.claude.json`).
    pub file: String,
    /// How the servers are written in it.
    pub format: OwnMcpFormat,
}

/// How an agent's own file writes its MCP servers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum OwnMcpFormat {
    /// JSON, one object per server under a top-level `mcpServers`: `command`, `args`,
    /// `env`, or `url` with `type` `http` / `sse` and `headers` (Claude's
    /// `~/.claude.json`).
    JsonMcpServers,
    /// The same, where a bare `url` is an SSE endpoint and `httpUrl` the streamable
    /// HTTP one (Gemini's `settings.json`).
    JsonMcpServersSseUrl,
    /// TOML, one `[mcp_servers.NAME]` table per server: `command`, `args`, `env`,
    /// `enabled`, or `url` with `bearer_token_env_var` / `http_headers` (Codex's
    /// `config.toml`).
    TomlMcpServers,
}

/// Where a conversation's transcript lives in a config home.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum TranscriptLayout {
    /// `projects/<any>/<session>.jsonl` (Claude).
    ProjectsJsonl,
    /// `sessions/<y>/<m>/<d>/rollout-…-<session>.jsonl` (Codex).
    DatedRollouts,
}

/// What an agent can do, declared.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Can {
    /// Steer, interact, resume, tui, as the wire says them.
    pub capabilities: Capabilities,
    /// Takes attachments.
    pub attachments: bool,
    /// Forks a conversation at a turn.
    pub fork_at_turn: bool,
    /// Its changes can be undone (Weft applied them itself).
    pub undo: bool,
}

impl AgentSpec {
    /// A spec with only an id and a name.
    pub fn new(id: &str, name: &str) -> Self {
        Self {
            id: id.into(),
            name: name.into(),
            ambient_binding: "ambient".into(),
            ..Self::default()
        }
    }

    /// Its kind `kind`, when it has its own kinds.
    pub fn kind(&self, kind: &str) -> Option<&AccountKind> {
        self.accounts.kinds().iter().find(|k| k.id == kind)
    }
}

impl AgentSpec {
    /// What a surface needs to know of it (the wire's [`AgentFacts`]).
    pub fn facts(&self) -> AgentFacts {
        let need = |n: Need| {
            match n {
                Need::Required => "required",
                Need::Optional => "optional",
                Need::No => "no",
            }
            .to_string()
        };
        let mut kinds: Vec<&AccountKind> = self.accounts.kinds().iter().collect();
        let rank = |k: &AccountKind| self.offer.iter().position(|o| *o == k.id);
        kinds.sort_by_key(|k| rank(k).unwrap_or(usize::MAX));
        AgentFacts {
            accounts: self.accounts != AccountForm::None,
            account_kinds: kinds
                .into_iter()
                .map(|k| AccountKindInfo {
                    id: k.id.clone(),
                    login: k.login,
                    secret: need(k.secret),
                    base_url: need(k.base_url),
                    protocols: k.protocols.clone(),
                })
                .collect(),
            packs: self.packs.clone(),
            undo: self.can.undo,
            attachments: self.can.attachments,
            fork_at_turn: self.can.fork_at_turn,
            commands: Vec::new(),
        }
    }
}

/// The spec of `id` among `specs`.
pub fn find<'a>(specs: &'a [AgentSpec], id: &str) -> Option<&'a AgentSpec> {
    specs.iter().find(|s| s.id == id)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_spec_is_data_round_trip() {
        let mut spec = AgentSpec::new("x", "X");
        spec.accounts = AccountForm::Kinds(vec![AccountKind::new(
            "api-key",
            false,
            Need::Required,
            Need::Optional,
        )
        .set("X_KEY", EnvValue::Secret)]);
        spec.install = Some(Install {
            version: "1.0.0".into(),
            repair: Some(vec!["node".into(), "fix.js".into()]),
            ..Install::npm("x", "x-cli")
        });
        let text = serde_json::to_string(&spec).unwrap();
        assert_eq!(serde_json::from_str::<AgentSpec>(&text).unwrap(), spec);
        assert_eq!(spec.kind("api-key").unwrap().env.len(), 1);
        assert!(find(&[spec], "y").is_none());
    }
}
