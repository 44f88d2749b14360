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
    /// With --probe: print `{mechanism, details, hostSocketsBlocked, gitReadOnly,
    /// network}` as JSON.
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

/// What `weft sandbox --probe --json` prints: the mechanism and what was measured to
/// hold under it.
#[derive(serde::Serialize)]
struct ProbeReport<'a> {
    #[serde(flatten)]
    probe: &'a weft_sandbox::Probe,
    #[serde(flatten)]
    checks: &'a weft_sandbox::Checks,
}

fn yes_no(b: bool) -> &'static str {
    if b {
        "yes"
    } else {
        "no"
    }
}

pub fn sandbox(args: SandboxArgs) -> ExitCode {
    let probe = weft_sandbox::probe();
    let weft_home = weft_kernel::state::global_state_dir();
    if args.probe {
        let checks = weft_sandbox::check(probe, &weft_home);
        if args.json {
            let report = ProbeReport {
                probe,
                checks: &checks,
            };
            out!(
                "{}",
                serde_json::to_string_pretty(&report).unwrap_or_default()
            );
        } else {
            out!("{}: {}", probe.mechanism.as_str(), probe.details);
            out!(
                "host sockets blocked: {}",
                yes_no(checks.host_sockets_blocked)
            );
            out!(".git/.weft read-only: {}", yes_no(checks.git_read_only));
            out!(
                "network: {}",
                serde_json::to_value(checks.network)
                    .ok()
                    .and_then(|v| v.as_str().map(String::from))
                    .unwrap_or_default()
            );
            for n in &checks.notes {
                out!("  - {n}");
            }
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
    let mut policy = weft_sandbox::Policy::new(&workdir, scratch.path(), &weft_home);
    policy.allow_network = args.allow_network;
    let mut confined = match weft_sandbox::shell(&policy, &args.command.join(" ")) {
        Ok(Some(c)) => c,
        Ok(None) => {
            eprintln!("weft sandbox: {}", probe.details);
            return ExitCode::from(125);
        }
        Err(e) => {
            eprintln!("weft sandbox: {e}");
            return ExitCode::from(125);
        }
    };
    let status = confined.command.status();
    // The workspace's .git/.weft mountpoints go only after the command has ended.
    drop(confined.hold);
    match status {
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
