//! `weft run`: one turn, watched to its end.

use std::collections::HashSet;
use std::io::{IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use weft_protocol::verb;
use weft_protocol::{
    diff, InteractRequest, InteractionKind, InteractionResponse, Phase, PromptRequest,
    UniversalSnapshot,
};

use crate::ask;
use crate::client::{self, Daemon};
use crate::follow::{Change, Lost};

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
    /// Run on this account (`weft accounts list`; `ambient`: the agent's own login).
    /// With --session it switches that session's account from this turn on.
    #[arg(long, value_name = "ID")]
    account: Option<String>,
    /// Domain pack for Weft's own agent (--agent native): coding (default), notes,
    /// data, or one from .weft/packs/ or ~/.weft/packs/. The session keeps it.
    #[arg(long, value_name = "P")]
    pack: Option<String>,
    /// Move to the next account of the agent with capacity by itself when this
    /// session's account's limit is used up, and run the cut-short prompt again there
    /// (`weft accounts auto-switch` turns it off).
    #[arg(long)]
    auto_switch: bool,
    /// Turn an MCP server on or off for this session from this turn on (`weft mcp
    /// list`); repeatable.
    #[arg(long = "mcp", value_name = "NAME=on|off", value_parser = crate::mcp::parse_choice)]
    mcp: Vec<(String, bool)>,
    /// Allow permission requests when nobody is at a terminal to answer them (and a
    /// --session --account switch the agent's own session cannot follow).
    #[arg(long)]
    yes: bool,
    /// Print one JSON object {sessionKey, taskId, snapshot} when the turn ends.
    #[arg(long, conflicts_with = "stream")]
    json: bool,
    /// Print one JSON line {sessionKey, seq, patch} per patch.
    #[arg(long)]
    stream: bool,
    /// Print {sessionKey, taskId} and exit at once; the turn goes on in the daemon
    /// (`weft wait KEY` follows it; a question it asks waits in `weft inbox`).
    #[arg(long, conflicts_with_all = ["json", "stream"])]
    detach: bool,
    /// Attach a file or image to the prompt (repeatable): images go to the agent as
    /// images, other files by path.
    #[arg(long = "attach", value_name = "FILE")]
    attach: Vec<PathBuf>,
    /// Start the new session in a new git worktree of the workspace's repository
    /// (branch `weft/NAME`, its own port range); `auto` picks a name.
    #[arg(long, value_name = "NAME", conflicts_with = "session")]
    worktree: Option<String>,
    /// With --worktree or --fanout: the commit or branch it starts from (default: HEAD).
    #[arg(long, value_name = "REF")]
    from: Option<String>,
    /// Send the prompt to several agents, models or accounts at once, each in a new
    /// worktree made from the same commit: `AGENT[:MODEL][@ACCOUNT],…` (e.g.
    /// `claude,codex:o4-mini,claude@work`); prints what each replied and changed.
    #[arg(long, value_name = "TARGETS", conflicts_with_all = ["session", "agent", "model", "account", "worktree", "stream", "pack", "auto_switch"])]
    fanout: Option<String>,
    /// What to ask.
    #[arg(required = true)]
    prompt: Vec<String>,
}

