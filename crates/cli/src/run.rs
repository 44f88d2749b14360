//! `weft run`: one turn, watched to its end.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use serde_json::json;
use tokio::sync::broadcast::error::RecvError;
use weft_kernel::{Loom, LoomIO};
use weft_protocol::{
    apply_in_place, diff, InteractRequest, InteractionKind, InteractionResponse, Phase,
    PromptRequest, UniversalSnapshot,
};

use crate::ask;

#[derive(Args)]
pub(crate) struct RunArgs {
    /// Agent for a new session (default: echo).
    #[arg(long)]
    agent: Option<String>,
    /// Folder the agent works in (default: the current folder).
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// Model to ask for.
    #[arg(long)]
    model: Option<String>,
    /// Reasoning effort to ask for.
    #[arg(long)]
    effort: Option<String>,
    /// Continue this session (`agent:id`); the agent resumes its conversation.
    #[arg(long)]
    session: Option<String>,
    /// Allow permission requests when nobody is at a terminal to answer them.
    #[arg(long)]
    yes: bool,
    /// Print one JSON object {sessionKey, taskId, snapshot} when the turn ends.
    #[arg(long, conflicts_with = "stream")]
    json: bool,
    /// Print one JSON line {sessionKey, seq, patch} per patch.
    #[arg(long)]
    stream: bool,
    /// What to ask.
    #[arg(required = true)]
    prompt: Vec<String>,
}

enum Output {
    Human,
    Json,
    Stream,
}

/// What the human output has already shown.
#[derive(Default)]
struct Shown {
    text_len: usize,
    activity: HashSet<String>,
    notices: usize,
    asked: HashSet<String>,
}

pub(crate) async fn run(loom: &Arc<Loom>, args: RunArgs) -> ExitCode {
    let output = match (args.json, args.stream) {
        (true, _) => Output::Json,
        (_, true) => Output::Stream,
        _ => Output::Human,
    };
    let interactive = std::io::stdin().is_terminal();
    // Subscribe before prompting so no patch of a new session is missed.
    let mut patches = loom.subscribe_all();
    let request = PromptRequest {
        prompt: args.prompt.join(" "),
        agent: args.agent,
        session_key: args.session.clone(),
        workdir: args.workdir.map(|p| p.to_string_lossy().into_owned()),
        model: args.model,
        effort: args.effort,
        attachments: Vec::new(),
    };
    let accepted = match loom.prompt(request).await {
        Ok(a) => a,
        Err(e) => {
            eprintln!("weft: {e}");
            return crate::exit_for(&e);
        }
    };
    let key = accepted.session_key.clone();
    // The session's state now; patches already buffered up to its seq are skipped.
    let (mut snap, mut seq) = match loom.get_snapshot(&key).await {
        Ok(at) => (at.snapshot, at.seq),
        Err(e) => {
            eprintln!("weft: {e}");
            return crate::exit_for(&e);
        }
    };
    if let Output::Stream = output {
        // A consumer starting from an empty snapshot rebuilds the session from here.
        let first = diff(&UniversalSnapshot::default(), &snap);
        print_line(&json!({"sessionKey": key, "seq": seq, "patch": first}));
    }
    let mut shown = Shown::default();
    let mine = |s: &UniversalSnapshot| s.task_id.as_deref() == Some(accepted.task_id.as_str());
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut stopping = false;
    loop {
        let event = tokio::select! {
            ev = patches.recv() => ev,
            _ = &mut ctrl_c, if !stopping => {
                stopping = true;
                eprintln!("\nweft: stopping the turn…");
                let _ = loom.stop(&key).await;
                continue;
            }
        };
        match event {
            Ok(ev) if ev.session_key == key && ev.seq <= seq => continue,
            Ok(ev) if ev.session_key == key && ev.seq == seq + 1 => {
                apply_in_place(&mut snap, &ev.patch);
                seq = ev.seq;
                if let Output::Stream = output {
                    print_line(
                        &json!({"sessionKey": ev.session_key, "seq": ev.seq, "patch": ev.patch}),
                    );
                }
            }
            Ok(ev) if ev.session_key != key => continue,
            // A gap: start again from the whole snapshot.
            Ok(_) | Err(RecvError::Lagged(_)) => match loom.get_snapshot(&key).await {
                Ok(at) => (snap, seq) = (at.snapshot, at.seq),
                Err(e) => {
                    eprintln!("weft: {e}");
                    return ExitCode::FAILURE;
                }
            },
            Err(RecvError::Closed) => break,
        }
        if !mine(&snap) {
            continue;
        }
        if let Output::Human = output {
            show_progress(&snap, &mut shown);
        }
        answer_new_interactions(loom, &key, &snap, &mut shown, interactive, args.yes).await;
        if snap.phase == Phase::Done {
            break;
        }
    }
    finish(&accepted.session_key, &accepted.task_id, &snap, output)
}

