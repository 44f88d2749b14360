//! Which ACP agents exist: the presets, and the user's own from
//! `<WEFT_HOME>/agents.json`.
//!
//! ```json
//! { "agents": [
//!   { "id": "my-agent", "name": "My Agent", "command": "my-agent",
//!     "args": ["--acp"], "env": { "MY_AGENT_LOG": "warn" }, "loadSession": true }
//! ] }
//! ```
//!
//! `command` is an absolute path or a bare name looked up like the presets' (the
//! turn's `$WEFT_<ID>_BIN`, the project-local `.tools/agents/node_modules/.bin` above
//! the running executable, then the turn's `PATH`; never relative to the current
//! folder, see [`weft_agent_process::program`]).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::backfill::ToolOutputFn;

use weft_kernel::driver::AgentTurnInput;

pub use weft_agent_process::{find_program, LOCAL_BIN_DIR};

/// One ACP agent: how to start it and what to expect of it.
#[derive(Debug, Clone)]
pub struct AcpSpec {
    /// The Weft agent id (no `:`).
    pub id: String,
    /// Display name.
    pub name: String,
    /// The program: a path, or a name to look up.
    pub command: String,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment for every spawn: over the client's (or the kernel's)
    /// environment, under the turn's own `env` (accounts, endpoints).
    pub env: Vec<(String, String)>,
    /// Try `session/load` to resume when the agent advertises it (false for agents
    /// whose load is unreliable: gemini 0.61.0 usually refuses and rewrites the file).
    pub load_session: bool,
    /// Arguments that print the version (`--version`), when the agent has them.
    pub version_args: Option<Vec<String>>,
    /// Environment variables that may name the binary, first wins.
    pub bin_env: Vec<String>,
    /// How to install it, for the "not found" message.
    pub install_hint: String,
    /// How long `initialize` may take.
    pub init_timeout: Duration,
    /// How long a stop waits for the agent's `cancelled` before killing it.
    pub stop_grace: Duration,
    /// Reads tool output the agent leaves out of its updates (see [`crate::backfill`]).
    pub tool_output: Option<ToolOutputFn>,
    /// The registry package the binary comes from (`agents.toml` at the repository's
    /// root pins its version, for `scripts/setup.sh` and the registry alike).
    pub package: Option<AgentPackage>,
    /// For an agent with a folder-trust switch of its own: the arguments that follow
    /// Weft's trust decision for the turn's folder, or why it cannot run there.
    pub trust_args: Option<TrustArgsFn>,
    /// Offered to the user to install (the Agents view, `weft agents install`).
    pub offer_install: bool,
    /// Run before `session/load` of a session id: what the agent needs on disk for the
    /// load to find it (gemini: its chat file out of the way of the fresh one it starts
    /// first).
    pub before_load: Option<BeforeLoadFn>,
    /// For an agent that takes no additional directories but reads extra skill
    /// folders from a settings file an environment variable names: that file (see
    /// [`crate::skills::SkillsSettings`]).
    pub skills_settings: Option<crate::skills::SkillsSettings>,
    /// Where the agent reads skills itself, for the kernel's skills plugin to place
    /// Weft's there (codex-acp runs Codex, which reads `.agents/skills`).
    pub skills_form: weft_agent_spec::spec::SkillsForm,
}

/// See [`AcpSpec::before_load`].
pub type BeforeLoadFn = fn(&weft_kernel::driver::AgentTurnInput, &str);

/// See [`AcpSpec::trust_args`].
pub type TrustArgsFn = fn(&weft_kernel::driver::AgentTurnInput) -> Result<Vec<String>, String>;

/// A preset's registry package (its pinned version is the repository's `agents.toml`).
pub use weft_agent_spec::spec::Package as AgentPackage;

fn npm(name: &str) -> Option<AgentPackage> {
    Some(AgentPackage::Npm { name: name.into() })
}

fn pypi(name: &str, python: (u32, u32)) -> Option<AgentPackage> {
    Some(AgentPackage::PyPi {
        name: name.into(),
        python,
    })
}

