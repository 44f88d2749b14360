//! The driver's knobs: `WEFT_CODEX_*` variables (documented in the README's "Codex
//! driver" section).
//!
//! Each is read from the turn's own spawn environment first (what the kernel's
//! ModelResolver and account ports give that one turn), then from Weft's process
//! environment, then defaults. The user's `~/.codex/config.toml` is never edited:
//! everything Weft needs goes on the command line as `-c key=value` overrides.

use std::path::PathBuf;
use std::time::Duration;

/// Process-wide tunables, read once when the driver is made.
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

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn num(name: &str) -> Option<u64> {
    var(name).and_then(|v| v.trim().parse().ok())
}

impl Config {
    /// The defaults, overridden by whatever `WEFT_CODEX_*` variables are set.
    pub fn from_env() -> Self {
        let d = Self::default();
        Self {
            bin: var("WEFT_CODEX_BIN").map(PathBuf::from),
            stop_grace: num("WEFT_CODEX_STOP_GRACE_MS").map_or(d.stop_grace, Duration::from_millis),
            rpc_timeout: num("WEFT_CODEX_RPC_TIMEOUT_SECS")
                .map_or(d.rpc_timeout, Duration::from_secs),
            stall: num("WEFT_CODEX_STALL_SECS").map_or(d.stall, Duration::from_secs),
            max_line: num("WEFT_CODEX_MAX_LINE_BYTES").map_or(d.max_line, |n| n as usize),
        }
    }
}

/// Per-turn knobs: from the turn's spawn environment, else Weft's own environment.
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
    /// The knobs for a turn spawned with `env`.
    pub fn from_env(env: &[(String, String)]) -> Self {
        let get = |name: &str| {
            env.iter()
                .rev()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.clone())
                .filter(|v| !v.trim().is_empty())
                .or_else(|| var(name))
        };
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
    use super::*;

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
        let k = TurnKnobs::from_env(&env);
        assert_eq!(k.sandbox, "danger-full-access");
        assert_eq!(k.approval_policy, "on-request");
        assert_eq!(k.collaboration_mode, None);
        assert_eq!(k.api_key_env, "OPENAI_API_KEY");
        assert_eq!(k.extra_config, vec!["a=1", "b = \"x\""]);
    }
}
