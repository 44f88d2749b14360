//! Finding `claude` and building its command line.
//!
//! Discovery order (never relative to the current folder, see
//! [`weft_agent_process::program`]): `WEFT_CLAUDE_BIN` (the turn's, else the driver's
//! config); the project-local install that `scripts/setup.sh` makes
//! (`.tools/agents/node_modules/.bin/claude`, above the running executable only); then
//! the turn's `PATH`.

use std::path::{Path, PathBuf};

use weft_agent_process::{explicit_program, find_agent, EnvFingerprint};
use weft_kernel::driver::AgentTurnInput;

use crate::config::Config;

/// Finds the executable for a turn whose settings are `cfg` (already overlaid with the
/// turn's variables) and whose environment is `var`, or says where it looked.
pub fn find_binary(cfg: &Config, var: &dyn Fn(&str) -> Option<String>) -> Result<PathBuf, String> {
    if let Some(bin) = &cfg.bin {
        return explicit_program("WEFT_CLAUDE_BIN", &bin.to_string_lossy());
    }
    find_agent("claude", &["WEFT_CLAUDE_BIN"], var).map_err(|e| {
        format!(
            "the Claude Code CLI: {e}; install it with `scripts/setup.sh setup_claude_code` \
             or `npm install -g @anthropic-ai/claude-code`"
        )
    })
}

/// What to run for one long-lived session process.
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
/// process (resuming the same session).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ProcessShape {
    /// `--model`.
    pub model: Option<String>,
    /// `--effort`.
    pub effort: Option<String>,
    /// The folder.
    pub workdir: PathBuf,
    /// Extra arguments.
    pub extra_args: Vec<String>,
    /// `--append-system-prompt`.
    pub system_prompt: Option<String>,
    /// The whole spawn environment (the client's, accounts, endpoints), as a
    /// fingerprint: a turn from a client with another environment gets a new process.
    pub env: EnvFingerprint,
}

impl ProcessShape {
    /// The shape a turn asks for.
    pub fn of(input: &AgentTurnInput) -> Self {
        Self {
            model: input.model.clone(),
            effort: input.effort.clone(),
            workdir: input.workdir.clone(),
            extra_args: input.extra_args.clone(),
            system_prompt: input.system_prompt.clone(),
            env: EnvFingerprint::of(&input.spawn_env()),
        }
    }
}

/// The session to open: resume one, or start one with a known id (so its session file
/// is known even if the CLI dies before saying).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionArg {
    /// `--resume <id>`.
    Resume(String),
    /// `--session-id <id>`.
    New(String),
}

impl SessionArg {
    /// The session id either way.
    pub fn id(&self) -> &str {
        match self {
            SessionArg::Resume(id) | SessionArg::New(id) => id,
        }
    }
}

fn has_flag(args: &[String], flag: &str) -> bool {
    args.iter()
        .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
}

/// The command line for `input`'s session.
pub fn spec(
    program: &Path,
    input: &AgentTurnInput,
    session: &SessionArg,
    cfg: &Config,
) -> SpawnSpec {
    let mut args: Vec<String> = [
        "-p",
        "--input-format",
        "stream-json",
        "--output-format",
        "stream-json",
        "--verbose",
        "--include-partial-messages",
        "--replay-user-messages",
    ]
    .iter()
    .map(|s| s.to_string())
    .collect();
    if let Some(model) = &input.model {
        args.extend(["--model".into(), model.clone()]);
    }
    if let Some(effort) = &input.effort {
        args.extend(["--effort".into(), effort.clone()]);
    }
    match session {
        SessionArg::Resume(id) => args.extend(["--resume".into(), id.clone()]),
        SessionArg::New(id) => args.extend(["--session-id".into(), id.clone()]),
    }
    let extra = &input.extra_args;
    if !has_flag(extra, "--permission-mode") && !has_flag(extra, "--dangerously-skip-permissions") {
        args.extend(["--permission-mode".into(), cfg.permission_mode.clone()]);
    }
    if !has_flag(extra, "--permission-prompt-tool") {
        args.extend(["--permission-prompt-tool".into(), "stdio".into()]);
    }
    if let Some(sp) = input.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        args.extend(["--append-system-prompt".into(), sp.clone()]);
    }
    args.extend(extra.iter().cloned());
    SpawnSpec {
        program: program.to_path_buf(),
        args,
        env: input.spawn_env(),
        cwd: input.workdir.clone(),
    }
}

/// The first user message: the prompt, with attachments named so the agent reads them.
pub fn prompt_text(input: &AgentTurnInput) -> String {
    if input.attachments.is_empty() {
        return input.prompt.clone();
    }
    let files: Vec<String> = input
        .attachments
        .iter()
        .map(|p| format!("- {}", p.display()))
        .collect();
    format!("{}\n\nAttached files:\n{}", input.prompt, files.join("\n"))
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn argv_has_the_stream_flags_and_respects_overrides() {
        let input = AgentTurnInput {
            model: Some("sonnet".into()),
            effort: Some("high".into()),
            workdir: "/w".into(),
            extra_args: vec!["--permission-mode".into(), "plan".into()],
            ..Default::default()
        };
        let s = spec(
            Path::new("/bin/claude"),
            &input,
            &SessionArg::Resume("abc".into()),
            &Config::default(),
        );
        let line = s.args.join(" ");
        assert!(line.starts_with("-p --input-format stream-json --output-format stream-json --verbose --include-partial-messages"));
        assert!(line.contains("--model sonnet --effort high --resume abc"));
        assert!(line.contains("--permission-prompt-tool stdio"));
        assert_eq!(line.matches("--permission-mode").count(), 1);
        assert!(line.ends_with("--permission-mode plan"));
    }

    #[test]
    fn attachments_are_listed() {
        let input = AgentTurnInput {
            prompt: "look".into(),
            attachments: vec!["/a/b.png".into()],
            ..Default::default()
        };
        assert_eq!(prompt_text(&input), "look\n\nAttached files:\n- /a/b.png");
    }
}
