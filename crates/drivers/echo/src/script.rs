//! One echo turn, step by step.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde_json::json;
use tokio::sync::mpsc;
use weft_kernel::{AgentTurnInput, DriverContext, DriverResult, Steer};
use weft_protocol::{
    permission, Artifact, ArtifactKind, Choice, DriverEvent, InteractAction, Interaction,
    InteractionKind, Plan, PlanStep, Question, QuestionType, StepStatus, ToolCall, ToolKind,
    ToolStatus, Usage,
};

use crate::transcript::{self, EchoTranscript};
use crate::EchoDriver;

/// Echo's pretend context window, for the context meter.
const CONTEXT_WINDOW: u64 = 8192;
const SLOW_DELAY: Duration = Duration::from_millis(150);
const SLOW_REPEAT: usize = 8;

struct Turn<'a> {
    ctx: &'a DriverContext,
    delay: Duration,
    steer: mpsc::UnboundedReceiver<Steer>,
    steered: Vec<String>,
    plan: Plan,
}

/// The turn was stopped.
struct Stopped;

impl Turn<'_> {
    async fn pause(&mut self) -> Result<(), Stopped> {
        tokio::select! {
            _ = tokio::time::sleep(self.delay) => {}
            _ = self.ctx.cancelled() => return Err(Stopped),
        }
        while let Ok(Steer { text, attachments }) = self.steer.try_recv() {
            self.steered.push(text.clone());
            // Echo names what came with the steer, as a model that saw the files would.
            let with: Vec<String> = attachments
                .iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect();
            let with = if with.is_empty() {
                String::new()
            } else {
                format!(" with {}", with.join(", "))
            };
            self.ctx.emit(DriverEvent::Text {
                delta: format!("\n\n↪ Steered: \"{text}\"{with}. Taking that into account.\n\n"),
            });
        }
        Ok(())
    }

    async fn stream(&mut self, text: &str, reasoning: bool) -> Result<(), Stopped> {
        for piece in text.split_inclusive(' ') {
            let delta = piece.to_string();
            self.ctx.emit(if reasoning {
                DriverEvent::Reasoning { delta }
            } else {
                DriverEvent::Text { delta }
            });
            self.pause().await?;
        }
        Ok(())
    }

    fn step(&mut self, index: usize, status: StepStatus) {
        if let Some(step) = self.plan.steps.get_mut(index) {
            step.status = status;
        }
        self.ctx.emit(DriverEvent::Plan {
            plan: self.plan.clone(),
        });
    }

    fn tool(
        &self,
        id: &str,
        name: &str,
        summary: &str,
        kind: ToolKind,
        input: serde_json::Value,
    ) -> ToolCall {
        let call = ToolCall {
            id: id.into(),
            name: name.into(),
            summary: summary.into(),
            input,
            result: None,
            status: ToolStatus::Running,
            kind,
            parent_id: None,
            changes: Vec::new(),
        };
        self.ctx.emit(DriverEvent::Tool { call: call.clone() });
        call
    }

    fn finish_tool(&self, mut call: ToolCall, result: Result<String, String>) {
        (call.status, call.result) = match result {
            Ok(out) => (ToolStatus::Done, Some(out)),
            Err(err) => (ToolStatus::Failed, Some(err)),
        };
        self.ctx.emit(DriverEvent::Tool { call });
    }
}

fn list_workdir(workdir: &Path) -> Result<String, String> {
    let mut names: Vec<String> = std::fs::read_dir(workdir)
        .map_err(|e| format!("cannot list {}: {e}", workdir.display()))?
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let shown: Vec<&str> = names.iter().take(8).map(String::as_str).collect();
    Ok(format!("{} entries: {}", names.len(), shown.join(", ")))
}

fn words(text: &str) -> u64 {
    text.split_whitespace().count() as u64
}