impl AcpSpec {
    /// A spec with defaults for everything but id, command and args.
    pub fn new(id: &str, command: &str, args: &[&str]) -> Self {
        Self {
            id: id.into(),
            name: id.into(),
            command: command.into(),
            args: args.iter().map(|s| s.to_string()).collect(),
            env: Vec::new(),
            load_session: true,
            version_args: None,
            bin_env: vec![bin_env_name(id)],
            install_hint: format!("install `{command}` and put it on PATH"),
            init_timeout: Duration::from_secs(60),
            stop_grace: Duration::from_secs(5),
            tool_output: None,
            package: None,
            trust_args: None,
            offer_install: false,
            before_load: None,
            skills_settings: None,
            skills_form: weft_agent_spec::spec::SkillsForm::None,
        }
    }

    /// Finds the executable in the environment `var` gives (a turn's,
    /// `AgentTurnInput::var`; the kernel's own for what belongs to no turn), or says
    /// where it looked.
    pub fn find_binary(&self, var: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
        let bin_env: Vec<&str> = self.bin_env.iter().map(String::as_str).collect();
        weft_agent_process::find_agent(&self.command, &bin_env, var)
            .map_err(|e| format!("{e}; {}", self.install_hint))
    }

    /// The whole environment of a spawn for `input`'s turn: the turn's
    /// (`spawn_env`), with this agent's own [`AcpSpec::env`] over everything but the
    /// turn's `env`.
    pub fn spawn_env(&self, input: &AgentTurnInput) -> Vec<(String, String)> {
        let mut all: BTreeMap<String, String> = input.spawn_env().into_iter().collect();
        for (k, v) in &self.env {
            if !input.env.iter().any(|(name, _)| name == k) {
                all.insert(k.clone(), v.clone());
            }
        }
        all.into_iter().collect()
    }
}

/// `WEFT_<ID>_BIN` for an agent id (`claude-acp` → `WEFT_CLAUDE_ACP_BIN`).
pub fn bin_env_name(id: &str) -> String {
    let up: String = id
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() {
                c.to_ascii_uppercase()
            } else {
                '_'
            }
        })
        .collect();
    format!("WEFT_{up}_BIN")
}

/// `WEFT_<ID>_MODE`: the mode a session of agent `id` starts in (`yolo`, `plan`, …).
pub fn mode_env_name(id: &str) -> String {
    bin_env_name(id).replace("_BIN", "_MODE")
}

/// A knob the turn's environment sets (non-empty).
pub fn knob(input: &AgentTurnInput, name: &str) -> Option<String> {
    input.var(name).filter(|v| !v.trim().is_empty())
}

/// How `scripts/setup.sh` installs a preset (the package it pins), for "not found".
fn setup_hint(package: &str) -> String {
    format!("install it with `scripts/setup.sh setup_acp_agents` (pins {package})")
}

