//! `weft worktrees` and `weft merge`: the worktrees Weft made for sessions, and landing
//! a session's branch in its base.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use serde_json::json;
use weft_protocol::{verb, MergeMode, MergeOutcome, WorktreeInfo};

use crate::client;

/// `weft worktrees …`.
#[derive(clap::Subcommand)]
pub(crate) enum WorktreesCommand {
    /// Start a worktree's `run` command (its dev server, from `.weft/worktree.toml`)
    /// in a terminal of the daemon's, with its WEFT_PORT; `weft attach run:REPO/NAME`
    /// follows it.
    Run {
        /// The worktree's name.
        name: String,
        /// The repository, when two have a worktree of that name.
        #[arg(long)]
        repo: Option<PathBuf>,
    },
}

/// `weft merge`.
#[derive(Args)]
pub(crate) struct MergeArgs {
    /// The session (one started with `weft run --worktree`).
    key: String,
    /// One commit on the base with the branch's changes.
    #[arg(long, conflicts_with = "rebase")]
    squash: bool,
    /// Replay the branch's commits onto the base, then fast-forward it.
    #[arg(long)]
    rebase: bool,
    /// The commit message for the worktree's changes (default: one made from the
    /// session's prompts).
    #[arg(long, value_name = "TEXT")]
    message: Option<String>,
    /// Push the branch to its remote instead of merging it locally.
    #[arg(long)]
    push: bool,
    /// Push, then open a pull request with the GitHub CLI (`gh pr create`).
    #[arg(long)]
    pr: bool,
    /// Print {base, branch, commit, conflicts:[{path, hunks}]}.
    #[arg(long)]
    json: bool,
}

/// `weft merge KEY …`: exit 0 landed, 1 on conflicts (the merge was aborted).
pub(crate) async fn merge(args: MergeArgs) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let mode = if args.squash {
        MergeMode::Squash
    } else if args.rebase {
        MergeMode::Rebase
    } else {
        MergeMode::Merge
    };
    let asked = verb::MergeSession {
        session_key: args.key,
        mode,
        message: args.message,
        push: args.push,
        pr: args.pr,
    };
    let out: MergeOutcome = match daemon.send(asked).await {
        Ok(o) => o,
        Err(code) => return code,
    };
    if args.json {
        let conflicts: Vec<_> = out
            .conflicts
            .iter()
            .map(|c| json!({"path": c.path, "hunks": c.hunks}))
            .collect();
        let mut printed = json!({"base": out.base, "branch": out.branch, "commit": out.commit, "conflicts": conflicts});
        // With --pr, the pull request and its checks too (the four keys stay as they are).
        if let (true, Some(map)) = (args.pr, printed.as_object_mut()) {
            map.insert("pr".into(), json!(out.pr));
            map.insert("checks".into(), json!(out.checks));
            map.insert("checksNote".into(), json!(out.checks_note));
        }
        out!("{printed}");
    } else if out.conflicts.is_empty() {
        let commit = out.commit.as_deref().unwrap_or("");
        let short = commit.get(..12).unwrap_or(commit);
        if args.push || args.pr {
            out!("pushed {} ({short})", out.branch);
        } else {
            out!("merged {} into {} ({short})", out.branch, out.base);
        }
        if let Some(pr) = &out.pr {
            out!("{pr}");
            if let Some(note) = &out.checks_note {
                out!("checks: {note}");
            } else if out.checks.is_empty() {
                out!("checks: none reported yet");
            }
            for c in &out.checks {
                out!("  {:<8} {}  {}", c.bucket, c.name, c.link);
            }
        }
    } else {
        eprintln!(
            "weft merge: {} does not merge into {} cleanly; nothing was changed (the merge was aborted). Conflicts:",
            out.branch, out.base
        );
        for c in &out.conflicts {
            eprintln!("  {} ({} hunks)", c.path, c.hunks.len());
            for h in &c.hunks {
                eprint!("{h}");
            }
        }
    }
    if out.conflicts.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// `weft worktrees [--json] [--repo DIR]`.
pub(crate) async fn list(json: bool, repo: Option<PathBuf>) -> ExitCode {
    let repo = match repo {
        Some(r) => match crate::absolute_workdir(Some(r)) {
            Ok(r) => Some(r),
            Err(code) => return code,
        },
        None => None,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let all: Vec<WorktreeInfo> = match daemon.send(verb::ListWorktrees { repo }).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    if json {
        let rows: Vec<_> = all
            .iter()
            .map(|w| {
                json!({
                    "name": w.name, "repo": w.repo, "path": w.path, "branch": w.branch,
                    "base": w.base, "ahead": w.ahead, "behind": w.behind, "dirty": w.dirty,
                    "ports": w.ports, "sessions": w.sessions, "setupLog": w.setup_log,
                })
            })
            .collect();
        out!("{}", serde_json::Value::Array(rows));
        return ExitCode::SUCCESS;
    }
    if all.is_empty() {
        out!("no worktrees (weft run --worktree NAME … makes one)");
    }
    for w in &all {
        out!(
            "{:<20} {:<28} +{} -{}{}  ports {}  {}  {}",
            w.name,
            w.branch.as_deref().unwrap_or("(detached)"),
            w.ahead,
            w.behind,
            if w.dirty { " dirty" } else { "" },
            w.ports,
            w.sessions.join(","),
            w.path
        );
    }
    ExitCode::SUCCESS
}

/// `weft worktrees run NAME`: starts it and says where it runs; it goes on in the
/// daemon after this command ends.
pub(crate) async fn run(name: String, repo: Option<PathBuf>) -> ExitCode {
    let repo = match repo {
        Some(r) => match crate::absolute_workdir(Some(r)) {
            Ok(r) => Some(r),
            Err(code) => return code,
        },
        None => None,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let asked = verb::RunWorktree {
        name,
        repo,
        cols: None,
        rows: None,
    };
    match daemon.send(asked).await {
        Ok(t) => {
            out!("{}", t.session_key);
            eprintln!(
                "weft: running in the daemon's terminal {0}; `weft attach {0}` follows it",
                t.session_key
            );
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}

/// After `weft run --worktree`: where the session runs, on stderr.
pub(crate) async fn say_where(daemon: &client::Daemon, session_key: &str) {
    let Ok(all) = daemon.client.send(verb::ListWorktrees { repo: None }).await else {
        return;
    };
    if let Some(w) = all
        .iter()
        .find(|w| w.sessions.iter().any(|k| k == session_key))
    {
        eprintln!(
            "weft: {session_key} runs in worktree {} ({}, branch {}, ports {}){}",
            w.name,
            w.path,
            w.branch.as_deref().unwrap_or("?"),
            w.ports,
            w.setup_log
                .as_deref()
                .map(|l| format!("; setup's output: {l}"))
                .unwrap_or_default()
        );
    }
}
