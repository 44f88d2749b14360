//! The `weft-sandbox-exec` helper: restricts itself with Landlock and a seccomp
//! filter, then execs the command, which inherits both and cannot lift them.
//!
//! - Landlock: everything readable but the hidden folders (`$WEFT_HOME`,
//!   `$XDG_RUNTIME_DIR`, `/run/user`; see [`crate::readable`]), the workspace, the
//!   run's scratch folder and `/dev` writable; TCP refused unless the network is
//!   allowed; and, where the kernel has them (Linux 6.12), no signal to a process
//!   outside the sandbox and no abstract Unix socket from outside it.
//! - seccomp: Landlock has no right over `connect()` to a Unix socket on the kernels
//!   Weft supports (Debian 12 has 6.1), and a socket's inode needs only read access to
//!   be connected to. So `socket(AF_UNIX, …)` is refused outright: the daemon's socket,
//!   the D-Bus buses and every other host socket are out of reach (`socketpair`, which
//!   reaches nothing, still works). Without the network every other `socket()` is
//!   refused too. `io_uring_setup` is refused (io_uring's `IORING_OP_SOCKET` makes a
//!   socket without the `socket` system call), and on x86-64 every x32 system call
//!   (their numbers carry bit 30 and would miss the rules above); a system call of
//!   another architecture (i386 `int 0x80`) kills the process (seccompiler's own
//!   architecture check).

use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};

use landlock::{
    path_beneath_rules, Access, AccessFs, AccessNet, CompatLevel, Compatible, Ruleset, RulesetAttr,
    RulesetCreatedAttr, RulesetStatus, Scope, ABI,
};
#[cfg(target_arch = "x86_64")]
use seccompiler::sock_filter;
use seccompiler::{
    BpfProgram, SeccompAction, SeccompCmpArgLen, SeccompCmpOp, SeccompCondition, SeccompFilter,
    SeccompRule,
};

struct Args {
    workdir: PathBuf,
    temp: PathBuf,
    hide: Vec<PathBuf>,
    allow_network: bool,
    report: bool,
    argv: Vec<String>,
}