/// The ACP agents Weft knows out of the box. Each one's binary is found like every
/// agent's (`$WEFT_<ID>_BIN`, the project-local `.tools/agents/node_modules/.bin`
/// that `scripts/setup.sh` fills — the PyPI agents' venvs are linked there too —,
/// then `PATH`); what each one does differently from the ACP spec is handled in
/// [`crate::quirks`].
pub fn presets() -> Vec<AcpSpec> {
    // hermes-agent (PyPI): `hermes acp`; its model is `model.base_url` in
    // `~/.hermes/config.yaml` (any OpenAI-compatible endpoint).
    let mut hermes = AcpSpec::new("hermes", "hermes", &["acp"]);
    hermes.name = "Hermes (ACP)".into();
    hermes.version_args = Some(vec!["--version".into()]);
    hermes.install_hint = setup_hint("hermes-agent[acp] from PyPI");
    hermes.package = pypi("hermes-agent[acp]", (3, 11));

    // kimi-cli (PyPI, Python >= 3.12): `kimi acp`; a provider of type `openai_legacy`
    // in `~/.kimi/config.toml` points it at any OpenAI-compatible endpoint.
    let mut kimi = AcpSpec::new("kimi", "kimi", &["acp"]);
    kimi.name = "Kimi CLI (ACP)".into();
    kimi.version_args = Some(vec!["--version".into()]);
    kimi.install_hint = format!(
        "{}, then run `kimi login`",
        setup_hint("kimi-cli from PyPI")
    );
    kimi.package = pypi("kimi-cli", (3, 12));

    let mut claude = AcpSpec::new("claude-acp", "claude-agent-acp", &[]);
    claude.name = "Claude (ACP)".into();
    claude.package = npm("@agentclientprotocol/claude-agent-acp");
    claude.offer_install = true;
    claude.install_hint = "install it with `scripts/setup.sh setup_gemini_acp` or \
                           `npm install -g @agentclientprotocol/claude-agent-acp`"
        .into();

    let mut gemini = AcpSpec::new("gemini-acp", "gemini", &["--acp"]);
    gemini.name = "Gemini CLI (ACP)".into();
    // gemini 0.61.0 usually refuses session/load ("No previous sessions found for this
    // project": it records the project late) and rewrites the chat file while doing
    // so: never try it.
    gemini.load_session = false;
    gemini.package = npm("@google/gemini-cli");
    gemini.version_args = Some(vec!["--version".into()]);
    gemini.bin_env = vec![bin_env_name("gemini-acp"), "WEFT_GEMINI_BIN".into()];
    gemini.install_hint = "install it with `scripts/setup.sh setup_gemini_acp` or \
                           `npm install -g @google/gemini-cli`"
        .into();

    // @qwen-code/qwen-code (npm): `qwen --acp`; OPENAI_BASE_URL / OPENAI_API_KEY /
    // OPENAI_MODEL with `security.auth.selectedType = "openai"` in its settings.
    let mut qwen = AcpSpec::new("qwen", "qwen", &["--acp"]);
    qwen.name = "Qwen Code (ACP)".into();
    qwen.version_args = Some(vec!["--version".into()]);
    qwen.install_hint = setup_hint("@qwen-code/qwen-code from npm");
    qwen.package = npm("@qwen-code/qwen-code");
    // No additional directories over ACP, but `skills.directories` in its settings;
    // its lowest layer, the system defaults, is a file QWEN_CODE_SYSTEM_DEFAULTS_PATH
    // may name, so the user's own settings keep precedence.
    qwen.skills_settings = Some(crate::skills::SkillsSettings {
        env: "QWEN_CODE_SYSTEM_DEFAULTS_PATH",
        default_path: "/etc/qwen-code/system-defaults.json",
    });

    // @github/copilot (npm): `copilot --acp`; GitHub login, or a model provider of
    // one's own (COPILOT_PROVIDER_BASE_URL, COPILOT_OFFLINE=true: no GitHub at all).
    let mut copilot = AcpSpec::new("copilot", "copilot", &["--acp"]);
    copilot.name = "GitHub Copilot CLI (ACP)".into();
    copilot.version_args = Some(vec!["--version".into()]);
    copilot.install_hint = setup_hint("@github/copilot from npm");
    copilot.package = npm("@github/copilot");

    // @zed-industries/codex-acp (npm): Codex over ACP, configured like codex itself
    // (`$CODEX_HOME/config.toml`, a custom model provider). No --version: the npm
    // package's version is read instead.
    let mut codex = AcpSpec::new("codex-acp", "codex-acp", &[]);
    codex.name = "Codex (ACP)".into();
    codex.install_hint = setup_hint("@zed-industries/codex-acp from npm");
    codex.package = npm("@zed-industries/codex-acp");
    codex.skills_form = weft_agent_spec::spec::SkillsForm::Shared(".codex".into());

    // @augmentcode/auggie (npm): `auggie --acp`; models only through an Augment
    // login (`auggie login`), which it cannot do over ACP.
    let mut auggie = AcpSpec::new("auggie", "auggie", &["--acp"]);
    auggie.name = "Auggie (ACP)".into();
    auggie.version_args = Some(vec!["--version".into()]);
    auggie.package = npm("@augmentcode/auggie");
    auggie.install_hint = format!(
        "{}, then run `auggie login`",
        setup_hint("@augmentcode/auggie from npm")
    );

    // @sourcegraph/amp (npm): the amp CLI of this release has no ACP mode (`--acp`
    // is an unknown option); the preset runs the community adapter `acp-amp` (PyPI),
    // which drives `amp` and needs an Amp login. Untested here: see the README.
    let mut amp = AcpSpec::new("amp", "acp-amp", &[]);
    amp.name = "Amp (ACP)".into();
    // acp-amp 0.1.3 answers `initialize` with loadSession: false.
    amp.load_session = false;
    // The adapter drives `amp` (npm @sourcegraph/amp 0.0.1790142911-g7618fb), which
    // setup.sh installs beside it.
    amp.package = pypi("acp-amp", (3, 10));
    amp.install_hint = "install `acp-amp` (PyPI) and `amp` (npm @sourcegraph/amp), \
                        then run `amp login`"
        .into();

    vec![
        hermes, kimi, claude, gemini, qwen, copilot, codex, auggie, amp,
    ]
}

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
struct UserAgent {
    id: String,
    name: Option<String>,
    command: String,
    #[serde(default)]
    args: Vec<String>,
    #[serde(default)]
    env: BTreeMap<String, String>,
    load_session: Option<bool>,
    version_args: Option<Vec<String>>,
}

