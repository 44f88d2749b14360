//! Finding `claude` and building its command line.
//!
//! Discovery order (never relative to the current folder, see
//! [`weft_agent_process::program`]): `WEFT_CLAUDE_BIN` (the turn's, else the driver's
//! config); the project-local install that `scripts/setup.sh` makes
//! (`.tools/agents/node_modules/.bin/claude`, above the running executable only); then
//! the turn's `PATH`.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use weft_agent_process::{explicit_program, find_agent, EnvFingerprint};
use weft_kernel::driver::AgentTurnInput;

use crate::config::Config;
use crate::wire;

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
    /// Whether the folder's own settings and `.mcp.json` were loaded: trusting (or
    /// revoking) a folder takes effect at the next turn.
    pub workspace_trusted: bool,
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
            workspace_trusted: input.workspace_trusted,
        }
    }
}

/// `--setting-sources user` for a folder the user has not trusted: Claude Code then
/// reads neither the folder's `.claude/settings.json` (hooks, permission rules,
/// `enableAllProjectMcpServers`) nor its `.mcp.json` (observed with 2.1.197: a
/// SessionStart hook and an `.mcp.json` server both ran without it, neither with it).
/// An explicit `--setting-sources` among the extra arguments wins.
pub fn untrusted_args(input: &AgentTurnInput) -> Vec<String> {
    if input.workspace_trusted || has_flag(&input.extra_args, "--setting-sources") {
        Vec::new()
    } else {
        vec!["--setting-sources".into(), "user".into()]
    }
}

/// The session to open: resume one, or start one with a known id (so its session file
/// is known even if the CLI dies before saying), or fork one into a new id.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SessionArg {
    /// `--resume <id>`.
    Resume(String),
    /// `--session-id <id>`.
    New(String),
    /// `--resume <parent> --fork-session --session-id <id>` and, to stop at a turn,
    /// `--resume-session-at <uuid>`. Observed with Claude Code 2.1.197: the new file
    /// holds the parent's records up to and including the assistant record whose
    /// `uuid` is given (not its `message.id`: "No message found with message.uuid"),
    /// under the new `sessionId`; the parent's file is not touched. The flag is
    /// hidden from `--help`, documented as "use with --resume in print mode".
    Fork {
        /// The new session's id.
        id: String,
        /// The session forked.
        parent: String,
        /// The last assistant record kept (none: all).
        at: Option<String>,
    },
}

impl SessionArg {
    /// The session id the process runs.
    pub fn id(&self) -> &str {
        match self {
            SessionArg::Resume(id) | SessionArg::New(id) | SessionArg::Fork { id, .. } => id,
        }
    }

    /// The arguments that open it.
    pub fn args(&self) -> Vec<String> {
        match self {
            SessionArg::Resume(id) => vec!["--resume".into(), id.clone()],
            SessionArg::New(id) => vec!["--session-id".into(), id.clone()],
            SessionArg::Fork { id, parent, at } => {
                let mut args = vec![
                    "--resume".into(),
                    parent.clone(),
                    "--fork-session".into(),
                    "--session-id".into(),
                    id.clone(),
                ];
                if let Some(at) = at {
                    args.extend(["--resume-session-at".into(), at.clone()]);
                }
                args
            }
        }
    }

