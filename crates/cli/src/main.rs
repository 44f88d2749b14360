//! `weft`: Weft's command line. `weft daemon run` is the kernel service; every other
//! command is a client of it (started on demand): turns, their questions, terminals,
//! the session list, history, search, the agents on this machine.
//!
//! Exit codes: 0 the turn ended ok; 1 it ended with an error (the snapshot's `error`
//! says why) or was stopped; 2 bad usage (unknown agent or session, a workdir that is
//! not a folder, a bad flag).

// The daemon runs in this binary. Its kernel thread allocates each event and patch and
// the store's writer and the socket forwarders free them: under glibc's malloc those
// cross-thread frees contend on an arena lock, which `perf` showed as the largest cost of
// a long streaming turn. mimalloc frees to the owning thread's heap without that lock
// (BENCHMARKS.md, "the full path": 1.6–1.8× the events/s at a million deltas).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `println!` that ignores a closed stdout (`weft sessions | head`) instead of panicking.
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stdout(), $($arg)*);
    }};
}

mod accounts;
mod agents;
mod answer;
mod ask;
mod client;
mod daemon;
mod export;
mod fanout;
mod follow;
mod forward;
mod guard;
mod hosts;
mod import;
mod library;
mod list;
mod matrix;
mod mcp;
mod proxy;
mod restore;
mod run;
mod serve;
mod skills;
mod tokens;
mod trust;
mod tui;
mod verbs;
mod worktrees;

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "weft",
    version,
    about = "Drive coding agents through one session model"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
    /// Run the command against this host's daemon over ssh (`weft hosts list`); `local`:
    /// this machine. `weft daemon`, `weft sandbox` and `weft hosts` act here only.
    #[arg(long, global = true, env = "WEFT_HOST", value_name = "NAME")]
    host: Option<String>,
}