fn permission_interaction(path: &Path) -> Interaction {
    Interaction {
        verdict: None,
        prompt_id: String::new(),
        kind: InteractionKind::Permission,
        title: "Echo wants to write a note into the workspace".into(),
        detail: Some(format!("write_note would create {}", path.display())),
        tool_name: Some("write_note".into()),
        tool_input: Some(json!({ "path": path.display().to_string() })),
        questions: vec![Question {
            id: "decision".into(),
            text: "Allow write_note?".into(),
            kind: QuestionType::Select,
            choices: vec![
                Choice {
                    label: "Allow once".into(),
                    value: permission::ALLOW.into(),
                },
                Choice {
                    label: "Allow for this session".into(),
                    value: permission::ALLOW_SESSION.into(),
                },
                Choice {
                    label: "Deny".into(),
                    value: permission::DENY.into(),
                },
            ],
            multiple: false,
            free_text: false,
        }],
    }
}

fn question_interaction() -> Interaction {
    Interaction {
        verdict: None,
        prompt_id: String::new(),
        kind: InteractionKind::UserInput,
        title: "Echo has a question".into(),
        detail: None,
        tool_name: None,
        tool_input: None,
        questions: vec![Question {
            id: "color".into(),
            text: "Which color should the reply be?".into(),
            kind: QuestionType::Select,
            choices: ["red", "green", "blue"]
                .map(|c| Choice {
                    label: c.into(),
                    value: c.into(),
                })
                .to_vec(),
            multiple: false,
            free_text: false,
        }],
    }
}

fn survey_interaction() -> Interaction {
    let choices = |values: &[&str]| -> Vec<Choice> {
        values
            .iter()
            .map(|c| Choice {
                label: c.to_string(),
                value: c.to_string(),
            })
            .collect()
    };
    Interaction {
        verdict: None,
        prompt_id: String::new(),
        kind: InteractionKind::UserInput,
        title: "Echo asks 2 questions".into(),
        detail: None,
        tool_name: None,
        tool_input: None,
        questions: vec![
            Question {
                id: "toppings".into(),
                text: "Which toppings?".into(),
                kind: QuestionType::Select,
                choices: choices(&["cheese", "olives", "basil"]),
                multiple: true,
                free_text: true,
            },
            Question {
                id: "size".into(),
                text: "Which size?".into(),
                kind: QuestionType::Select,
                choices: choices(&["small", "large"]),
                multiple: false,
                free_text: true,
            },
        ],
    }
}

/// What the survey's answer was, one `id=[given, …]` a question.
fn survey_reply(interaction: &Interaction, answer: &weft_protocol::InteractionResponse) -> String {
    match answer.action {
        InteractAction::Select | InteractAction::Text => {
            let parts: Vec<String> = interaction
                .questions
                .iter()
                .map(|q| format!("{}=[{}]", q.id, answer.given(&q.id).all().join(", ")))
                .collect();
            format!(" You answered {}.", parts.join(" "))
        }
        InteractAction::Skip => " You skipped my questions.".to_string(),
        InteractAction::Cancel => " My questions were cancelled.".to_string(),
    }
}