/// The attachments as absolute paths (the daemon's folder is not this one).
pub(crate) fn absolute_attachments(verb: &str, paths: &[PathBuf]) -> Result<Vec<String>, ExitCode> {
    paths
        .iter()
        .map(|p| match std::path::absolute(p) {
            Ok(a) => Ok(a.display().to_string()),
            Err(e) => {
                eprintln!("weft {verb}: --attach {}: {e}", p.display());
                Err(ExitCode::from(2))
            }
        })
        .collect()
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

/// Says once, on stderr, that the folder's grants do not take effect because the user
/// has not trusted it (the turn runs anyway, without them).
async fn warn_untrusted(daemon: &client::Daemon, workdir: &str) {
    let asked = verb::GetWorkspaceTrust {
        workdir: workdir.to_string(),
    };
    let Ok(t) = daemon.client.send(asked).await else {
        return;
    };
    if t.trusted || t.grants.is_empty() {
        return;
    }
    let mut files: Vec<&str> = t.grants.iter().map(|g| g.file.as_str()).collect();
    files.dedup();
    eprintln!(
        "weft: this folder is not trusted, so what it grants does not take effect in this run ({}); `weft trust` shows it and decides",
        files.join(", ")
    );
}

pub(crate) async fn run(args: RunArgs) -> ExitCode {
    if let Some(list) = &args.fanout {
        return fanout(list, &args).await;
    }
    if args.from.is_some() && args.worktree.is_none() {
        eprintln!("weft run: --from is for --worktree or --fanout");
        return ExitCode::from(2);
    }
    let output = match (args.json, args.stream) {
        (true, _) => Output::Json,
        (_, true) => Output::Stream,
        _ => Output::Human,
    };
    if args.pack.is_some() {
        let agent = match &args.session {
            Some(key) => key.split(':').next().map(String::from),
            None => args.agent.clone(),
        };
        if agent.as_deref() != Some("native") {
            eprintln!("weft run: --pack is for --agent native (Weft's own agent)");
            return ExitCode::from(2);
        }
    }
    let workdir = match crate::absolute_workdir(args.workdir) {
        Ok(dir) => dir,
        Err(code) => return code,
    };
    let interactive = std::io::stdin().is_terminal();
    let mut daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    if let (Some(key), Some(account)) = (&args.session, &args.account) {
        if let Err(code) =
            crate::accounts::confirm_switch(&daemon, key, account, args.yes, interactive).await
        {
            return code;
        }
    }
    if let (Some(key), true) = (&args.session, args.auto_switch) {
        if let Err(code) = crate::accounts::set_auto_switch(&daemon, key, true).await {
            return code;
        }
    }
    if args.session.is_none() {
        warn_untrusted(&daemon, &workdir).await;
    }
    let request = PromptRequest {
        prompt: args.prompt.join(" "),
        agent: args.agent,
        session_key: args.session.clone(),
        workdir: Some(workdir),
        model: args.model,
        effort: args.effort,
        attachments: match absolute_attachments("run", &args.attach) {
            Ok(a) => a,
            Err(code) => return code,
        },
        account: args.account,
        pack: args.pack,
        mcp: (!args.mcp.is_empty()).then(|| Box::new(args.mcp.into_iter().collect())),
        worktree: args.worktree.clone().map(|name| {
            Box::new(weft_protocol::WorktreeRequest {
                name,
                from: args.from.clone(),
            })
        }),
    };
    let accepted = match daemon.send(request).await {
        Ok(a) => a,
        Err(code) => return code,
    };
    if args.worktree.is_some() {
        crate::worktrees::say_where(&daemon, &accepted.session_key).await;
    }
    if args.auto_switch && args.session.is_none() {
        if let Err(code) =
            crate::accounts::set_auto_switch(&daemon, &accepted.session_key, true).await
        {
            return code;
        }
    }
    if args.detach {
        print_line(&json!({"sessionKey": accepted.session_key, "taskId": accepted.task_id}));
        return ExitCode::SUCCESS;
    }
    let key = accepted.session_key.clone();
    let mine = accepted.task_id.clone();
    // Patches follow the subscription's reply, so none is missed.
    let mut followed = match daemon.follow(&key).await {
        Ok(f) => f,
        Err(code) => return code,
    };
    if let Output::Stream = output {
        // A consumer starting from an empty snapshot rebuilds the session from here.
        let first = diff(&UniversalSnapshot::default(), &followed.snap);
        print_line(&json!({"sessionKey": key, "seq": followed.seq, "patch": first}));
    }
    let mut shown = Shown::default();
    // Text and stream lines are written as patches arrive but flushed only once no
    // further patch is waiting: a write per token was a syscall per token, most of
    // what printing cost on a long turn. What is shown is never older than the last
    // patch received.
    let mut out = std::io::BufWriter::with_capacity(64 * 1024, std::io::stdout());
    let ctrl_c = tokio::signal::ctrl_c();
    tokio::pin!(ctrl_c);
    let mut stopping = false;
    let mut checked_for: Option<Option<String>> = None;
    let mut was_queued = false;
    loop {
        let snap = &followed.snap;
        if snap.task_id.as_deref() == Some(mine.as_str()) {
            if let Output::Human = output {
                show_progress(snap, &mut shown, &mut out);
            }
            if !snap.interactions.is_empty() {
                // A question is asked below the text that led to it.
                let _ = out.flush();
            }
            answer_new_interactions(&daemon, &key, snap, &mut shown, interactive, args.yes).await;
            if snap.phase == Phase::Done {
                break;
            }
        } else {
            let queued_now = snap.queued.iter().any(|q| q.task_id == mine);
            let left_queue = was_queued && !queued_now;
            was_queued = queued_now;
            if left_queue || checked_for.as_ref() != Some(&snap.task_id) {
                // Another turn is shown: ours may not have started yet, or may already be
                // over (a fast turn, then someone else's) — its end is then in the history.
                checked_for = Some(snap.task_id.clone());
                if let Some(done) = finished_turn(&daemon, &key, &mine).await {
                    followed.snap = done;
                    if let Output::Human = output {
                        show_progress(&followed.snap, &mut shown, &mut out);
                    }
                    break;
                }
                // Neither running, queued nor ended: a client took it out of the queue
                // (`weft dequeue`), so it will never run and there is nothing to wait for.
                if !queued_now {
                    eprintln!("weft: the prompt {mine} was taken out of the queue before it ran");
                    return ExitCode::FAILURE;
                }
            }
        }
        if daemon.events.is_empty() {
            let _ = out.flush();
        }
        let change = tokio::select! {
            change = followed.next(&daemon.client, &mut daemon.events) => change,
            _ = &mut ctrl_c, if !stopping => {
                stopping = true;
                let _ = out.flush();
                eprintln!("\nweft: stopping the turn…");
                let _ = daemon.client.send(verb::Stop { session_key: key.clone() }).await;
                continue;
            }
        };
        match change {
            Ok(Change::Patched(ev)) => {
                if let Output::Stream = output {
                    // The patch event as the daemon sent it (`from` when it stands for
                    // several consecutive patches).
                    let line = serde_json::to_string(&ev).unwrap_or_default();
                    let _ = writeln!(out, "{line}");
                }
            }
            Ok(Change::Reread) => {}
            Err(Lost::Failed(code)) => return code,
            Err(Lost::Closing(reason)) => {
                eprintln!("weft: {reason}; the turn was not seen to its end");
                return ExitCode::FAILURE;
            }
            Err(Lost::Disconnected(None)) => {
                eprintln!(
                    "weft: lost the Weft daemon mid-turn; `weft history {key}` shows what was kept"
                );
                return ExitCode::FAILURE;
            }
            Err(Lost::Disconnected(Some(why))) => {
                eprintln!("weft: lost the Weft daemon mid-turn ({why}); `weft history {key}` shows what was kept");
                return ExitCode::FAILURE;
            }
        }
    }
    let _ = out.flush();
    drop(out);
    finish(
        &accepted.session_key,
        &accepted.task_id,
        &followed.snap,
        output,
    )
}

/// `weft run --fanout …`.
async fn fanout(list: &str, args: &RunArgs) -> ExitCode {
    let targets = match crate::fanout::parse_targets(list) {
        Ok(t) => t,
        Err(why) => {
            eprintln!("weft run --fanout: {why}");
            return ExitCode::from(2);
        }
    };
    let workdir = match crate::absolute_workdir(args.workdir.clone()) {
        Ok(dir) => dir,
        Err(code) => return code,
    };
    let attachments = match absolute_attachments("run", &args.attach) {
        Ok(a) => a,
        Err(code) => return code,
    };
    crate::fanout::run(crate::fanout::Fanout {
        targets,
        prompt: args.prompt.join(" "),
        workdir,
        from: args.from.clone(),
        effort: args.effort.clone(),
        attachments,
        json: args.json,
        detach: args.detach,
        yes: args.yes,
    })
    .await
}

/// Our turn's final snapshot, when it already ended.
async fn finished_turn(daemon: &Daemon, key: &str, task_id: &str) -> Option<UniversalSnapshot> {
    let turns: Vec<UniversalSnapshot> = daemon
        .client
        .send(verb::GetHistory {
            session_key: key.to_string(),
            limit: Some(50),
            before: None,
        })
        .await
        .ok()?;
    turns
        .into_iter()
        .rev()
        .find(|t| t.task_id.as_deref() == Some(task_id))
}

/// One line on stdout; a closed pipe (`| head`) is not an error worth a panic.
fn print_line(value: &serde_json::Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{value}").and_then(|_| out.flush());
}

/// Writes what `snap` adds to what was shown: its new text to `out` (flushed by the
/// caller, or here before anything goes to stderr, so the two keep their order).
fn show_progress(snap: &UniversalSnapshot, shown: &mut Shown, out: &mut impl Write) {
    if snap.text.len() > shown.text_len {
        let _ = out.write_all(&snap.text.as_bytes()[shown.text_len..]);
        shown.text_len = snap.text.len();
    }
    for line in snap.activity.lines() {
        if shown.activity.insert(line.to_string()) {
            let _ = out.flush();
            eprintln!("  · {}", line.trim_start());
        }
    }
    for notice in snap.notices.iter().skip(shown.notices) {
        let _ = out.flush();
        eprintln!("  ! {notice}");
    }
    shown.notices = snap.notices.len();
}

async fn answer_new_interactions(
    daemon: &Daemon,
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
            headless_answer(interaction, yes)
        };
        let request = InteractRequest {
            session_key: key.to_string(),
            prompt_id: interaction.prompt_id.clone(),
            response,
        };
        if let Err(e) = daemon.client.send(request).await {
            // Withdrawn meanwhile (the turn ended): nothing left to answer.
            tracing::debug!("interaction no longer pending: {e}");
        }
    }
}

