//! `weft trust`: what a workspace's `.weft/` and the agents' project files would let
//! act, and the user's decision on it. In a terminal it shows the grants and asks y/N;
//! `--yes` trusts without asking (scripts), `--revoke` forgets the decision, `--show`
//! only shows (`--json`: `{trusted, grants:[{file, kind, detail}], hash, …}`).

use std::io::{BufRead, IsTerminal, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use weft_protocol::verb;
use weft_protocol::WorkspaceTrust;

use crate::client::connect;

#[derive(Args)]
pub struct TrustArgs {
    /// The workspace (default: the current folder).
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// Only show what it grants and whether it is trusted.
    #[arg(long)]
    show: bool,
    /// With --show: print JSON.
    #[arg(long, requires = "show")]
    json: bool,
    /// Forget the decision for this repository (or folder).
    #[arg(long, conflicts_with_all = ["show", "yes"])]
    revoke: bool,
    /// Trust without asking.
    #[arg(long)]
    yes: bool,
}

/// What the folder grants, one line each, grouped by file.
pub(crate) fn describe(t: &WorkspaceTrust) -> String {
    let mut out = String::new();
    let mut file = "";
    for g in &t.grants {
        if g.file != file {
            file = &g.file;
            out.push_str(&format!("  {file}\n"));
        }
        out.push_str(&format!("    {:<15} {}\n", g.kind, g.detail));
    }
    out
}

fn state(t: &WorkspaceTrust) -> &'static str {
    if t.grants.is_empty() {
        "grants nothing"
    } else if t.trusted {
        "trusted"
    } else if t.declined {
        "not trusted (declined)"
    } else {
        "not trusted"
    }
}

pub async fn trust(args: TrustArgs) -> ExitCode {
    let workdir = match crate::absolute_workdir(args.workdir) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let Ok(daemon) = connect().await else {
        return ExitCode::FAILURE;
    };
    if args.revoke {
        return match daemon.send(verb::RevokeWorkspaceTrust { workdir }).await {
            Ok(t) => {
                out!("forgot the trust decision for {}", t.scope);
                ExitCode::SUCCESS
            }
            Err(code) => code,
        };
    }
    let shown = match daemon
        .send(verb::GetWorkspaceTrust {
            workdir: workdir.clone(),
        })
        .await
    {
        Ok(t) => t,
        Err(code) => return code,
    };
    if args.show {
        if args.json {
            out!(
                "{}",
                serde_json::to_string_pretty(&shown).unwrap_or_default()
            );
        } else {
            out!("{}: {}", shown.workdir, state(&shown));
            if !shown.grants.is_empty() {
                out!("What it grants:\n{}", describe(&shown).trim_end());
            }
        }
        return ExitCode::SUCCESS;
    }
    if shown.grants.is_empty() {
        out!(
            "{} grants nothing: there is nothing to trust",
            shown.workdir
        );
        return ExitCode::SUCCESS;
    }
    if shown.trusted {
        out!("{} is already trusted", shown.workdir);
        return ExitCode::SUCCESS;
    }
    if !args.yes {
        let stdin = std::io::stdin();
        if !stdin.is_terminal() {
            eprintln!(
                "weft: {} is not trusted; run `weft trust` in a terminal to see what it grants and decide, or `weft trust --yes`",
                shown.workdir
            );
            return ExitCode::from(crate::EXIT_USAGE);
        }
        out!(
            "{} would let this act with your authority, for every agent:\n{}\nNothing of it takes effect until you trust the folder; its deny and ask rules apply anyway.",
            shown.workdir,
            describe(&shown).trim_end()
        );
        print!("Trust this folder? [y/N] ");
        let _ = std::io::stdout().flush();
        let mut answer = String::new();
        let _ = stdin.lock().read_line(&mut answer);
        if !matches!(answer.trim(), "y" | "Y" | "yes" | "Yes") {
            return match daemon
                .send(verb::DeclineWorkspaceTrust {
                    workdir,
                    hash: shown.hash,
                })
                .await
            {
                Ok(_) => {
                    out!("not trusted: agents run here without what it grants");
                    ExitCode::FAILURE
                }
                Err(code) => code,
            };
        }
    }
    match daemon
        .send(verb::TrustWorkspace {
            workdir,
            hash: shown.hash,
        })
        .await
    {
        Ok(t) => {
            out!("trusted {} ({})", t.workdir, t.scope);
            ExitCode::SUCCESS
        }
        Err(code) => code,
    }
}
