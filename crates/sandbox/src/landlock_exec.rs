//! The `weft-sandbox-exec` helper: restricts itself with Landlock and a seccomp
//! filter, then execs the command, which inherits both and cannot lift them.

use std::os::unix::process::CommandExt;
use std::path::PathBuf;

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, ABI,
};
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

struct Args {
    workdir: PathBuf,
    temp: PathBuf,
    allow_network: bool,
    report: bool,
    argv: Vec<String>,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut workdir = None;
    let mut temp = None;
    let mut allow_network = false;
    let mut report = false;
    while let Some(a) = it.next() {
        match a.as_str() {
            "--workdir" => workdir = it.next().map(PathBuf::from),
            "--temp" => temp = it.next().map(PathBuf::from),
            "--allow-network" => allow_network = true,
            "--report" => report = true,
            "--" => break,
            other => return Err(format!("unknown argument {other:?}")),
        }
    }
    let argv: Vec<String> = it.collect();
    if argv.is_empty() {
        return Err("no command after --".into());
    }
    Ok(Args {
        workdir: workdir.ok_or("--workdir is required")?,
        temp: temp.ok_or("--temp is required (the run's private scratch folder)")?,
        allow_network,
        report,
        argv,
    })
}

fn landlock(a: &Args) -> Result<String, String> {
    let abi = ABI::V5;
    let mut ruleset = Ruleset::default()
        .set_compatibility(CompatLevel::BestEffort)
        .handle_access(AccessFs::from_all(abi))
        .map_err(|e| e.to_string())?;
    if !a.allow_network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| e.to_string())?;
    }
    let writable = [
        a.workdir.as_path(),
        a.temp.as_path(),
        std::path::Path::new("/dev"),
    ];
    let status = ruleset
        .create()
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(["/"], AccessFs::from_read(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(|e| e.to_string())?
        .restrict_self()
        .map_err(|e| e.to_string())?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok("fully enforced".into()),
        RulesetStatus::PartiallyEnforced => Ok("partially enforced (older kernel ABI)".into()),
        RulesetStatus::NotEnforced => Err("Landlock is not enforced by this kernel".into()),
    }
}

/// A filter refusing `socket()` for every family but AF_UNIX.
fn seccomp() -> Result<(), String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let not_unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Ne,
        libc::AF_UNIX as u64,
    )
    .map_err(|e| e.to_string())?;
    let rule = SeccompRule::new(vec![not_unix]).map_err(|e| e.to_string())?;
    let filter = SeccompFilter::new(
        [(libc::SYS_socket, vec![rule])].into_iter().collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    seccompiler::apply_filter(&program).map_err(|e| e.to_string())
}

/// The helper's `main`: exit 125 when it cannot confine, else the command's own
/// process (exec).
pub fn exec_main() -> std::process::ExitCode {
    exec_with(std::env::args().skip(1))
}

/// [`exec_main`] with its arguments given (`--workdir DIR … -- COMMAND…`).
pub fn exec_with(args: impl Iterator<Item = String>) -> std::process::ExitCode {
    let args = match parse(args) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("weft-sandbox-exec: {e}");
            return std::process::ExitCode::from(125);
        }
    };
    let status = match landlock(&args) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("weft-sandbox-exec: {e}");
            return std::process::ExitCode::from(125);
        }
    };
    if !args.allow_network {
        if let Err(e) = seccomp() {
            eprintln!("weft-sandbox-exec: seccomp: {e}");
            return std::process::ExitCode::from(125);
        }
    }
    if args.report {
        eprintln!("{status}");
    }
    let err = std::process::Command::new(&args.argv[0])
        .args(&args.argv[1..])
        .current_dir(&args.workdir)
        .env("TMPDIR", &args.temp)
        .exec();
    eprintln!("weft-sandbox-exec: cannot run {}: {err}", args.argv[0]);
    std::process::ExitCode::from(127)
}
