//! Session commands the native agent answers itself, without the model: `/plan [task]`
//! (plan mode on), `/undo` (the files of the last turn that changed any, restored);
//! and leaving plan mode, a confirmation asked once the model has presented its plan.

use std::path::Path;
use std::sync::atomic::Ordering;

use weft_kernel::{DriverContext, DriverResult};
use weft_protocol::{
    Choice, DriverEvent, InteractAction, Interaction, InteractionKind, Plan, PlanStep, Question,
    QuestionType, StepStatus,
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
}

/// The command `prompt` starts with, if any.
pub fn parse(prompt: &str) -> Option<Command> {
    let t = prompt.trim_start();
    let (word, rest) = t.split_once(char::is_whitespace).unwrap_or((t, ""));
    match word {
        "/undo" if rest.trim().is_empty() => Some(Command::Undo),
        "/plan" => Some(Command::Plan(rest.trim().to_string())),
        _ => None,
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
