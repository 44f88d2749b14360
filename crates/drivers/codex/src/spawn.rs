//! Finding `codex` and building the `codex app-server` command line.
//!
//! Discovery order (never relative to the current folder, see
//! [`weft_agent_process::program`]): `WEFT_CODEX_BIN` (the turn's, else the driver's
//! config); the project-local install that `scripts/setup.sh setup_codex` makes
//! (`.tools/agents/node_modules/.bin/codex`, above the running executable only); then
//! the turn's `PATH`.
//!
//! The model provider comes from the turn's environment (the kernel's Accounts):
//! with `WEFT_CODEX_BASE_URL` set, a `weft` provider (`wire_api = "responses"`) is
//! defined and selected with `-c` overrides. Nothing is written to the user's
//! `config.toml`.

use std::path::{Path, PathBuf};

use weft_agent_process::{explicit_program, find_agent, EnvFingerprint};
use weft_kernel::driver::AgentTurnInput;

use crate::config::{Config, TurnKnobs};

/// Finds the executable for a turn whose settings are `cfg` (already overlaid with the
/// turn's variables) and whose environment is `var`, or says where it looked.
pub fn find_binary(cfg: &Config, var: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    if let Some(bin) = &cfg.bin {
        return explicit_program("WEFT_CODEX_BIN", &bin.to_string_lossy());
    }
    find_agent("codex", &["WEFT_CODEX_BIN"], var).map_err(|e| {
        format!(
            "the codex CLI: {e}; install it with `scripts/setup.sh setup_codex` or \
             `npm install -g @openai/codex`"
        )
    })
}

/// What to run for one session's long-lived `codex app-server`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SpawnSpec {
    /// The executable.
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The whole environment (nothing is inherited): the turn's `spawn_env`.
    pub env: Vec<(String, String)>,
    /// Working folder.
    pub cwd: PathBuf,
}

/// What a live process was started with; a turn asking for something else gets a new
/// process (resuming the same thread). Model and effort are not part of it: they go
/// with each `turn/start`.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessShape {
    /// The folder.
    pub workdir: PathBuf,
    /// The whole spawn environment (the client's, accounts, endpoints), as a
    /// fingerprint: a turn from a client with another environment gets a new process.
    pub env: EnvFingerprint,
    /// Extra arguments.
    pub extra_args: Vec<String>,
    /// Developer instructions given at thread start.
    pub system_prompt: Option<String>,
}

impl ProcessShape {
    /// The shape a turn asks for.
    pub fn of(input: &AgentTurnInput) -> Self {
        Self {
            workdir: input.workdir.clone(),
            env: EnvFingerprint::of(&input.spawn_env()),
            extra_args: input.extra_args.clone(),
            system_prompt: input.system_prompt.clone(),
        }
    }
}

/// A TOML string literal (JSON's escapes are TOML's).
pub fn toml_str(s: &str) -> String {
    serde_json::Value::String(s.to_string()).to_string()
}

/// The `-c` overrides for a turn's knobs, in order (later ones win in codex).
pub fn config_overrides(knobs: &TurnKnobs) -> Vec<String> {
    // Questions (`request_user_input`) in codex's default mode, not only in plan mode:
    // Weft always has a surface to answer them.
    // (an under-development feature in 0.171.0; its warning is ours to know, not the
    // user's to read on every turn).
    let mut out = vec![
        "features.default_mode_request_user_input=true".to_string(),
        "suppress_unstable_features_warning=true".to_string(),
    ];
    if let Some(url) = &knobs.base_url {
        out.extend([
            format!("model_provider={}", toml_str("weft")),
            format!("model_providers.weft.name={}", toml_str("Weft")),
            format!("model_providers.weft.base_url={}", toml_str(url)),
            format!("model_providers.weft.wire_api={}", toml_str("responses")),
            format!(
                "model_providers.weft.env_key={}",
                toml_str(&knobs.api_key_env)
            ),
        ]);
        if let Some(n) = knobs.max_retries {
            out.extend([
                format!("model_providers.weft.request_max_retries={n}"),
                format!("model_providers.weft.stream_max_retries={n}"),
            ]);
        }
    }
    out.extend(knobs.extra_config.iter().cloned());
    out
}

/// The command line for `input`'s session process.
pub fn spec(program: &Path, input: &AgentTurnInput, knobs: &TurnKnobs) -> SpawnSpec {
    let mut args = vec!["app-server".to_string()];
    for c in config_overrides(knobs) {
        args.extend(["-c".to_string(), c]);
    }
    args.extend(input.extra_args.iter().cloned());
    SpawnSpec {
        program: program.to_path_buf(),
        args,
        env: input.spawn_env(),
        cwd: input.workdir.clone(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn provider_overrides_come_from_the_turn_env() {
        let env = vec![
            (
                "WEFT_CODEX_BASE_URL".to_string(),
                "http://127.0.0.1:9/v1".to_string(),
            ),
            ("WEFT_CODEX_API_KEY_ENV".to_string(), "MY_KEY".to_string()),
            ("WEFT_CODEX_MAX_RETRIES".to_string(), "0".to_string()),
            (
                "WEFT_CODEX_CONFIG".to_string(),
                "model_catalog_json=\"/x.json\"".to_string(),
            ),
        ];
        let input = AgentTurnInput {
            workdir: "/w".into(),
            env: env.clone(),
            extra_args: vec!["--flag".into()],
            ..Default::default()
        };
        let s = spec(Path::new("/bin/codex"), &input, &TurnKnobs::of(&input));
        let line = s.args.join(" ");
        assert!(line.starts_with(
            "app-server -c features.default_mode_request_user_input=true \
             -c suppress_unstable_features_warning=true"
        ));
        assert!(line.contains("-c model_provider=\"weft\""));
        assert!(line.contains("-c model_providers.weft.base_url=\"http://127.0.0.1:9/v1\""));
        assert!(line.contains("-c model_providers.weft.env_key=\"MY_KEY\""));
        assert!(line.contains("-c model_providers.weft.wire_api=\"responses\""));
        assert!(line.contains("-c model_providers.weft.stream_max_retries=0"));
        assert!(line.ends_with("-c model_catalog_json=\"/x.json\" --flag"));
        assert!(env.iter().all(|pair| s.env.contains(pair)));
        assert_eq!(s.cwd, PathBuf::from("/w"));
    }

    #[test]
    fn no_endpoint_means_the_users_own_provider() {
        let s = spec(
            Path::new("codex"),
            &AgentTurnInput::default(),
            &TurnKnobs::from_vars(&|_| None),
        );
        assert!(!s.args.join(" ").contains("model_provider"));
    }

    #[test]
    fn toml_strings_are_escaped() {
        assert_eq!(toml_str("a\"b\\c"), "\"a\\\"b\\\\c\"");
    }
}