#[derive(Debug, Deserialize)]
struct AgentsFile {
    #[serde(default)]
    agents: Vec<UserAgent>,
}

/// The user's agents from `<state_dir>/agents.json` (none when the file is absent).
/// Ids that are empty, contain `:` or repeat are refused.
pub fn user_agents(state_dir: &Path) -> Result<Vec<AcpSpec>, String> {
    let path = state_dir.join("agents.json");
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(format!("{}: {e}", path.display())),
    };
    let file: AgentsFile =
        serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
    let mut out: Vec<AcpSpec> = Vec::new();
    for a in file.agents {
        if a.id.is_empty() || a.id.contains(':') || a.id.contains(char::is_whitespace) {
            return Err(format!("{}: bad agent id `{}`", path.display(), a.id));
        }
        if out.iter().any(|s| s.id == a.id) {
            return Err(format!("{}: agent id `{}` repeats", path.display(), a.id));
        }
        let mut spec = AcpSpec::new(&a.id, &a.command, &[]);
        spec.args = a.args;
        spec.name = a.name.unwrap_or_else(|| a.id.clone());
        spec.env = a.env.into_iter().collect();
        spec.load_session = a.load_session.unwrap_or(true);
        spec.version_args = a.version_args;
        spec.install_hint = format!("check `command` of `{}` in {}", a.id, path.display());
        out.push(spec);
    }
    Ok(out)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn the_agents_own_env_goes_over_the_clients_and_under_the_turns() {
        let mut spec = AcpSpec::new("a", "a", &[]);
        spec.env = vec![
            ("LOG".into(), "warn".into()),
            ("KEY".into(), "from-spec".into()),
        ];
        let client = weft_protocol::ClientEnv(
            [("LOG", "debug"), ("PATH", "/usr/bin")]
                .into_iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
        );
        let input = AgentTurnInput {
            env: vec![("KEY".into(), "from-account".into())],
            client_env: Some(std::sync::Arc::new(client)),
            ..Default::default()
        };
        let env = spec.spawn_env(&input);
        let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
        assert_eq!(get("LOG"), Some("warn"));
        assert_eq!(get("KEY"), Some("from-account"));
        assert_eq!(get("PATH"), Some("/usr/bin"));
        assert_eq!(env.len(), 3);
    }

    #[test]
    fn bin_env_names() {
        assert_eq!(bin_env_name("claude-acp"), "WEFT_CLAUDE_ACP_BIN");
        assert_eq!(bin_env_name("kimi"), "WEFT_KIMI_BIN");
    }

    #[test]
    fn user_agents_parse_and_refuse_bad_ids() {
        let dir = tempfile::tempdir().unwrap();
        assert!(user_agents(dir.path()).unwrap().is_empty());
        std::fs::write(
            dir.path().join("agents.json"),
            r#"{"agents":[{"id":"mine","command":"/bin/my-agent","args":["--acp"],
                "env":{"A":"1"},"loadSession":false}]}"#,
        )
        .unwrap();
        let specs = user_agents(dir.path()).unwrap();
        assert_eq!(specs.len(), 1);
        let s = &specs[0];
        assert_eq!((s.id.as_str(), s.name.as_str()), ("mine", "mine"));
        assert_eq!(s.args, vec!["--acp"]);
        assert_eq!(s.env, vec![("A".to_string(), "1".to_string())]);
        assert!(!s.load_session);
        std::fs::write(
            dir.path().join("agents.json"),
            r#"{"agents":[{"id":"a:b","command":"x"}]}"#,
        )
        .unwrap();
        assert!(user_agents(dir.path())
            .unwrap_err()
            .contains("bad agent id"));
        std::fs::write(dir.path().join("agents.json"), "{not json").unwrap();
        assert!(user_agents(dir.path()).is_err());
    }

    #[test]
    fn missing_binary_says_where_it_looked() {
        let spec = AcpSpec::new("nope", "weft-no-such-agent-binary", &[]);
        let err = spec.find_binary(&|_| None).unwrap_err();
        assert!(err.contains("WEFT_NOPE_BIN"), "{err}");
        assert!(err.contains("weft-no-such-agent-binary"), "{err}");
    }
}