pub(crate) async fn run(
    driver: &EchoDriver,
    input: AgentTurnInput,
    ctx: DriverContext,
) -> DriverResult {
    let session_id = input
        .session_id
        .clone()
        .unwrap_or_else(|| uuid::Uuid::new_v4().to_string());
    ctx.emit(DriverEvent::Session {
        session_id: session_id.clone(),
        model: Some(input.model.clone().unwrap_or_else(|| "echo-1".into())),
    });
    // `env:NAME` shows the variable as this turn's agent process would see it (the
    // environment of the client that sent the turn, not the daemon's own).
    for word in input.prompt.split_whitespace() {
        if let Some(name) = word.strip_prefix("env:") {
            let text = match input.var(name) {
                Some(value) => format!("environment: {name}={value}"),
                None => format!("environment: {name} is not set"),
            };
            ctx.emit(DriverEvent::Notice { text });
        }
    }
    let prompt = input.prompt.to_lowercase();
    let slow = prompt.contains("slow");
    let mut turn = Turn {
        ctx: &ctx,
        delay: if slow {
            SLOW_DELAY
        } else {
            driver.delay_for(&input)
        },
        steer: ctx.register_steer(),
        steered: Vec::new(),
        plan: Plan {
            explanation: Some("How echo answers".into()),
            steps: [
                "Think about the prompt",
                "Look around the workspace",
                "Write the reply",
            ]
            .map(|text| PlanStep {
                text: text.into(),
                status: StepStatus::Pending,
            })
            .to_vec(),
        },
    };
    match run_steps(driver, &input, &session_id, &prompt, slow, &mut turn).await {
        Ok(reply) => {
            let saved = transcript::append(
                &input.state_dir,
                &session_id,
                &EchoTranscript {
                    prompt: input.prompt.clone(),
                    reply,
                    workdir: input.workdir.display().to_string(),
                },
            );
            if let Err(e) = saved {
                tracing::warn!("echo could not save its transcript: {e}");
            }
            if prompt.contains("crash") {
                return DriverResult {
                    session_id: Some(session_id),
                    ..DriverResult::failed("echo crashed on purpose (the prompt said \"crash\")")
                };
            }
            DriverResult {
                ok: true,
                session_id: Some(session_id),
                ..Default::default()
            }
        }
        Err(Stopped) => DriverResult {
            ok: false,
            session_id: Some(session_id),
            ..Default::default()
        },
    }
}

