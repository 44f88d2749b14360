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

/// `weft sandbox`.
#[derive(Args)]
pub struct SandboxArgs {
    /// Print which mechanism confines commands here, and stop.
    #[arg(long)]
    probe: bool,
    /// With --probe: print `{mechanism, details}` as JSON.
    #[arg(long, requires = "probe")]
    json: bool,
    /// The workspace (writable; its .git and .weft read-only); default: here.
    #[arg(long, value_name = "DIR")]
    workdir: Option<PathBuf>,
    /// Let the command reach the network.
    #[arg(long)]
    allow_network: bool,
    /// The command line, run with `bash -c` as the native agent's bash tool does.
    #[arg(last = true, value_name = "COMMAND")]
    command: Vec<String>,
}

pub fn sandbox(args: SandboxArgs) -> ExitCode {
    let probe = weft_sandbox::probe();
    if args.probe {
        if args.json {
            out!(
                "{}",
                serde_json::to_string_pretty(probe).unwrap_or_default()
            );
        } else {
            out!(
                "{}: {}",
                serde_json::to_value(probe.mechanism)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default(),
                probe.details
            );
        }
        return ExitCode::SUCCESS;
    }
    if args.command.is_empty() {
        eprintln!("weft sandbox: give a command after --, or --probe");
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let workdir = match crate::absolute_workdir(args.workdir) {
        Ok(w) => PathBuf::from(w),
        Err(code) => return code,
    };
    if !workdir.is_dir() {
        eprintln!("weft sandbox: {} is not a folder", workdir.display());
        return ExitCode::from(crate::EXIT_USAGE);
    }
    // A private /tmp for this run, removed after it.
    let scratch = match weft_sandbox::scratch() {
        Ok(t) => t,
        Err(e) => {
            eprintln!("weft sandbox: no private temp folder: {e}");
            return ExitCode::from(125);
        }
    };
    let mut policy = weft_sandbox::Policy::new(&workdir, scratch.path());
    policy.allow_network = args.allow_network;
    let Some(mut cmd) = weft_sandbox::shell(&policy, &args.command.join(" ")) else {
        eprintln!("weft sandbox: {}", probe.details);
        return ExitCode::from(125);
    };
    match cmd.status() {
        Ok(s) => match s.code() {
            Some(c) => ExitCode::from(u8::try_from(c).unwrap_or(1)),
            None => ExitCode::from(128 + 9),
        },
        Err(e) => {
            eprintln!("weft sandbox: cannot start: {e}");
            ExitCode::from(125)
        }
    }
}