/// How an interaction is answered with no terminal. `--yes` allows a permission or a
/// confirmation, but a shell command only when Weft judged it safe: an unknown one
/// (`python3 -c …`, `strace -o /dev/null rm -rf ~`) or a dangerous one is refused,
/// and runs headless only when a rule names it (the daemon's rules answer before a
/// request gets here).
pub(crate) fn headless_answer(
    interaction: &weft_protocol::Interaction,
    yes: bool,
) -> InteractionResponse {
    use weft_protocol::CommandRisk;
    let allowable = matches!(
        interaction.kind,
        InteractionKind::Permission | InteractionKind::Confirmation
    );
    if !allowable || !yes {
        let why = if allowable {
            "stdin is not a terminal; pass --yes to allow"
        } else {
            "stdin is not a terminal, so nobody can answer"
        };
        eprintln!("weft: cancelled \"{}\" ({why})", interaction.title);
        return InteractionResponse::cancel();
    }
    match interaction
        .verdict
        .as_ref()
        .map(|v| (v.verdict, &v.command))
    {
        Some((CommandRisk::Unknown, command)) => {
            let report = weft_shell_guard::classify(
                command,
                &weft_shell_guard::Context::new(std::path::Path::new(".")),
            );
            let example = weft_shell_guard::rules::suggest_prefix(&report)
                .map(|p| format!(" such as {{\"allow\": [\"{p}\"]}}"))
                .unwrap_or_default();
            eprintln!(
                "weft: refused \"{}\" (Weft judges it unknown, and --yes runs only commands judged safe: to let it run headless, allow it with a rule{example} in $WEFT_HOME/permissions.json or, in a folder you trust, .weft/permissions.json; or answer in a terminal)",
                interaction.title
            );
            InteractionResponse::select(weft_protocol::permission::DENY)
        }
        Some((CommandRisk::Dangerous, _)) => {
            eprintln!(
                "weft: refused \"{}\" (Weft judges it dangerous: neither --yes nor a rule allows that; answer in a terminal to run it)",
                interaction.title
            );
            InteractionResponse::select(weft_protocol::permission::DENY)
        }
        _ => {
            eprintln!("weft: allowed \"{}\" (--yes)", interaction.title);
            ask::allow(interaction)
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
