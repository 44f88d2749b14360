//! The driver's knobs, all `WEFT_CLAUDE_*` environment variables (documented in the
//! README's "Claude Code driver" section), read once when the driver is made.

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

fn var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

fn num(name: &str) -> Option<u64> {
    var(name).and_then(|v| v.trim().parse().ok())
}

impl Config {
    /// The defaults, overridden by whatever `WEFT_CLAUDE_*` variables are set.
    pub fn from_env() -> Self {
        let d = Self::default();
        Self {
            bin: var("WEFT_CLAUDE_BIN").map(PathBuf::from),
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