/// One line on stdout; a closed pipe (`| head`) is not an error worth a panic.
fn print_line(value: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}").and_then(|_| out.flush());
}

fn show_progress(snap: &UniversalSnapshot, shown: &mut Shown) {
    let mut out = std::io::stdout();
    if snap.text.len() > shown.text_len {
        let _ = out.write_all(&snap.text.as_bytes()[shown.text_len..]);
        let _ = out.flush();
        shown.text_len = snap.text.len();
    }
    for line in snap.activity.lines() {
        if shown.activity.insert(line.to_string()) {
            eprintln!("  · {}", line.trim_start());
        }
    }
    for notice in snap.notices.iter().skip(shown.notices) {
        eprintln!("  ! {notice}");
    }
    shown.notices = snap.notices.len();
}

async fn answer_new_interactions(
    loom: &Arc<Loom>,
    key: &str,
    snap: &UniversalSnapshot,
    shown: &mut Shown,
    interactive: bool,
    yes: bool,
) {
    for interaction in &snap.interactions {
        if !shown.asked.insert(interaction.prompt_id.clone()) {
            continue;
        }
        let response = if interactive {
            ask::on_terminal(interaction.clone()).await
        } else {
            let allowable = matches!(
                interaction.kind,
                InteractionKind::Permission | InteractionKind::Confirmation
            );
            if allowable && yes {
                eprintln!("weft: allowed \"{}\" (--yes)", interaction.title);
                ask::allow(interaction)
            } else {
                let why = if allowable {
                    "stdin is not a terminal; pass --yes to allow"
                } else {
                    "stdin is not a terminal, so nobody can answer"
                };
                eprintln!("weft: cancelled \"{}\" ({why})", interaction.title);
                InteractionResponse::cancel()
            }
        };
        let request = InteractRequest {
            session_key: key.to_string(),
            prompt_id: interaction.prompt_id.clone(),
            response,
        };
        if let Err(e) = loom.interact(request).await {
            // Withdrawn meanwhile (the turn ended): nothing left to answer.
            tracing::debug!("interaction no longer pending: {e}");
        }
    }
}

fn finish(session_key: &str, task_id: &str, snap: &UniversalSnapshot, output: Output) -> ExitCode {
    match output {
        Output::Json => {
            print_line(&json!({"sessionKey": session_key, "taskId": task_id, "snapshot": snap}))
        }
        Output::Human => {
            if !snap.text.ends_with('\n') {
                let _ = writeln!(std::io::stdout());
            }
            eprintln!("weft: session {session_key}");
        }
        Output::Stream => {}
    }
    if let Some(error) = &snap.error {
        eprintln!("weft: the turn failed: {error}");
        return ExitCode::FAILURE;
    }
    if snap.incomplete {
        eprintln!("weft: the turn did not finish");
        return ExitCode::FAILURE;
    }
    ExitCode::SUCCESS
}
