//! Codex's slash commands: the built-ins of its terminal UI that have an app-server
//! equivalent, offered in the `/` menu ([`slash_commands`]) and taken when a prompt is a
//! bare `/name args` line ([`parse`]):
//! - `/compact` is `thread/compact/start` and `/review [instructions]` is
//!   `review/start` (the uncommitted changes, or what the instructions ask): codex runs
//!   each as a turn of its own, read like any other ([`crate::turn::run_method`]);
//! - `/status` is answered by Weft from what the session knows (thread, model,
//!   settings, context use, MCP servers);
//! - `/model` and `/approvals` say what the session runs and how Weft changes it (the
//!   model is a session setting chosen in the composer or with `--model`; codex's
//!   requests are answered by Weft's permission rules): Weft keeps one source of truth
//!   for a session's settings, so these do not change them behind its back;
//! - any other built-in of codex's terminal UI (`/init`, `/diff`, `/new`, …) has no
//!   app-server equivalent: the turn fails saying so, rather than the line going to the
//!   model as text. A line that names no codex command (`/etc/hosts is empty?`) is a
//!   prompt like any other.

use serde_json::{json, Value};
use weft_kernel::driver::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{CommandSource, DriverEvent, SlashCommand};

use crate::config::Config;
use crate::session::CodexSession;
use crate::turn::Outcome;

/// The commands Weft takes for codex: name, description, argument hint.
const BUILTIN: &[(&str, &str, Option<&str>)] = &[
    (
        "compact",
        "Summarize the conversation to free up context",
        None,
    ),
    (
        "review",
        "Review the uncommitted changes (or what you ask)",
        Some("[instructions]"),
    ),
    (
        "status",
        "Show the session's thread, model, settings and context use",
        None,
    ),
    (
        "model",
        "Show the session's model and how to change it",
        Some("[model]"),
    ),
    (
        "approvals",
        "Show how codex's requests are approved",
        Some("[mode]"),
    ),
];

/// Built-ins of codex's terminal UI with no app-server equivalent (codex 0.171.0).
const TUI_ONLY: &[&str] = &[
    "init",
    "new",
    "resume",
    "fork",
    "diff",
    "mention",
    "mcp",
    "logout",
    "quit",
    "exit",
    "undo",
    "feedback",
    "rollout",
    "ps",
    "personality",
    "skills",
    "agent",
    "statusline",
    "theme",
    "clear",
    "copy",
    "rename",
    "apps",
    "plugins",
    "experimental",
    "permissions",
    "debug-config",
    "plan",
    "collab",
];

/// What a `/` line asks of codex.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/compact`.
    Compact,
    /// `/review [instructions]`.
    Review(Option<String>),
    /// `/status`.
    Status,
    /// `/model [name]`.
    Model(Option<String>),
    /// `/approvals [mode]`.
    Approvals(Option<String>),
    /// A built-in of codex's terminal UI that the app-server cannot run.
    TuiOnly(String),
}

/// The commands the `/` menu offers for codex.
pub fn slash_commands() -> Vec<SlashCommand> {
    BUILTIN
        .iter()
        .map(|(name, description, hint)| SlashCommand {
            name: name.to_string(),
            description: description.to_string(),
            argument_hint: hint.map(String::from),
            source: CommandSource::Builtin,
        })
        .collect()
}

/// The command `prompt` is, when it is one line `/name args` naming a codex command.
pub fn parse(prompt: &str) -> Option<Command> {
    let line = prompt.trim();
    let rest = line.strip_prefix('/')?;
    if line.contains('\n') {
        return None;
    }
    let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
    let args = Some(args.trim().to_string()).filter(|a| !a.is_empty());
    Some(match name {
        "compact" => Command::Compact,
        "review" => Command::Review(args),
        "status" => Command::Status,
        "model" => Command::Model(args),
        "approvals" => Command::Approvals(args),
        n if TUI_ONLY.contains(&n) => Command::TuiOnly(n.to_string()),
        _ => return None,
    })
}

fn answered(s: &CodexSession, ctx: &DriverContext, text: String) -> Outcome {
    ctx.emit(DriverEvent::Text { delta: text });
    Outcome {
        result: DriverResult {
            ok: true,
            session_id: Some(s.thread_id.clone()),
            ..Default::default()
        },
        keep: true,
    }
}