async fn run_steps(
    driver: &EchoDriver,
    input: &AgentTurnInput,
    session_id: &str,
    prompt: &str,
    slow: bool,
    turn: &mut Turn<'_>,
) -> Result<String, Stopped> {
    let history = transcript::load(&input.state_dir, session_id);
    let turn_no = history.len() + 1;

    turn.step(0, StepStatus::InProgress);
    let thought = format!(
        "The user wrote {} words. This is turn {turn_no} of echo session {session_id}. ",
        words(&input.prompt)
    );
    turn.stream(&thought, true).await?;
    turn.step(0, StepStatus::Completed);

    turn.step(1, StepStatus::InProgress);
    let call = turn.tool(
        "list-1",
        "list_dir",
        "List the workspace",
        ToolKind::Read,
        json!({ "path": input.workdir }),
    );
    turn.pause().await?;
    turn.finish_tool(call, list_workdir(&input.workdir));
    let missing = input.workdir.join("ECHO_MISSING.txt");
    let call = turn.tool(
        "read-1",
        "read_file",
        "Read ECHO_MISSING.txt",
        ToolKind::Read,
        json!({ "path": missing }),
    );
    turn.pause().await?;
    let read = std::fs::read_to_string(&missing)
        .map_err(|e| format!("cannot read {}: {e}", missing.display()));
    turn.finish_tool(call, read.map(|s| format!("{} bytes", s.len())));

    let mut extra = String::new();
    if prompt.contains("permission") {
        let path = input.workdir.join(".weft").join("echo-note.md");
        let text = format!("Echo was here: {}\n", input.prompt.trim());
        extra.push_str(&write_note(driver, input, turn, path, text).await?);
    }
    if let Some((rel, text)) = write_file_request(&input.prompt) {
        let path = input.workdir.join(rel);
        extra.push_str(&write_note(driver, input, turn, path, format!("{text}\n")).await?);
    }
    if prompt.split_whitespace().any(|w| w == "ports") {
        let var = |k: &str| {
            input
                .env
                .iter()
                .rev()
                .find(|(n, _)| n == k)
                .map(|(_, v)| v.clone())
        };
        extra.push_str(&match (var("WEFT_PORT"), var("WEFT_PORT_RANGE")) {
            (Some(p), Some(r)) => format!(" My WEFT_PORT is {p} (WEFT_PORT_RANGE {r})."),
            _ => " I have no WEFT_PORT.".to_string(),
        });
    }
    if let Some(command) = shell_request(input) {
        extra.push_str(&run_shell(input, turn, command).await?);
    }
    if prompt.contains("question") {
        let answer = turn.ctx.ask_user(question_interaction()).await;
        if turn.ctx.is_cancelled() {
            return Err(Stopped);
        }
        extra.push_str(&match (answer.action, answer.answer_for("color")) {
            (InteractAction::Select | InteractAction::Text, Some(color)) => {
                format!(" You picked {color}.")
            }
            (InteractAction::Skip, _) => " You skipped my question.".to_string(),
            _ => " My question was cancelled.".to_string(),
        });
    }
    if prompt.contains("survey") {
        let asked = survey_interaction();
        let answer = turn.ctx.ask_user(asked.clone()).await;
        if turn.ctx.is_cancelled() {
            return Err(Stopped);
        }
        extra.push_str(&survey_reply(&asked, &answer));
    }
    turn.step(1, StepStatus::Completed);

    turn.step(2, StepStatus::InProgress);
    let mut reply = format!("Echo: {}", input.prompt.trim());
    if let Some(first) = history.first() {
        reply.push_str(&format!(
            " (turn {turn_no}; you first said \"{}\")",
            first.prompt.trim()
        ));
    }
    reply.push_str(&extra);
    let body = if slow {
        [reply.as_str(); SLOW_REPEAT].join(" ")
    } else {
        reply.clone()
    };
    turn.stream(&body, false).await?;
    turn.step(2, StepStatus::Completed);

    let artifact_dir = input.state_dir.join("echo").join("replies");
    let artifact_path = artifact_dir.join(format!("{session_id}-{turn_no}.md"));
    let written = std::fs::create_dir_all(&artifact_dir).and_then(|_| {
        use std::io::Write as _;
        std::os::unix::fs::OpenOptionsExt::mode(
            std::fs::OpenOptions::new()
                .create(true)
                .write(true)
                .truncate(true),
            0o600,
        )
        .open(&artifact_path)?
        .write_all(format!("# Echo turn {turn_no}\n\n{body}\n").as_bytes())
    });
    match written {
        Ok(()) => turn.ctx.emit(DriverEvent::Artifact {
            artifact: Artifact {
                url: None,
                path: Some(artifact_path.display().to_string()),
                file_name: format!("{session_id}-{turn_no}.md"),
                mime: Some("text/markdown".into()),
                kind: ArtifactKind::Document,
                caption: Some("The reply, as a file".into()),
            },
        }),
        Err(e) => tracing::warn!("echo could not write its artifact: {e}"),
    }

    let used: u64 = history
        .iter()
        .map(|t| words(&t.prompt) + words(&t.reply))
        .sum::<u64>()
        + words(&input.prompt);
    turn.ctx.emit(DriverEvent::Usage {
        usage: Usage {
            input_tokens: Some(used),
            output_tokens: Some(words(&body)),
            cached_input_tokens: Some(used - words(&input.prompt)),
            context_used_tokens: Some(used + words(&body)),
            context_percent: Some((used + words(&body)) as f64 * 100.0 / CONTEXT_WINDOW as f64),
            cost_usd: Some(0.0),
            provider_name: Some("weft".into()),
        },
    });
    Ok(body)
}

/// `write-file PATH TEXT…` on a line of its own: a file for echo to write (a relative
/// path inside the workspace), so tests can have a session change files as an agent
/// would (through the same permission as the note).
fn write_file_request(prompt: &str) -> Option<(PathBuf, String)> {
    prompt.lines().find_map(|line| {
        let rest = line.trim().strip_prefix("write-file ")?;
        let (path, text) = rest.split_once(' ').unwrap_or((rest, ""));
        let path = PathBuf::from(path);
        let inside = !path.as_os_str().is_empty()
            && path
                .components()
                .all(|c| matches!(c, std::path::Component::Normal(_)));
        inside.then(|| (path, text.to_string()))
    })
}

