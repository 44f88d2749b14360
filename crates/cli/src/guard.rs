//! `weft check-command` (how Weft judges a shell command line) and `weft sandbox`
//! (run a command exactly as the native agent's bash tool would). Neither needs
//! the daemon.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;

/// `weft check-command`.
#[derive(Args)]
pub struct CheckArgs {
    /// The folder the command would run in (the workspace); default: here.
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Print `{verdict, reasons, commands}` as JSON.
    #[arg(long)]
    json: bool,
    /// The whole shell command line, as one argument (after `--`).
    #[arg(required = true, last = true, value_name = "COMMAND LINE")]
    line: Vec<String>,
}

pub fn check(args: CheckArgs) -> ExitCode {
    let workdir = match crate::absolute_workdir(args.workdir) {
        Ok(w) => w,
        Err(code) => return code,
    };
    let line = args.line.join(" ");
    let report =
        weft_shell_guard::classify(&line, &weft_shell_guard::Context::new(workdir.as_ref()));
    if args.json {
        match serde_json::to_string_pretty(&report) {
            Ok(j) => out!("{j}"),
            Err(e) => {
                eprintln!("weft: {e}");
                return ExitCode::FAILURE;
            }
        }
        return ExitCode::SUCCESS;
    }
    out!("{}", report.verdict.as_str());
    for r in &report.reasons {
        out!("  - {r}");
    }
    for c in &report.commands {
        out!("  {:<9} {}", c.verdict.as_str(), c.argv.join(" "));
    }
    ExitCode::SUCCESS
}