#[derive(Subcommand)]
enum Command {
    /// Run one turn and print the reply.
    Run(run::RunArgs),
    /// Commit a worktree session's changes and merge (default), squash or rebase its
    /// branch into its base; or push it (--push) and open a pull request (--pr). Exit 1
    /// on conflicts: the merge is aborted and they are listed.
    Merge(worktrees::MergeArgs),
    /// The git worktrees Weft made for sessions: branch, ahead/behind, dirty, ports.
    Worktrees {
        #[command(subcommand)]
        command: Option<worktrees::WorktreesCommand>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Only those of the repository holding this folder.
        #[arg(long)]
        repo: Option<PathBuf>,
    },
    /// Wait until a session's running and queued turns end; exit 0 when the last ended ok.
    Wait {
        /// The session key (`agent:id`).
        key: String,
        /// Print the last snapshot as JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop a session's running turn.
    Stop {
        /// The session key.
        key: String,
    },
    /// Put a session's files back as they were before its last turn, whatever the
    /// agent (`weft restore KEY` does the same; `weft restore KEY --undo` takes it back).
    Undo {
        /// The session key.
        key: String,
    },
    /// Put a session's files back as they were before or after one of its turns (all,
    /// or the PATHS after `--`), from the checkpoints taken around every turn.
    Restore(restore::RestoreArgs),
    /// What a session changed between two of its checkpoints (default: the whole
    /// session, from before its first turn to after its last).
    Diff(restore::DiffArgs),
    /// Send a message into a session's running turn (or queue it).
    Steer {
        /// The session key.
        key: String,
        /// Attach a file or image to the message (repeatable), as `weft run --attach`:
        /// an agent that cannot take it mid-turn gets it with the steer as its next turn.
        #[arg(long = "attach", value_name = "FILE")]
        attach: Vec<std::path::PathBuf>,
        /// The message.
        #[arg(required = true)]
        text: Vec<String>,
    },
    /// Take a queued prompt out of a session's queue: it never runs.
    Dequeue {
        /// The session key.
        key: String,
        /// The queued prompt's task id (what `weft run --detach` printed).
        task_id: String,
    },
    /// Move a queued prompt within a session's queue.
    Requeue {
        /// The session key.
        key: String,
        /// The queued prompt's task id.
        task_id: String,
        /// Its new position: 1 runs next; past the end moves it last.
        #[arg(long, value_name = "POSITION")]
        to: u32,
    },
    /// Every question, permission and confirmation waiting for an answer.
    Inbox {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Answer a question or permission from the inbox.
    Answer {
        /// Its prompt id (`weft inbox`).
        prompt_id: String,
        /// Pick this choice's value (e.g. `allow`, `deny`); again for several picks of a
        /// question that allows several; `QID=VALUE` for a prompt with several questions.
        #[arg(long, value_name = "[QID=]VALUE")]
        select: Vec<String>,
        /// Answer with this text (a text question's answer, or the free "Other" answer
        /// beside --select); `QID=TEXT` for a prompt with several questions.
        #[arg(long, value_name = "[QID=]TEXT")]
        text: Vec<String>,
        /// Withdraw it; the agent is told it was cancelled.
        #[arg(long)]
        cancel: bool,
    },
    /// Attach this terminal to a session's open agent terminal (Ctrl-] detaches).
    Attach {
        /// The session key.
        key: String,
    },
    /// The Matrix surface: any Matrix app prompts and answers the agents. `weft matrix
    /// login --homeserver URL --user MXID`, `allow MXID`, `deny MXID`, `status [--json]`,
    /// `logout` (`weft matrix --help` for all); run by `weft-matrix` beside `weft`.
    #[command(disable_help_flag = true)]
    Matrix {
        /// Its subcommand and arguments.
        #[arg(trailing_var_arg = true, allow_hyphen_values = true)]
        args: Vec<std::ffi::OsString>,
    },
    /// The kernel service: run it, see it, stop it.
    Daemon {
        #[command(subcommand)]
        command: daemon::DaemonCommand,
    },
    /// List sessions, managed and the agents' own, newest first (this folder's unless
    /// `--all`); rename, archive, pin or delete one.
    Sessions(library::SessionsArgs),
    /// Show a session's past turns (a native session's from the agent's file).
    History {
        /// The session key (`agent:id`).
        key: String,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Find sessions, managed and native, whose prompts, replies or tool calls contain
    /// every word (as a substring), best match first.
    Search(library::SearchArgs),
    /// Fork a session at its end or after a turn (`--at N`): a new session with the
    /// history up to there, which `weft run --session NEWKEY` continues.
    Fork(library::ForkArgs),
    /// Token usage and cost from every agent's sessions, each model call counted once.
    Usage(library::UsageArgs),
    /// Open an agent's own terminal UI here (raw passthrough); the session is shared
    /// with the structured rail.
    Tui(tui::TuiArgs),
    /// Make the daemon accept WebSocket clients and serve the browser UI, until interrupted.
    Serve(serve::ServeArgs),
    /// The named tokens browsers and phones connect with: add (shown once), list, revoke.
    Tokens {
        #[command(subcommand)]
        command: tokens::TokensCommand,
    },
    /// MCP servers configured once in Weft for every agent: list them, turn them on or
    /// off for a session, keep the secrets they name.
    Mcp {
        #[command(subcommand)]
        command: mcp::McpCommand,
    },
    /// Skills placed once in Weft for every agent: list, add, remove, turn on or off.
    Skills {
        #[command(subcommand)]
        command: skills::SkillsCommand,
    },
    /// Accounts: several identities per agent, one per session.
    Accounts {
        #[command(subcommand)]
        command: accounts::AccountsCommand,
    },
    /// Judge a shell command line as the native agent's guard does: safe, unknown or
    /// dangerous, with reasons and each simple command (exit 0).
    #[command(name = "check-command")]
    Check(guard::CheckArgs),
    /// Run a command line under the OS sandbox exactly as the native agent's bash tool
    /// does (`--probe`: which mechanism works here).
    Sandbox(guard::SandboxArgs),
    /// Trust a workspace: what its `.weft/` (MCP servers, hooks, checks, allow rules,
    /// packs, skills) and the agents' project files grant takes effect only once you
    /// did (`--show`: see it; `--revoke`: forget it).
    Trust(trust::TrustArgs),
    /// Open a session's dev server here: its worktree's first port (or --port N of its
    /// range) on the host (`--host NAME`, or a `HOST/agent:id` key) forwarded to
    /// 127.0.0.1 through the host's ssh connection; prints the local URL.
    Forward(forward::ForwardArgs),
    /// Other machines reached over SSH, each running its own daemon: add, list, remove,
    /// status (`--host NAME` runs any command there).
    Hosts {
        #[command(subcommand)]
        command: hosts::HostsCommand,
    },
    /// Bridge stdin/stdout to this machine's daemon (started if need be): what a client
    /// on another machine runs over SSH (`weft --host NAME …`).
    Proxy,
    /// The tools an agent has in a folder, as it reports them (its own and its MCP
    /// servers'); without `--agent`, the tools Weft offers every agent.
    Tools(list::ToolsArgs),
    /// List the agents, whether each is installed, its version and capabilities.
    Agents {
        #[command(subcommand)]
        command: Option<agents::AgentsCommand>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

/// Bad usage: exit 2.
pub(crate) const EXIT_USAGE: u8 = 2;

/// The workdir a command names, made absolute against this process's current folder
/// (the daemon's is not the client's); the current folder when none is named.
pub(crate) fn absolute_workdir(dir: Option<PathBuf>) -> Result<String, ExitCode> {
    if let Some(host) = client::host() {
        return Ok(client::remote_workdir(host, dir));
    }
    let dir = match dir {
        Some(d) => d,
        None => std::env::current_dir().map_err(|e| {
            eprintln!("weft: the current folder cannot be used: {e}");
            ExitCode::from(EXIT_USAGE)
        })?,
    };
    let abs = std::path::absolute(&dir).unwrap_or(dir);
    Ok(abs.to_string_lossy().into_owned())
}

/// `--host NAME`: refused by the commands that act on this machine only (`weft agents
/// install` runs the host's own weft there instead); otherwise
/// the host is made ready (first contact when needed) and every connection goes there.
async fn use_host(name: Option<&str>, command: &Command) -> Result<(), ExitCode> {
    let Some(name) = name.filter(|n| !n.is_empty() && *n != "local") else {
        return Ok(());
    };
    let local_only = match command {
        // The far end of a `--host` connection: it serves this machine's daemon.
        Command::Proxy => return Ok(()),
        Command::Daemon { .. } => "weft daemon",
        Command::Sandbox(_) => "weft sandbox",
        Command::Hosts { .. } => "weft hosts",
        Command::Tokens { .. } => "weft tokens",
        Command::Matrix { .. } => "weft matrix",
        Command::Check(_) => "weft check-command",
        _ => return client::use_host(name).await,
    };
    eprintln!(
        "weft: {local_only} acts on this machine only; --host {name} (or WEFT_HOST) cannot be used with it"
    );
    Err(ExitCode::from(EXIT_USAGE))
}

/// `HOST/agent:id` split into the host and the key, when `arg` has that form.
fn split_host_key(arg: &str) -> Option<(&str, &str)> {
    let (host, key) = arg.split_once('/')?;
    let (agent, id) = key.split_once(':')?;
    let host_ok = weft_hosts::list::check_name(host).is_ok() || host == weft_hosts::list::LOCAL;
    let agent_ok = !agent.is_empty()
        && agent
            .bytes()
            .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b"-_".contains(&b));
    let id_ok = !id.is_empty() && !id.contains(['/', ' ', '\t', '\n']);
    (host_ok && agent_ok && id_ok).then_some((host, key))
}

/// A session key written `HOST/agent:id` (how sessions of several hosts are told
/// apart) works wherever a key is taken: the key loses its host, which becomes
/// `--host HOST`. Only `local` and the names in the hosts list are read so; any other
/// argument is left as it is.
fn host_keys(mut args: Vec<std::ffi::OsString>) -> Result<Vec<std::ffi::OsString>, ExitCode> {
    let mut named: Option<String> = None;
    let mut hosts: Option<weft_hosts::Hosts> = None;
    for arg in args.iter_mut().skip(1) {
        let Some((host, key)) = arg.to_str().and_then(split_host_key) else {
            continue;
        };
        if host != weft_hosts::list::LOCAL {
            let list = hosts.get_or_insert_with(|| {
                weft_hosts::Hosts::load(&weft_client::Home::from_env()).unwrap_or_default()
            });
            if list.get(host).is_err() {
                continue;
            }
        }
        if named.as_deref().is_some_and(|n| n != host) {
            eprintln!("weft: these keys name different hosts; give one host's keys at a time");
            return Err(ExitCode::from(EXIT_USAGE));
        }
        named = Some(host.to_string());
        *arg = key.to_string().into();
    }
    let Some(host) = named else {
        return Ok(args);
    };
    // A host given as well must be the same one.
    let flag = args
        .iter()
        .position(|a| a == "--host")
        .and_then(|i| args.get(i + 1))
        .and_then(|v| v.to_str().map(String::from))
        .or_else(|| {
            args.iter()
                .find_map(|a| a.to_str()?.strip_prefix("--host=").map(String::from))
        })
        .or_else(|| std::env::var("WEFT_HOST").ok().filter(|h| !h.is_empty()));
    match flag {
        Some(given) if given == host => {}
        Some(given) => {
            eprintln!("weft: the key names host {host}, but --host (or WEFT_HOST) says {given}");
            return Err(ExitCode::from(EXIT_USAGE));
        }
        None if host == weft_hosts::list::LOCAL => {}
        None => {
            args.insert(1, "--host".into());
            args.insert(2, host.into());
        }
    }
    Ok(args)
}

fn init_logging() {
    let filter = tracing_subscriber::EnvFilter::try_from_env("WEFT_LOG")
        .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn"));
    tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr)
        .init();
}

fn main() -> ExitCode {
    let args = match host_keys(std::env::args_os().collect()) {
        Ok(args) => args,
        Err(code) => return code,
    };
    let cli = Cli::parse_from(args);
    if let Command::Matrix { args } = &cli.command {
        // Its own program (its own workspace: matrix-sdk's SQLite cannot link beside
        // Weft's), which reads the password from this terminal or stdin.
        if cli
            .host
            .as_deref()
            .is_some_and(|h| !h.is_empty() && h != "local")
        {
            eprintln!("weft: weft matrix acts on this machine only; --host (or WEFT_HOST) cannot be used with it");
            return ExitCode::from(EXIT_USAGE);
        }
        return matrix::exec(args);
    }
    let home = weft_client::Home::from_env();
    match &cli.command {
        Command::Daemon {
            command: daemon::DaemonCommand::Run { on_demand, .. },
        } => {
            if *on_demand {
                // Leave the session of the client that started us: its terminal's
                // hangup or Ctrl-C must not reach the kernel service.
                let _ = nix::unistd::setsid();
            }
            daemon::log_to(&home, !*on_demand);
        }
        _ => init_logging(),
    }
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("weft: cannot start: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(async move {
        if let Err(code) = use_host(cli.host.as_deref(), &cli.command).await {
            return code;
        }
        match cli.command {
            Command::Run(args) => run::run(args).await,
            Command::Merge(args) => worktrees::merge(args).await,
            Command::Worktrees {
                command: Some(worktrees::WorktreesCommand::Run { name, repo }),
                ..
            } => worktrees::run(name, repo).await,
            Command::Worktrees {
                command: None,
                json,
                repo,
            } => worktrees::list(json, repo).await,
            Command::Wait { key, json } => verbs::wait(key, json).await,
            Command::Stop { key } => verbs::stop(key).await,
            Command::Undo { key } => restore::undo(key).await,
            Command::Restore(args) => restore::restore(args).await,
            Command::Diff(args) => restore::diff(args).await,
            Command::Steer { key, attach, text } => verbs::steer(key, text, attach).await,
            Command::Dequeue { key, task_id } => verbs::dequeue(key, task_id).await,
            Command::Requeue { key, task_id, to } => verbs::requeue(key, task_id, to).await,
            Command::Inbox { json } => verbs::inbox(json).await,
            Command::Answer {
                prompt_id,
                select,
                text,
                cancel,
            } => verbs::answer(prompt_id, select, text, cancel).await,
            Command::Attach { key } => tui::attach(key).await,
            Command::Sessions(args) => library::sessions(args).await,
            Command::History { key, json } => library::history(&key, json).await,
            Command::Search(args) => library::search(args).await,
            Command::Usage(args) => library::usage(args).await,
            Command::Fork(args) => library::fork(args).await,
            Command::Agents {
                command: Some(agents::AgentsCommand::Install { name, version }),
                ..
            } => agents::install(&name, version).await,
            Command::Agents {
                command: Some(c @ agents::AgentsCommand::Warm { .. }),
                ..
            } => agents::warm(c).await,
            Command::Agents {
                command: None,
                json,
            } => list::agents(json).await,
            Command::Tools(args) => list::tools(args).await,
            Command::Check(args) => guard::check(args),
            Command::Sandbox(args) => guard::sandbox(args),
            Command::Trust(args) => trust::trust(args).await,
            Command::Accounts { command } => accounts::run(command).await,
            Command::Skills { command } => skills::run(command).await,
            Command::Mcp { command } => mcp::run(command).await,
            Command::Serve(args) => serve::serve(args).await,
            Command::Tokens { command } => tokens::run(command),
            Command::Proxy => proxy::proxy().await,
            Command::Matrix { .. } => unreachable!("run before the runtime starts"),
            Command::Hosts { command } => hosts::run(command).await,
            Command::Forward(args) => forward::forward(args).await,
            Command::Tui(args) => tui::tui(args).await,
            Command::Daemon { command } => match command {
                daemon::DaemonCommand::Run { listen, .. } => daemon::run_daemon(listen).await,
                daemon::DaemonCommand::Status { json } => daemon::status(json).await,
                daemon::DaemonCommand::Stop => daemon::stop().await,
            },
        }
    })
}