/// Runs `cmd` on the session's thread.
pub async fn run(
    cmd: Command,
    s: &mut CodexSession,
    input: &AgentTurnInput,
    ctx: &DriverContext,
    cfg: &Config,
) -> Outcome {
    let model = input
        .model
        .clone()
        .or_else(|| s.model.clone())
        .unwrap_or_else(|| "codex's default".into());
    match cmd {
        Command::Compact => {
            let params = json!({"threadId": s.thread_id});
            crate::turn::run_method(s, input, ctx, cfg, "thread/compact/start", params).await
        }
        Command::Review(instructions) => {
            let target = match instructions {
                Some(i) => json!({"type": "custom", "instructions": i}),
                None => json!({"type": "uncommittedChanges"}),
            };
            let params = json!({"threadId": s.thread_id, "target": target, "delivery": "inline"});
            crate::turn::run_method(s, input, ctx, cfg, "review/start", params).await
        }
        Command::Status => {
            let text = status(s, input, &model);
            answered(s, ctx, text)
        }
        Command::Model(asked) => {
            let mut text = format!("This session runs **{model}**.");
            if let Some(asked) = asked.filter(|a| *a != model) {
                text.push_str(&format!(
                    " Weft keeps the model as the session's setting, so `/model {asked}` \
                     did not change it: choose `{asked}` in the composer's model menu (or \
                     `weft run --model {asked}`) and the next turn runs it."
                ));
            } else {
                text.push_str(
                    " To change it, choose another in the composer's model menu (or \
                     `weft run --model NAME`); the next turn runs it.",
                );
            }
            ctx.emit(DriverEvent::Notice {
                text: "/model: the session's model is changed in Weft, not by a command".into(),
            });
            answered(s, ctx, text)
        }
        Command::Approvals(asked) => {
            let mut text = format!(
                "codex asks before it acts under its `{}` policy (sandbox `{}`), and Weft \
                 answers each request with its permission rules: a dialog, `weft answer`, \
                 or `--yes` / your rules.",
                s.knobs.approval_policy, s.knobs.sandbox
            );
            if let Some(asked) = asked {
                text.push_str(&format!(
                    " `/approvals {asked}` did not change it: Weft's rules decide (see \
                     `weft rules`), and codex's own policy is the setting \
                     `WEFT_CODEX_APPROVAL_POLICY` (`untrusted`, `on-request`, `never`)."
                ));
            }
            ctx.emit(DriverEvent::Notice {
                text: "/approvals: approvals are Weft's permission rules".into(),
            });
            answered(s, ctx, text)
        }
        Command::TuiOnly(name) => Outcome {
            result: DriverResult {
                ok: false,
                session_id: Some(s.thread_id.clone()),
                error: Some(format!(
                    "`/{name}` is a command of codex's own terminal UI that its app-server \
                     (which Weft drives) cannot run; open the session in codex's terminal to \
                     use it. Weft takes /compact, /review, /status, /model and /approvals."
                )),
                ..Default::default()
            },
            keep: true,
        },
    }
}

/// `/status`: what the session knows of itself.
fn status(s: &CodexSession, input: &AgentTurnInput, model: &str) -> String {
    let mut lines = vec![
        format!("- **thread**: `{}`", s.thread_id),
        format!("- **model**: {model}"),
    ];
    if let Some(e) = &input.effort {
        lines.push(format!("- **reasoning effort**: {e}"));
    }
    lines.push(format!("- **folder**: `{}`", input.workdir.display()));
    lines.push(format!(
        "- **approval policy**: {} · **sandbox**: {}",
        s.knobs.approval_policy, s.knobs.sandbox
    ));
    if let Some(mode) = &s.knobs.collaboration_mode {
        lines.push(format!("- **collaboration mode**: {mode}"));
    }
    if let Some(url) = &s.knobs.base_url {
        lines.push(format!("- **endpoint**: {url}"));
    }
    let mcp: Vec<String> = s
        .norm
        .mcp_servers()
        .iter()
        .map(|m| {
            let state = serde_json::to_value(m.status)
                .ok()
                .and_then(|v: Value| v.as_str().map(String::from))
                .unwrap_or_default();
            format!("{} ({state})", m.name)
        })
        .collect();
    if !mcp.is_empty() {
        lines.push(format!("- **MCP servers**: {}", mcp.join(", ")));
    }
    if let Some(used) = s.norm.context_used() {
        lines.push(format!("- **context**: {used}"));
    }
    if let Some(path) = &s.rollout {
        lines.push(format!("- **rollout**: `{path}`"));
    }
    format!("codex session status\n\n{}", lines.join("\n"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_bare_line_naming_a_codex_command_is_one() {
        assert_eq!(parse("/compact"), Some(Command::Compact));
        assert_eq!(
            parse(" /review  look at the tests "),
            Some(Command::Review(Some("look at the tests".into())))
        );
        assert_eq!(parse("/model"), Some(Command::Model(None)));
        assert_eq!(parse("/init"), Some(Command::TuiOnly("init".into())));
        assert_eq!(parse("/etc/hosts is empty?"), None);
        assert_eq!(parse("/compact\nand more"), None);
        assert_eq!(parse("compact"), None);
    }
}