/// The permission-gated tool: asks (unless allowed for the session), then writes
/// `text` to `path`.
async fn write_note(
    driver: &EchoDriver,
    input: &AgentTurnInput,
    turn: &mut Turn<'_>,
    path: PathBuf,
    text: String,
) -> Result<String, Stopped> {
    let rel = path
        .strip_prefix(&input.workdir)
        .unwrap_or(&path)
        .display()
        .to_string();
    let call = turn.tool(
        "note-1",
        "write_note",
        &format!("Write {rel}"),
        ToolKind::Write,
        json!({ "path": path }),
    );
    let session_allowed = driver.allowed_sessions.lock().contains(&input.session_key);
    let decision = if session_allowed {
        permission::ALLOW.to_string()
    } else {
        let answer = turn.ctx.ask_user(permission_interaction(&path)).await;
        if turn.ctx.is_cancelled() {
            turn.finish_tool(call, Err("cancelled: the turn was stopped".into()));
            return Err(Stopped);
        }
        match answer.action {
            InteractAction::Select | InteractAction::Text => answer.value.unwrap_or_default(),
            InteractAction::Skip | InteractAction::Cancel => "cancelled".into(),
        }
    };
    if decision == permission::ALLOW_SESSION {
        driver
            .allowed_sessions
            .lock()
            .insert(input.session_key.clone());
    }
    if decision == permission::ALLOW || decision == permission::ALLOW_SESSION {
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, &text));
        let reply = match &written {
            Ok(()) => " I wrote the note.".to_string(),
            Err(e) => format!(" I could not write the note: {e}."),
        };
        turn.finish_tool(
            call,
            written
                .map(|_| "note written".to_string())
                .map_err(|e| e.to_string()),
        );
        Ok(reply)
    } else if decision == permission::DENY {
        turn.finish_tool(call, Err("denied by the user".into()));
        Ok(" You denied the note, so I did not write it.".into())
    } else {
        turn.finish_tool(call, Err("the permission request was cancelled".into()));
        Ok(" The permission request was cancelled, so I did not write the note.".into())
    }
}

/// `shell: COMMAND` as the prompt's first line, when the environment the turn runs with
/// has `WEFT_ECHO_SHELL=1`: a command for echo to run in the workspace, as an agent's
/// shell tool would, so tests can change files behind every edit tool's back (what a
/// turn's checkpoints must still see). Opt-in by the environment, never by the prompt
/// alone: a pasted file or a quoted review comment must not run a command.
fn shell_request(input: &AgentTurnInput) -> Option<String> {
    if input.var("WEFT_ECHO_SHELL").as_deref() != Some("1") {
        return None;
    }
    let line = input.prompt.lines().next()?.trim();
    line.strip_prefix("shell: ").map(str::to_owned)
}

/// Runs `command` with `/bin/sh -c` in the workspace, as a shell tool call.
async fn run_shell(
    input: &AgentTurnInput,
    turn: &mut Turn<'_>,
    command: String,
) -> Result<String, Stopped> {
    let call = turn.tool(
        "shell-1",
        "shell",
        &format!("Run {command}"),
        ToolKind::Shell,
        json!({ "command": command }),
    );
    let workdir = input.workdir.clone();
    let ran = tokio::task::spawn_blocking(move || {
        std::process::Command::new("/bin/sh")
            .arg("-c")
            .arg(&command)
            .current_dir(&workdir)
            .stdin(std::process::Stdio::null())
            .output()
    })
    .await;
    let result = match ran {
        Ok(Ok(out)) if out.status.success() => {
            Ok(String::from_utf8_lossy(&out.stdout).into_owned())
        }
        Ok(Ok(out)) => Err(format!(
            "exited with {}: {}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        )),
        Ok(Err(e)) => Err(format!("cannot run /bin/sh: {e}")),
        Err(e) => Err(format!("the command's thread failed: {e}")),
    };
    let said = match &result {
        Ok(_) => " I ran your command.".to_string(),
        Err(e) => format!(" Your command failed: {e}."),
    };
    turn.finish_tool(call, result);
    if turn.ctx.is_cancelled() {
        return Err(Stopped);
    }
    Ok(said)
}
