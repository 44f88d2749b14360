//! Session commands the native agent answers itself: `/plan [task]` (plan mode on),
//! `/undo` (the files of the last turn that changed any, restored), `/compact` (the
//! conversation so far summarized for the model); and leaving plan mode, a
//! confirmation asked once the model has presented its plan. They are reported at
//! the start of every turn ([`list`]) so a composer offers them on `/`; any other
//! `/name` prompt is answered with what the agent takes, never sent to the model as
//! text.

use std::path::Path;
use std::sync::atomic::Ordering;

use weft_kernel::{DriverContext, DriverResult};
use weft_protocol::{
    Choice, CommandSource, DriverEvent, InteractAction, Interaction, InteractionKind, Plan,
    PlanStep, Question, QuestionType, SlashCommand, StepStatus,
};

use crate::conversation::{Message, Origin};
use crate::store::{self, Record};
use crate::turn::Turn;

/// A command in a prompt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Command {
    /// `/undo`.
    Undo,
    /// `/plan` with the rest of the prompt (may be empty).
    Plan(String),
    /// `/compact`.
    Compact,
    /// `/name` (with whatever follows) that the agent does not take.
    Unknown(String),
}

/// The commands the agent takes, as a composer offers them.
pub fn list() -> Vec<SlashCommand> {
    let cmd = |name: &str, description: &str, hint: Option<&str>| SlashCommand {
        name: name.into(),
        description: description.into(),
        argument_hint: hint.map(String::from),
        source: CommandSource::Builtin,
    };
    vec![
        cmd(
            "plan",
            "Plan mode: look and plan, change nothing until you approve the plan",
            Some("[task]"),
        ),
        cmd("undo", "Restore the files the last turn changed", None),
        cmd(
            "compact",
            "Summarize the conversation so far for the model (the transcript stays)",
            None,
        ),
    ]
}

/// The command `prompt` starts with, if any. A first word that is `/` and a name
/// (letters, digits, `-`, `_`, `:`) is a command; `/etc/hosts …` is not.
pub fn parse(prompt: &str) -> Option<Command> {
    let t = prompt.trim_start();
    let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    let name = word.strip_prefix('/')?;
    match name {
        "undo" if rest.trim().is_empty() => Some(Command::Undo),
        "plan" => Some(Command::Plan(rest.trim().to_string())),
        "compact" if rest.trim().is_empty() => Some(Command::Compact),
        _ if !name.is_empty()
            && name
                .chars()
                .all(|c| c.is_alphanumeric() || matches!(c, '-' | '_' | ':')) =>
        {
            Some(Command::Unknown(name.to_string()))
        }
        _ => None,
    }
}

/// The answer to a command the agent does not take (or one given arguments it does
/// not take): what it takes instead. The prompt is not sent to the model.
pub fn unknown(ctx: &DriverContext, id: &str, name: &str) -> DriverResult {
    let takes: Vec<String> = list()
        .iter()
        .map(|c| match &c.argument_hint {
            Some(h) => format!("- /{} {h}: {}", c.name, c.description),
            None => format!("- /{}: {}", c.name, c.description),
        })
        .collect();
    let first = if list().iter().any(|c| c.name == name) {
        format!("/{name} takes no arguments, so nothing was sent to the model.")
    } else {
        format!("/{name} is not a command the Weft agent takes, so nothing was sent to the model.")
    };
    let text = format!(
        "{first} It takes:\n{}\nTo send text that starts with a slash to the model, put a word before it.",
        takes.join("\n")
    );
    ctx.emit(DriverEvent::Text { delta: text });
    DriverResult {
        ok: true,
        session_id: Some(id.into()),
        ..Default::default()
    }
}

/// Records the session's pack and plan mode.
pub fn save_meta(home: &Path, id: &str, pack: &str, plan_mode: bool) -> Result<(), String> {
    store::append(
        home,
        id,
        &[Record::Meta {
            pack: pack.into(),
            plan_mode,
        }],
    )
    .map_err(|e| format!("cannot save the session: {e}"))
}

/// The user's `/compact`: the whole conversation so far becomes one summary for the
/// model (the kernel's transcript keeps every turn).
pub async fn compact(
    ctx: &DriverContext,
    endpoint: &crate::config::Endpoint,
    home: &Path,
    id: &str,
    mut messages: Vec<Message>,
) -> DriverResult {
    let before = messages.len();
    ctx.emit(DriverEvent::Activity {
        text: "compacting the conversation".into(),
    });
    let client = endpoint.client();
    let done = crate::compact::compact_all(
        &mut messages,
        client.as_ref(),
        &endpoint.model,
        &ctx.cancel_token(),
    )
    .await;
    ctx.emit(DriverEvent::Activity {
        text: String::new(),
    });
    let (ok, text) = match done {
        Ok(false) => (true, "Nothing to compact yet: the conversation is empty.".into()),
        Ok(true) => match store::append(home, id, &[Record::Reset { messages }]) {
            Ok(()) => (
                true,
                format!(
                    "Compacted: {before} earlier messages were summarized into one for the model; the whole transcript stays here."
                ),
            ),
            Err(e) => (false, format!("cannot save the compacted conversation: {e}")),
        },
        Err(e) => (false, format!("compaction failed: {e}")),
    };
    ctx.emit(DriverEvent::Text {
        delta: text.clone(),
    });
    DriverResult {
        ok,
        session_id: Some(id.into()),
        error: (!ok).then_some(text),
        text: None,
    }
}