fn parse(mut it: impl Iterator<Item = String>) -> Result<Args, String> {
    let mut workdir = None;
    let mut temp = None;
    let mut hide = Vec::new();
    let mut allow_network = false;
    let mut report = false;
    while let Some(a) = it.next() {
        match a.as_str() {
            "--workdir" => workdir = it.next().map(PathBuf::from),
            "--temp" => temp = it.next().map(PathBuf::from),
            "--hide" => hide.extend(it.next().map(PathBuf::from)),
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
        hide,
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
        .map_err(|e| e.to_string())?
        .scope(Scope::AbstractUnixSocket | Scope::Signal)
        .map_err(|e| e.to_string())?;
    if !a.allow_network {
        ruleset = ruleset
            .handle_access(AccessNet::from_all(abi))
            .map_err(|e| e.to_string())?;
    }
    let hidden: Vec<PathBuf> = a
        .hide
        .iter()
        .filter_map(|h| h.canonicalize().ok())
        .collect();
    let readable = crate::readable::readable(Path::new("/"), &hidden);
    let writable = [a.workdir.as_path(), a.temp.as_path(), Path::new("/dev")];
    let status = ruleset
        .create()
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(readable, AccessFs::from_read(abi)))
        .map_err(|e| e.to_string())?
        .add_rules(path_beneath_rules(writable, AccessFs::from_all(abi)))
        .map_err(|e| e.to_string())?
        .restrict_self()
        .map_err(|e| e.to_string())?;
    match status.ruleset {
        RulesetStatus::FullyEnforced => Ok("fully enforced".into()),
        RulesetStatus::PartiallyEnforced => Ok(
            "partially enforced (this kernel's Landlock lacks some rights, e.g. signal scoping before Linux 6.12)"
                .into(),
        ),
        RulesetStatus::NotEnforced => Err("Landlock is not enforced by this kernel".into()),
    }
}

/// The x32 system calls' marker bit: on x86-64 they share the architecture value of
/// native calls, so the filter must refuse them by number.
#[cfg(target_arch = "x86_64")]
const X32_SYSCALL_BIT: u32 = 0x4000_0000;

/// The filter described in the module's docs.
fn filter(allow_network: bool) -> Result<BpfProgram, String> {
    let arch = std::env::consts::ARCH
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    let unix = SeccompCondition::new(
        0,
        SeccompCmpArgLen::Dword,
        SeccompCmpOp::Eq,
        libc::AF_UNIX as u64,
    )
    .map_err(|e| e.to_string())?;
    // No rule: the call is refused whatever its arguments.
    let socket = if allow_network {
        vec![SeccompRule::new(vec![unix]).map_err(|e| e.to_string())?]
    } else {
        Vec::new()
    };
    let filter = SeccompFilter::new(
        [
            (libc::SYS_socket, socket),
            (libc::SYS_io_uring_setup, Vec::new()),
        ]
        .into_iter()
        .collect(),
        SeccompAction::Allow,
        SeccompAction::Errno(libc::EPERM as u32),
        arch,
    )
    .map_err(|e| e.to_string())?;
    let program: BpfProgram = filter
        .try_into()
        .map_err(|e: seccompiler::BackendError| e.to_string())?;
    #[cfg(target_arch = "x86_64")]
    {
        // Ahead of seccompiler's program (its jumps are relative, so it runs unchanged
        // after these): load the call's number; an x32 one gets EPERM.
        let stmt = |code: u32, k: u32| sock_filter {
            code: code as u16,
            jt: 0,
            jf: 0,
            k,
        };
        let mut x32 = vec![
            stmt(libc::BPF_LD | libc::BPF_W | libc::BPF_ABS, 0),
            sock_filter {
                code: (libc::BPF_JMP | libc::BPF_JGE | libc::BPF_K) as u16,
                jt: 0,
                jf: 1,
                k: X32_SYSCALL_BIT,
            },
            stmt(
                libc::BPF_RET | libc::BPF_K,
                libc::SECCOMP_RET_ERRNO | (libc::EPERM as u32 & libc::SECCOMP_RET_DATA),
            ),
        ];
        x32.extend(program);
        Ok(x32)
    }
    #[cfg(not(target_arch = "x86_64"))]
    Ok(program)
}

fn seccomp(allow_network: bool) -> Result<(), String> {
    seccompiler::apply_filter(&filter(allow_network)?).map_err(|e| e.to_string())
}

/// `--connect PATH…`: tries to connect to each Unix socket; exit 0 and its path on
/// stdout when one answered, else [`crate::NONE_REACHED`] (how the probe tells whether host
/// sockets are reachable from inside the sandbox).
fn connect(paths: impl Iterator<Item = String>) -> std::process::ExitCode {
    let mut reached = false;
    for p in paths {
        match std::os::unix::net::UnixStream::connect(&p) {
            Ok(_) => {
                println!("{p}");
                reached = true;
            }
            Err(e) => eprintln!("{p}: {e}"),
        }
    }
    std::process::ExitCode::from(if reached {
        0
    } else {
        crate::NONE_REACHED as u8
    })
}

/// The helper's `main`: exit 125 when it cannot confine, else the command's own
/// process (exec).
pub fn exec_main() -> std::process::ExitCode {
    exec_with(std::env::args().skip(1))
}

/// [`exec_main`] with its arguments given (`--workdir DIR … -- COMMAND…`, or
/// `--connect PATH…`).
pub fn exec_with(args: impl Iterator<Item = String>) -> std::process::ExitCode {
    let mut args = args.peekable();
    if args.peek().is_some_and(|a| a == "--connect") {
        args.next();
        return connect(args);
    }
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
    if let Err(e) = seccomp(args.allow_network) {
        eprintln!("weft-sandbox-exec: seccomp: {e}");
        return std::process::ExitCode::from(125);
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

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_filter_builds_with_and_without_the_network() {
        let closed = filter(false).unwrap();
        let open = filter(true).unwrap();
        assert!(open.len() > closed.len(), "the AF_UNIX condition is extra");
        #[cfg(target_arch = "x86_64")]
        assert_eq!(closed[1].k, X32_SYSCALL_BIT);
    }
}