    /// How a turn of `input` opens its session, given the id to resume (`resume`: the
    /// turn's or the one the driver remembers) and whether that session's file was
    /// never written: a fork while the fork has no file of its own yet, else a resume,
    /// else a new session.
    pub fn choose(input: &AgentTurnInput, resume: Option<String>, never_saved: bool) -> Self {
        let fork = input.fork.as_ref().filter(|_| !input.fresh);
        if let Some(f) = fork {
            let own = f.session_id.clone();
            let pending = match &resume {
                None => true,
                // The fork's own id, not written yet (its first turn died early).
                Some(id) => never_saved && own.as_deref().is_none_or(|o| o == id),
            };
            if pending {
                return SessionArg::Fork {
                    id: resume
                        .or(own)
                        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string()),
                    parent: f.parent_id.clone(),
                    at: f.at.clone(),
                };
            }
        }
        match resume {
            Some(id) if never_saved => SessionArg::New(id),
            Some(id) => SessionArg::Resume(id),
            None => SessionArg::New(uuid::Uuid::new_v4().to_string()),
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
    args.extend(session.args());
    args.extend(untrusted_args(input));
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

/// The first user message's text: the prompt, with the attached files that are not
/// images named so the agent reads them (images travel as image blocks).
pub fn prompt_text(input: &AgentTurnInput) -> String {
    text_with_files(&input.prompt, &input.attachments)
}

/// `text` with the attached files that are not images named after it (a prompt's or a
/// steer's).
pub fn text_with_files(text: &str, attachments: &[PathBuf]) -> String {
    let files: Vec<String> = attachments
        .iter()
        .filter(|p| !weft_attachments::looks_like_image(p))
        .map(|p| format!("- {}", p.display()))
        .collect();
    if files.is_empty() {
        return text.to_string();
    }
    format!("{text}\n\nAttached files:\n{}", files.join("\n"))
}

/// The user message for stdin: `text`, then each attached image as a base64 image
/// block fitted to Anthropic's limits. A bare prompt stays a plain string, so a
/// `/command` line reaches the CLI exactly as typed.
pub fn prompt_message(input: &AgentTurnInput, text: &str) -> Result<Value, String> {
    message_with_images(text, &input.attachments)
}

/// The user message for stdin of `text` and the images among `attachments` (a
/// prompt's or a steer's).
pub fn message_with_images(text: &str, attachments: &[PathBuf]) -> Result<Value, String> {
    let images: Vec<&PathBuf> = attachments
        .iter()
        .filter(|p| weft_attachments::looks_like_image(p))
        .collect();
    if images.is_empty() {
        return Ok(wire::user_message(text));
    }
    let mut content = vec![json!({"type": "text", "text": text})];
    for path in images {
        let img = weft_attachments::prepare_image(path, weft_attachments::CLAUDE)
            .map_err(|e| e.to_string())?;
        content.push(json!({"type": "image", "source": {
            "type": "base64", "media_type": img.mime, "data": img.base64()}}));
    }
    Ok(wire::user_message_blocks(content))
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
        assert!(
            line.contains("--setting-sources user"),
            "an untrusted folder's own settings stay off: {line}"
        );
        let trusted = AgentTurnInput {
            workspace_trusted: true,
            ..input
        };
        let s = spec(
            Path::new("/bin/claude"),
            &trusted,
            &SessionArg::Resume("abc".into()),
            &Config::default(),
        );
        assert!(!s.args.iter().any(|a| a == "--setting-sources"));
    }

    #[test]
    fn a_fork_forks_until_its_own_file_exists() {
        let fork = weft_protocol::ForkOrigin {
            parent_key: "claude:p".into(),
            parent_id: "p".into(),
            at: Some("u1".into()),
            turns: 1,
            session_id: Some("n".into()),
        };
        let input = AgentTurnInput {
            fork: Some(fork),
            ..Default::default()
        };
        let forked = SessionArg::Fork {
            id: "n".into(),
            parent: "p".into(),
            at: Some("u1".into()),
        };
        assert_eq!(SessionArg::choose(&input, None, false), forked);
        assert_eq!(
            forked.args().join(" "),
            "--resume p --fork-session --session-id n --resume-session-at u1"
        );
        // Its first turn died before the CLI wrote the fork: fork again.
        assert_eq!(SessionArg::choose(&input, Some("n".into()), true), forked);
        assert_eq!(
            SessionArg::choose(&input, Some("n".into()), false),
            SessionArg::Resume("n".into())
        );
        // After a handover the fork point is not this agent's to use.
        let fresh = AgentTurnInput {
            fresh: true,
            ..input
        };
        assert!(matches!(
            SessionArg::choose(&fresh, None, false),
            SessionArg::New(_)
        ));
    }

    #[test]
    fn attachments_are_listed() {
        let input = AgentTurnInput {
            prompt: "look".into(),
            attachments: vec!["/a/b.png".into()],
            ..Default::default()
        };
        // An image travels as an image block, not as a path.
        assert_eq!(prompt_text(&input), "look");
        let input = AgentTurnInput {
            prompt: "look".into(),
            attachments: vec!["/a/notes.md".into()],
            ..Default::default()
        };
        assert_eq!(
            prompt_text(&input),
            "look\n\nAttached files:\n- /a/notes.md"
        );
        assert_eq!(
            prompt_message(&input, "/compact").unwrap(),
            wire::user_message("/compact")
        );
    }
}
