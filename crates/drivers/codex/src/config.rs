//! The driver's knobs: `WEFT_CODEX_*` variables (documented in the README's "Codex
//! driver" section).
//!
//! Each is read from the turn's environment (`AgentTurnInput::var`: what the kernel's
//! Accounts and account ports give that one turn, then the environment of the
//! client that started it, or the kernel's own when no client did), then defaults. The user's `~/.codex/config.toml` is never edited:
//! everything Weft needs goes on the command line as `-c key=value` overrides.

use std::path::PathBuf;
use std::time::Duration;

use weft_kernel::driver::AgentTurnInput;

/// Tunables: the driver's own (defaults, or an embedder's), with each turn's
/// `WEFT_CODEX_*` variables on top ([`Config::with_vars`]).
#[derive(Debug, Clone)]
pub struct Config {
    /// `WEFT_CODEX_BIN`: the `codex` executable (else the project-local install, else
    /// PATH).
    pub bin: Option<PathBuf>,
    /// `WEFT_CODEX_STOP_GRACE_MS`: how long a stop waits for `turn/interrupt` to end
    /// the turn before the process group is killed (default 5000).
    pub stop_grace: Duration,
    /// `WEFT_CODEX_RPC_TIMEOUT_SECS`: the longest a handshake request
    /// (`initialize`, `thread/start`, `thread/resume`, `turn/start`) may take
    /// (default 60).
    pub rpc_timeout: Duration,
    /// `WEFT_CODEX_STALL_SECS`: a turn with no message from codex for this long is
    /// interrupted and fails as stalled (default 900).
    pub stall: Duration,
    /// `WEFT_CODEX_MAX_LINE_BYTES`: longer stdout lines are skipped with an error
    /// (default 16 MiB).
    pub max_line: usize,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bin: None,
            stop_grace: Duration::from_millis(5000),
            rpc_timeout: Duration::from_secs(60),
            stall: Duration::from_secs(900),
            max_line: 16 << 20,
        }
    }
}

/// The non-empty value `get` gives `name`.
fn set(get: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<String> {
    get(name).filter(|v| !v.trim().is_empty())
}

impl Config {
    /// The defaults, overridden by whatever `WEFT_CODEX_*` variables the kernel's own
    /// environment sets.
    pub fn from_env() -> Self {
        Self::default().with_vars(&|n| std::env::var(n).ok())
    }

    /// This config, with each `WEFT_CODEX_*` variable that `get` sets in place of its
    /// field: a turn's own settings, `cfg.with_vars(&|n| input.var(n))`.
    pub fn with_vars(&self, get: &dyn Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| set(get, name);
        let num = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let d = self.clone();
        Self {
            bin: var("WEFT_CODEX_BIN").map(PathBuf::from).or(d.bin),
            stop_grace: num("WEFT_CODEX_STOP_GRACE_MS").map_or(d.stop_grace, Duration::from_millis),
            rpc_timeout: num("WEFT_CODEX_RPC_TIMEOUT_SECS")
                .map_or(d.rpc_timeout, Duration::from_secs),
            stall: num("WEFT_CODEX_STALL_SECS").map_or(d.stall, Duration::from_secs),
            max_line: num("WEFT_CODEX_MAX_LINE_BYTES").map_or(d.max_line, |n| n as usize),
        }
    }
}

/// Per-turn knobs, from the turn's environment.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TurnKnobs {
    /// `WEFT_CODEX_APPROVAL_POLICY`: `untrusted`, `on-request` (default) or `never`.
    pub approval_policy: String,
    /// `WEFT_CODEX_SANDBOX`: `read-only`, `workspace-write` (default) or
    /// `danger-full-access`.
    pub sandbox: String,
    /// `WEFT_CODEX_COLLABORATION_MODE`: `plan` runs turns in codex's plan mode (the
    /// model proposes a plan; questions are always available); unset or `default`
    /// is codex's default mode.
    pub collaboration_mode: Option<String>,
    /// `WEFT_CODEX_BASE_URL`: a Responses endpoint (`…/v1`); when set, turns use a
    /// `weft` model provider pointing there instead of the user's own provider.
    pub base_url: Option<String>,
    /// `WEFT_CODEX_API_KEY_ENV`: the variable holding that endpoint's key (default
    /// `OPENAI_API_KEY`).
    pub api_key_env: String,
    /// `WEFT_CODEX_MAX_RETRIES`: the `weft` provider's request and stream retries.
    pub max_retries: Option<u64>,
    /// `WEFT_CODEX_CONFIG`: more `-c` overrides, one `key=value` per line.
    pub extra_config: Vec<String>,
}

impl TurnKnobs {
    /// The knobs for `input`'s turn.
    pub fn of(input: &AgentTurnInput) -> Self {
        Self::from_vars(&|n| input.var(n))
    }

    /// The knobs `get` (a turn's environment) sets.
    pub fn from_vars(get: &dyn Fn(&str) -> Option<String>) -> Self {
        let get = |name: &str| set(get, name);
        Self {
            approval_policy: get("WEFT_CODEX_APPROVAL_POLICY")
                .unwrap_or_else(|| "on-request".into()),
            sandbox: get("WEFT_CODEX_SANDBOX").unwrap_or_else(|| "workspace-write".into()),
            collaboration_mode: get("WEFT_CODEX_COLLABORATION_MODE")
                .filter(|m| m.trim() != "default"),
            base_url: get("WEFT_CODEX_BASE_URL"),
            api_key_env: get("WEFT_CODEX_API_KEY_ENV").unwrap_or_else(|| "OPENAI_API_KEY".into()),
            max_retries: get("WEFT_CODEX_MAX_RETRIES").and_then(|v| v.trim().parse().ok()),
            extra_config: get("WEFT_CODEX_CONFIG")
                .map(|v| {
                    v.lines()
                        .map(str::trim)
                        .filter(|l| !l.is_empty() && !l.starts_with('#'))
                        .map(String::from)
                        .collect()
                })
                .unwrap_or_default(),
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use weft_protocol::ClientEnv;

    use super::*;

    #[test]
    fn a_clients_variables_are_its_turns_knobs() {
        let client: ClientEnv = ClientEnv(
            [("WEFT_CODEX_SANDBOX".to_string(), "read-only".to_string())]
                .into_iter()
                .collect(),
        );
        let input = AgentTurnInput {
            client_env: Some(Arc::new(client)),
            ..Default::default()
        };
        let k = TurnKnobs::of(&input);
        assert_eq!(k.sandbox, "read-only");
        let cfg = Config::default().with_vars(&|n| input.var(n));
        assert_eq!(cfg.stall, Config::default().stall);
    }

    #[test]
    fn turn_env_wins_and_defaults_apply() {
        let env = vec![
            (
                "WEFT_CODEX_SANDBOX".to_string(),
                "danger-full-access".to_string(),
            ),
            (
                "WEFT_CODEX_COLLABORATION_MODE".to_string(),
                "default".to_string(),
            ),
            (
                "WEFT_CODEX_CONFIG".to_string(),
                "a=1\n\n# note\n b = \"x\" ".to_string(),
            ),
        ];
        let k = TurnKnobs::of(&AgentTurnInput {
            env,
            ..Default::default()
        });
        assert_eq!(k.sandbox, "danger-full-access");
        assert_eq!(k.approval_policy, "on-request");
        assert_eq!(k.collaboration_mode, None);
        assert_eq!(k.api_key_env, "OPENAI_API_KEY");
        assert_eq!(k.extra_config, vec!["a=1", "b = \"x\""]);
    }
}
