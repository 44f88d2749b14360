//! The driver's knobs, all `WEFT_CLAUDE_*` environment variables (documented in the
//! README's "Claude Code driver" section).
//!
//! They are read for each turn from that turn's environment (`AgentTurnInput::var`:
//! the client's, when a client started it), on top of the driver's own [`Config`]
//! (the defaults, or what an embedder set with `ClaudeDriver::with_config`); the
//! kernel's own environment counts only where there is no turn (`info`).

use std::path::PathBuf;
use std::time::Duration;

/// Tunables.
#[derive(Debug, Clone)]
pub struct Config {
    /// `WEFT_CLAUDE_BIN`: the `claude` executable to run (else the project-local
    /// install, else PATH).
    pub bin: Option<PathBuf>,
    /// `WEFT_CLAUDE_PERMISSION_MODE`: `--permission-mode` (default `default`: tools
    /// that need permission become interactions).
    pub permission_mode: String,
    /// `WEFT_CLAUDE_STOP_GRACE_MS`: how long a stop waits for the CLI to answer the
    /// interrupt with its `result` before the process group is killed (default 5000).
    pub stop_grace: Duration,
    /// `WEFT_CLAUDE_STALL_SECS`: a turn with no output for this long settles as
    /// stalled, without killing the CLI (default 300; doubled at high effort and up).
    pub stall: Duration,
    /// `WEFT_CLAUDE_BG_QUIET_MS`: after the CLI's `result`, while it may still wake up
    /// (background tasks just finished, a steer not yet taken), the turn settles after
    /// this much silence (default 3000).
    pub bg_quiet: Duration,
    /// `WEFT_CLAUDE_BG_SHELL_CAP_SECS`: the longest a turn waits for a background shell
    /// (default 600).
    pub bg_shell_cap: Duration,
    /// `WEFT_CLAUDE_BG_AGENT_CAP_SECS`: the longest a turn waits for a background
    /// subagent (default 1800).
    pub bg_agent_cap: Duration,
    /// `WEFT_CLAUDE_NOOP_RETRIES`: how often a prompt answered with the CLI's synthetic
    /// "No response requested." is sent again (default 2).
    pub noop_retries: u32,
    /// `WEFT_CLAUDE_MAX_LINE_BYTES`: longer stdout lines are skipped with an error
    /// (default 8 MiB).
    pub max_line: usize,
    /// `WEFT_CLAUDE_FINISH_PROMPT`: what the driver sends, once per turn, when a clean
    /// `result` follows tool results with no closing text.
    pub finish_prompt: String,
}

impl Default for Config {
    fn default() -> Self {
        Self {
            bin: None,
            permission_mode: "default".into(),
            stop_grace: Duration::from_millis(5000),
            stall: Duration::from_secs(300),
            bg_quiet: Duration::from_millis(3000),
            bg_shell_cap: Duration::from_secs(600),
            bg_agent_cap: Duration::from_secs(1800),
            noop_retries: 2,
            max_line: 8 << 20,
            finish_prompt: "Your reply ended after the tool results without a final answer. \
                            Please finish your reply."
                .into(),
        }
    }
}

impl Config {
    /// The defaults, overridden by whatever `WEFT_CLAUDE_*` variables the kernel's own
    /// environment sets.
    pub fn from_env() -> Self {
        Self::default().with_vars(&|n| std::env::var(n).ok())
    }

    /// This config, with each `WEFT_CLAUDE_*` variable that `get` sets (non-empty) in
    /// place of its field: a turn's own settings, `cfg.with_vars(&|n| input.var(n))`.
    pub fn with_vars(&self, get: &dyn Fn(&str) -> Option<String>) -> Self {
        let var = |name: &str| get(name).filter(|v| !v.trim().is_empty());
        let num = |name: &str| var(name).and_then(|v| v.trim().parse::<u64>().ok());
        let d = self.clone();
        Self {
            bin: var("WEFT_CLAUDE_BIN").map(PathBuf::from).or(d.bin),
            permission_mode: var("WEFT_CLAUDE_PERMISSION_MODE").unwrap_or(d.permission_mode),
            stop_grace: num("WEFT_CLAUDE_STOP_GRACE_MS")
                .map_or(d.stop_grace, Duration::from_millis),
            stall: num("WEFT_CLAUDE_STALL_SECS").map_or(d.stall, Duration::from_secs),
            bg_quiet: num("WEFT_CLAUDE_BG_QUIET_MS").map_or(d.bg_quiet, Duration::from_millis),
            bg_shell_cap: num("WEFT_CLAUDE_BG_SHELL_CAP_SECS")
                .map_or(d.bg_shell_cap, Duration::from_secs),
            bg_agent_cap: num("WEFT_CLAUDE_BG_AGENT_CAP_SECS")
                .map_or(d.bg_agent_cap, Duration::from_secs),
            noop_retries: num("WEFT_CLAUDE_NOOP_RETRIES").map_or(d.noop_retries, |n| n as u32),
            max_line: num("WEFT_CLAUDE_MAX_LINE_BYTES").map_or(d.max_line, |n| n as usize),
            finish_prompt: var("WEFT_CLAUDE_FINISH_PROMPT").unwrap_or(d.finish_prompt),
        }
    }

    /// The stall watchdog for a turn at `effort`.
    pub fn stall_for(&self, effort: Option<&str>) -> Duration {
        match effort {
            Some("high" | "xhigh" | "max") => self.stall * 2,
            _ => self.stall,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_turns_variables_override_the_drivers_config_and_only_those() {
        let base = Config {
            stall: Duration::from_secs(7),
            permission_mode: "plan".into(),
            ..Config::default()
        };
        let vars = |n: &str| match n {
            "WEFT_CLAUDE_PERMISSION_MODE" => Some("acceptEdits".to_string()),
            "WEFT_CLAUDE_BG_QUIET_MS" => Some("12".to_string()),
            "WEFT_CLAUDE_STALL_SECS" => Some("  ".to_string()),
            "WEFT_CLAUDE_BIN" => Some("/opt/claude".to_string()),
            _ => None,
        };
        let turn = base.with_vars(&vars);
        assert_eq!(turn.permission_mode, "acceptEdits");
        assert_eq!(turn.bg_quiet, Duration::from_millis(12));
        assert_eq!(turn.stall, Duration::from_secs(7));
        assert_eq!(turn.bin, Some(PathBuf::from("/opt/claude")));
        assert_eq!(base.with_vars(&|_| None).permission_mode, "plan");
    }
}