/// Restores the files the last turn that changed any changed, as they were before it.
pub fn undo(ctx: &DriverContext, home: &Path, id: &str, workdir: &Path) -> DriverResult {
    let done = |ok: bool, text: String| {
        ctx.emit(DriverEvent::Text {
            delta: text.clone(),
        });
        DriverResult {
            ok,
            session_id: Some(id.into()),
            error: (!ok).then_some(text),
            text: None,
        }
    };
    let loaded = store::load(home, id);
    let Some((task, files)) = loaded.undo.filter(|(_, f)| !f.is_empty()) else {
        return done(
            true,
            "Nothing to undo: no turn of this session changed a file since the last undo.".into(),
        );
    };
    let mut restored = Vec::new();
    let mut problems = Vec::new();
    // Restored beneath the workspace's root, as the tools wrote them: a file replaced
    // by a link out of the workspace since is not followed.
    let root = workdir
        .canonicalize()
        .unwrap_or_else(|_| workdir.to_path_buf());
    for (path, before) in &files {
        let shown = path
            .strip_prefix(workdir)
            .unwrap_or(path)
            .display()
            .to_string();
        let r = match crate::tools::beneath::relative(&root, path) {
            None => Err(crate::tools::beneath::Error::Outside),
            Some(rel) => match before {
                Some(bytes) => crate::tools::beneath::write(&root, &rel, bytes),
                None => crate::tools::beneath::remove(&root, &rel),
            },
        };
        match r {
            Ok(()) => restored.push(match before {
                Some(_) => format!("- {shown} restored"),
                None => format!("- {shown} removed (the turn made it)"),
            }),
            Err(e) => problems.push(format!("- {shown}: {e}")),
        }
    }
    // The undo is spent: a second /undo must not write the same files again.
    let _ = store::append(
        home,
        id,
        &[Record::Undo {
            task: task.clone(),
            files: Vec::new(),
        }],
    );
    let note = Message::user(format!(
        "[The user undid the file changes of an earlier turn:\n{}]",
        restored.join("\n")
    ))
    .with_origin(Origin::Normal);
    let _ = store::append(home, id, &[Record::Msg { m: note }]);
    if problems.is_empty() {
        done(
            true,
            format!("Undid the last turn's changes:\n{}", restored.join("\n")),
        )
    } else {
        done(
            false,
            format!(
                "Undo was partial.\n{}\nCould not restore:\n{}",
                restored.join("\n"),
                problems.join("\n")
            ),
        )
    }
}

/// Steps of a plan written as text: numbered or bulleted lines.
fn plan_from_text(text: &str) -> Vec<PlanStep> {
    text.lines()
        .map(str::trim)
        .filter_map(|l| {
            let stripped = l
                .trim_start_matches(|c: char| c.is_ascii_digit())
                .trim_start_matches(['.', ')']);
            let item = if stripped.len() < l.len() && stripped.starts_with(' ') {
                Some(stripped)
            } else {
                l.strip_prefix("- ").or_else(|| l.strip_prefix("* "))
            };
            item.map(|s| PlanStep {
                text: s.trim().to_string(),
                status: StepStatus::Pending,
            })
        })
        .filter(|s| !s.text.is_empty())
        .collect()
}

/// The model answered in plan mode: show its plan and ask whether to leave plan mode.
/// Some(message to go on with) when the user approves; None to end the turn.
pub(crate) async fn leave_plan_mode(turn: &Turn<'_>, ctx: &DriverContext) -> Option<Message> {
    let text = turn.last_text();
    if !turn.planned() {
        let steps = plan_from_text(&text);
        if !steps.is_empty() {
            ctx.emit(DriverEvent::Plan {
                plan: Plan {
                    explanation: None,
                    steps,
                },
            });
        }
    }
    let answer = ctx
        .ask_user(Interaction {
            verdict: None,
            prompt_id: String::new(),
            kind: InteractionKind::Confirmation,
            title: "Leave plan mode and carry out the plan?".into(),
            detail: Some(text.chars().take(4000).collect()),
            tool_name: None,
            tool_input: None,
            questions: vec![Question {
                id: "plan".into(),
                text: "Carry out the plan?".into(),
                kind: QuestionType::Select,
                choices: vec![
                    Choice {
                        label: "Yes, leave plan mode and do it".into(),
                        value: "leave".into(),
                    },
                    Choice {
                        label: "No, stay in plan mode".into(),
                        value: "stay".into(),
                    },
                ],
                multiple: false,
                free_text: false,
            }],
        })
        .await;
    let value = answer.picked();
    if answer.action != InteractAction::Select || value != Some("leave") {
        ctx.emit(DriverEvent::Notice {
            text: "plan mode stays on".into(),
        });
        return None;
    }
    let setup = turn.setup();
    turn.flags().plan_mode.store(false, Ordering::Relaxed);
    if let Err(e) = save_meta(&setup.home, &setup.session_id, &setup.pack_name, false) {
        tracing::warn!("{e}");
    }
    ctx.emit(DriverEvent::Notice {
        text: "plan mode is off: the user approved the plan".into(),
    });
    Some(
        Message::user("Plan mode is off: the user approved your plan. Carry it out now.")
            .with_origin(Origin::Normal),
    )
}
