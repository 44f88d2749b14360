//! The echo agent: Weft's default agent, in-process and hermetic.
//!
//! It needs no account and no network, and it exercises every part of the snapshot so
//! the app, the CLI and the tests can show and check each one: streamed text and
//! reasoning, a plan, tool calls that run for real against the workspace (one always
//! fails), usage, an artifact, and — when the prompt asks — a permission prompt or a
//! question. It honours stop and steer, and keeps its own transcript per session id
//! under `<state_dir>/echo/` so a later turn (in another process) resumes it.
//!
//! Words in the prompt switch behaviours on: `permission`, `question`, `survey` (two
//! questions: one taking several choices and free text, one taking a choice or free
//! text), `slow` (long enough to stop or steer), `crash` (the turn fails), `ports` (it says
//! the `WEFT_PORT` its spawn got). A line `write-file PATH TEXT` has it write TEXT to PATH
//! (inside the workspace) after the same permission as the note. `WEFT_ECHO_DELAY_MS` sets the
//! pause between streamed pieces (default 20). With `WEFT_ECHO_SHELL=1` in the turn's
//! environment, a first line `shell: COMMAND` has it run COMMAND in the workspace.

mod script;
pub mod spec;
mod transcript;

use std::collections::HashSet;
use std::time::Duration;

use async_trait::async_trait;
use parking_lot::Mutex;
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, TuiSpec};
use weft_protocol::{AgentInfo, Capabilities, ModelInfo};

pub use transcript::EchoTranscript;

/// The echo agent's id.
pub const ECHO_ID: &str = "echo";

/// Echo's own "terminal UI": greets, then echoes each line until EOF (Ctrl-D).
/// `flood N` (N up to 999) writes N MB at once, to try a pane with a burst of output.
const TUI_SCRIPT: &str = "printf 'Echo terminal. Type a line; Ctrl-D ends.\\n'; \
while printf 'echo> ' && IFS= read -r line; do case \"$line\" in \
'flood '[0-9]|'flood '[0-9][0-9]|'flood '[0-9][0-9][0-9]) n=${line#flood }; \
head -c $((n * 1000000)) /dev/zero | tr '\\0' '#'; printf '\\nflooded %s MB\\n' \"$n\";; \
*) printf 'Echo: %s\\n' \"$line\";; esac; done; \
printf '\\nbye\\n'";

/// The built-in echo agent.
pub struct EchoDriver {
    /// A fixed pause between streamed pieces; `None`: each turn's `WEFT_ECHO_DELAY_MS`.
    delay: Option<Duration>,
    /// Where its transcripts are listed from (the kernel passes each turn its own).
    state_dir: std::path::PathBuf,
    /// Sessions whose user chose "allow for session".
    allowed_sessions: Mutex<HashSet<String>>,
}

impl Default for EchoDriver {
    fn default() -> Self {
        Self::new()
    }
}

impl EchoDriver {
    /// An echo agent pacing each turn's output by that turn's `WEFT_ECHO_DELAY_MS`
    /// (the client's environment, when a client started it; default 20 ms).
    pub fn new() -> Self {
        Self {
            delay: None,
            state_dir: weft_kernel::state::global_state_dir(),
            allowed_sessions: Mutex::new(HashSet::new()),
        }
    }

    /// An echo agent pausing `delay` between streamed pieces, whatever the turn says.
    pub fn with_delay(delay: Duration) -> Self {
        Self {
            delay: Some(delay),
            state_dir: weft_kernel::state::global_state_dir(),
            allowed_sessions: Mutex::new(HashSet::new()),
        }
    }

    /// The pause between streamed pieces in `input`'s turn.
    fn delay_for(&self, input: &AgentTurnInput) -> Duration {
        self.delay.unwrap_or_else(|| {
            let ms = input
                .var("WEFT_ECHO_DELAY_MS")
                .and_then(|v| v.trim().parse().ok());
            Duration::from_millis(ms.unwrap_or(20))
        })
    }

    /// Lists native sessions from `dir` instead of the global state folder (the kernel
    /// built with that folder passes it to every turn).
    pub fn state_dir(mut self, dir: impl Into<std::path::PathBuf>) -> Self {
        self.state_dir = dir.into();
        self
    }
}

#[async_trait]
impl AgentDriver for EchoDriver {
    fn id(&self) -> &str {
        ECHO_ID
    }

    fn name(&self) -> &str {
        "Echo (built-in)"
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
        AgentInfo {
            id: ECHO_ID.into(),
            name: self.name().into(),
            installed: true,
            version: Some(env!("CARGO_PKG_VERSION").into()),
            capabilities: self.capabilities(),
            problem: None,
            facts: spec::spec().facts(),
        }
    }

    async fn models(&self) -> Vec<ModelInfo> {
        vec![
            ModelInfo {
                id: "echo-1".into(),
                label: "Echo 1".into(),
                default: true,
            },
            ModelInfo {
                id: "echo-terse".into(),
                label: "Echo terse".into(),
                default: false,
            },
        ]
    }

    fn efforts(&self) -> Vec<String> {
        ["low", "medium", "high"].map(String::from).to_vec()
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        script::run(self, input, ctx).await
    }

    /// Echo's terminal is a tiny line-echoing program: hermetic, always there.
    fn tui(&self, input: &AgentTurnInput) -> Option<TuiSpec> {
        Some(TuiSpec {
            // By absolute path: a bare name would be looked up on a PATH that may name
            // the current folder.
            program: "/bin/sh".into(),
            args: vec!["-c".into(), TUI_SCRIPT.into()],
            env: input.env.clone(),
            cwd: input.workdir.clone(),
            session_id: None,
        })
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use weft_protocol::ClientEnv;

    use super::*;

    #[test]
    fn the_pace_is_each_turns_unless_fixed() {
        let mut client = ClientEnv::default();
        client.0.insert("WEFT_ECHO_DELAY_MS".into(), "7".into());
        let input = AgentTurnInput {
            client_env: Some(Arc::new(client)),
            ..Default::default()
        };
        assert_eq!(
            EchoDriver::new().delay_for(&input),
            Duration::from_millis(7)
        );
        let unset = AgentTurnInput {
            client_env: Some(Arc::new(ClientEnv::default())),
            ..Default::default()
        };
        assert_eq!(
            EchoDriver::new().delay_for(&unset),
            Duration::from_millis(20)
        );
        let fixed = EchoDriver::with_delay(Duration::from_millis(1));
        assert_eq!(fixed.delay_for(&input), Duration::from_millis(1));
    }
}
