//! `weft hosts add|list|remove|status|forward`: the machines this one reaches over SSH
//! (crates/hosts), `--host NAME`'s connection to one of them, and a host's ports on
//! this machine.

use std::process::ExitCode;
use std::time::Instant;

use clap::Subcommand;
use weft_client::Home;
use weft_hosts::status::{version_note, HostStatus};
use weft_hosts::{HostError, Hosts, Ssh};
use weft_protocol::verb;

use crate::client;
use crate::list::print_json;

#[derive(Subcommand)]
pub(crate) enum HostsCommand {
    /// Add a host: anything `ssh` accepts (`user@host`, a Host alias of ~/.ssh/config).
    /// First contact copies this weft there (~/.local/share/weft/VERSION/weft). Or a
    /// `weft serve` reached straight over TLS: `wss://HOST:PORT --fingerprint SHA256`
    /// (its key pinned; the token in WEFT_TOKEN).
    Add {
        /// What to call it (`--host NAME`).
        name: String,
        /// The ssh destination, or `wss://HOST:PORT`.
        destination: String,
        /// For a `wss://` host: the fingerprint `weft serve --print-token` shows.
        #[arg(long)]
        fingerprint: Option<String>,
    },
    /// The hosts (`local`, this machine, is always there).
    List {
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Stop Weft's daemon on a host, remove the binaries Weft put there and forget the
    /// host; its sessions and state stay there unless `--purge`.
    Remove {
        /// The host.
        name: String,
        /// Also remove Weft's state there (its WEFT_HOME: sessions, accounts, library).
        #[arg(long)]
        purge: bool,
    },
    /// Each host's daemon: reachable, version, sessions, running turns, questions
    /// waiting, agent processes with their memory, idle exit.
    Status {
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Only this machine's entry (what `status` runs on each host over ssh).
        #[arg(long, hide = true)]
        here: bool,
    },
    /// Open a host's port here (a worktree's dev server): `NAME PORT[:LOCALPORT]`
    /// listens on 127.0.0.1:LOCALPORT (default: PORT) through the host's shared ssh
    /// connection (`ssh -O forward`); `--list` the forwards, `--cancel NAME PORT` one.
    Forward {
        /// The host.
        #[arg(required_unless_present = "list")]
        name: Option<String>,
        /// PORT or PORT:LOCALPORT (with --cancel: the host's PORT).
        #[arg(required_unless_present = "list")]
        port: Option<String>,
        /// List the forwards, each with whether it still listens.
        #[arg(long, conflicts_with = "cancel")]
        list: bool,
        /// Cancel the forward of the host's PORT.
        #[arg(long)]
        cancel: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

pub(crate) async fn run(command: HostsCommand) -> ExitCode {
    let home = Home::from_env();
    match command {
        HostsCommand::Add {
            name,
            destination,
            fingerprint,
        } => add(&home, &name, &destination, fingerprint).await,
        HostsCommand::List { json } => list(&home, json),
        HostsCommand::Remove { name, purge } => remove(&home, &name, purge).await,
        HostsCommand::Status { json, here: true } => match here().await {
            Ok(status) if json => print_json(&status),
            Ok(status) => {
                print_status(&[status]);
                ExitCode::SUCCESS
            }
            Err(code) => code,
        },
        HostsCommand::Status { json, here: false } => status(&home, json).await,
        HostsCommand::Forward {
            list: true, json, ..
        } => forwards(&home, json).await,
        HostsCommand::Forward {
            name: Some(name),
            port: Some(port),
            cancel,
            json,
            ..
        } => forward(&home, &name, &port, cancel, json).await,
        HostsCommand::Forward { .. } => {
            eprintln!(
                "weft: weft hosts forward NAME PORT[:LOCALPORT], --list, or --cancel NAME PORT"
            );
            ExitCode::from(crate::EXIT_USAGE)
        }
    }
}

async fn forwards(home: &Home, json: bool) -> ExitCode {
    let all = weft_hosts::forward::list(home).await;
    if json {
        return print_json(&all);
    }
    if all.is_empty() {
        out!("no forwards (weft hosts forward NAME PORT[:LOCALPORT])");
    }
    for f in &all {
        out!(
            "{}:{}\t{}\t{}",
            f.forward.host,
            f.forward.port,
            f.forward.url(),
            if f.listening {
                "listening"
            } else {
                "gone (its ssh connection ended)"
            }
        );
    }
    ExitCode::SUCCESS
}

async fn forward(home: &Home, name: &str, spec: &str, cancel: bool, json: bool) -> ExitCode {
    let host = match Hosts::load(home).and_then(|h| h.get(name).cloned()) {
        Ok(h) => h,
        Err(e) => return failed(&e),
    };
    let ssh = Ssh::from_env(home);
    if cancel {
        let port = match spec.parse::<u16>() {
            Ok(p) => p,
            Err(_) => {
                return failed(&HostError::Invalid(format!("{spec:?} is not a port")));
            }
        };
        return match weft_hosts::forward::cancel(home, &ssh, &host, port).await {
            Ok(gone) if json => print_json(&gone),
            Ok(gone) => {
                for f in gone {
                    out!("{name}:{}: no longer at {}", f.port, f.url());
                }
                ExitCode::SUCCESS
            }
            Err(e) => failed(&e),
        };
    }
    let (port, local) = match weft_hosts::forward::parse(spec) {
        Ok(p) => p,
        Err(e) => return failed(&e),
    };
    match weft_hosts::forward::start(home, &ssh, &host, port, local).await {
        Ok(f) if json => print_json(&f),
        Ok(f) => {
            out!("{name}:{port} at {}", f.url());
            ExitCode::SUCCESS
        }
        Err(e) => failed(&e),
    }
}

fn failed(e: &HostError) -> ExitCode {
    eprintln!("weft: {e}");
    match e {
        HostError::Invalid(_) | HostError::Unknown(_) => ExitCode::from(crate::EXIT_USAGE),
        _ => ExitCode::FAILURE,
    }
}

async fn add(home: &Home, name: &str, destination: &str, fingerprint: Option<String>) -> ExitCode {
    let mut hosts = match Hosts::load(home) {
        Ok(h) => h,
        Err(e) => return failed(&e),
    };
    let direct = destination.starts_with("wss://");
    if direct != fingerprint.is_some() {
        return failed(&HostError::Invalid(if direct {
            "a wss:// host needs its key's --fingerprint (weft serve --print-token shows it)".into()
        } else {
            "--fingerprint is for a wss:// host (an ssh host is checked by ssh's known_hosts)"
                .into()
        }));
    }
    match hosts.add(name, destination) {
        Ok(host) => host.fingerprint = fingerprint,
        Err(e) => return failed(&e),
    }
    if direct {
        if let Err(e) = hosts.save(home) {
            return failed(&e);
        }
        let Ok(host) = hosts.get(name).cloned() else {
            return ExitCode::FAILURE;
        };
        return match weft_hosts::direct::connect(&host, weft_hosts::remote_hello("cli")).await {
            Ok((client, _events)) => {
                out!(
                    "host {name} ({destination}): weft {}, its key pinned",
                    client.welcome().version
                );
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("weft: host {name} was added, but it could not be reached: {e}");
                ExitCode::FAILURE
            }
        };
    }
    if let Err(e) = hosts.save(home) {
        return failed(&e);
    }
    // At a terminal, ssh may ask there (a new host key, a passphrase).
    let ssh = if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        Ssh::from_env(home).prompting()
    } else {
        Ssh::from_env(home)
    };
    let started = Instant::now();
    match weft_hosts::link::ready(home, &ssh, name, true).await {
        Ok(host) => {
            out!(
                "host {name} ({destination}): weft {} at {}/.local/share/weft/{}/weft ({:.1} s)",
                weft_client::VERSION,
                host.home.as_deref().unwrap_or("~"),
                weft_client::VERSION,
                started.elapsed().as_secs_f64()
            );
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "weft: host {name} was added, but first contact failed (any command with \
                 --host {name} tries again):"
            );
            failed(&e)
        }
    }
}

fn list(home: &Home, json: bool) -> ExitCode {
    let hosts = match Hosts::load(home) {
        Ok(h) => h,
        Err(e) => return failed(&e),
    };
    if json {
        let mut all = vec![serde_json::json!({"name": "local", "destination": ""})];
        all.extend(hosts.hosts.iter().map(|h| serde_json::json!(h)));
        return print_json(&all);
    }
    out!("local\t(this machine)");
    for h in &hosts.hosts {
        let installed = h
            .installed
            .as_ref()
            .map(|i| format!("weft {}", i.version))
            .unwrap_or_else(|| "not contacted yet".into());
        out!("{}\t{}\t{installed}", h.name, h.destination);
    }
    ExitCode::SUCCESS
}

/// Stops the daemon (with any weft Weft installed), removes what Weft installed, and
/// with `purge` its state; prints `weft-remove-ok` last.
fn remove_script(purge: bool) -> String {
    let purge = if purge {
        "rm -rf \"${WEFT_HOME:-$HOME/.weft}\"\n"
    } else {
        ""
    };
    format!(
        r#"d="$HOME/.local/share/weft"
for b in "$d"/*/weft; do
  if [ -x "$b" ] && "$b" daemon stop >/dev/null 2>&1; then break; fi
done
rm -rf "$d"
{purge}echo weft-remove-ok
"#
    )
}

async fn remove(home: &Home, name: &str, purge: bool) -> ExitCode {
    let mut hosts = match Hosts::load(home) {
        Ok(h) => h,
        Err(e) => return failed(&e),
    };
    let host = match hosts.get(name) {
        Ok(h) => h.clone(),
        Err(e) => return failed(&e),
    };
    let ssh = Ssh::from_env(home);
    let mut cmd = ssh.command(&host.destination, &["/bin/sh", "-s"]);
    let script = remove_script(purge);
    let ran = run_script(&mut cmd, &script).await;
    // The shared connection is Weft's too: nothing of it stays on the host.
    let _ = ssh
        .exit_master(&host.destination)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .await;
    let reached = matches!(&ran, Ok(out) if out.contains("weft-remove-ok"));
    // Its forwards lived in that connection.
    if let Err(e) = weft_hosts::forward::forget(home, name) {
        eprintln!("weft: {e}");
    }
    if let Err(e) = hosts.remove(name).and_then(|_| hosts.save(home)) {
        return failed(&e);
    }
    if reached {
        out!(
            "host {name}: Weft's daemon stopped, its binaries removed{}",
            if purge { ", its state removed" } else { "" }
        );
        ExitCode::SUCCESS
    } else {
        let why = ran
            .err()
            .unwrap_or_else(|| "the removal did not finish".into());
        eprintln!(
            "weft: host {name} is forgotten here, but it could not be reached ({why}): nothing \
             was stopped or removed there"
        );
        ExitCode::FAILURE
    }
}

/// Runs `cmd` with `script` on stdin: its stdout, or ssh's stderr.
async fn run_script(cmd: &mut tokio::process::Command, script: &str) -> Result<String, String> {
    use tokio::io::AsyncWriteExt;
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot run ssh: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(script.as_bytes()).await;
    }
    let out = tokio::time::timeout(std::time::Duration::from_secs(90), child.wait_with_output())
        .await
        .map_err(|_| "no answer within 90 s".to_string())?
        .map_err(|e| e.to_string())?;
    if out.status.success() {
        Ok(String::from_utf8_lossy(&out.stdout).into_owned())
    } else {
        Err(String::from_utf8_lossy(&out.stderr).trim().to_string())
    }
}

/// This machine's entry: its daemon's numbers (none runs: zeros and no version).
pub(crate) async fn here() -> Result<HostStatus, ExitCode> {
    let mut status = HostStatus {
        name: "local".into(),
        reachable: true,
        ..HostStatus::default()
    };
    let Some(daemon) = client::connect_existing().await? else {
        return Ok(status);
    };
    let d = daemon.send(verb::DaemonStatus {}).await?;
    let sessions = daemon
        .send(verb::ListSessions {
            workdir: None,
            archived: None,
        })
        .await?;
    status.version = Some(d.version);
    status.sessions = u32::try_from(sessions.len()).unwrap_or(u32::MAX);
    status.running = d.busy_sessions;
    status.questions = d.pending;
    status.idle_exit_secs = Some(d.idle_secs);
    status.agents = weft_hosts::status::processes_under(d.pid);
    Ok(status)
}

/// A `wss://` host's entry, from its daemon's status over the pinned TLS connection
/// (its processes are not seen from here).
async fn direct_status(host: &weft_hosts::Host) -> Result<HostStatus, String> {
    let (client, _events) =
        weft_hosts::direct::connect(host, weft_hosts::remote_hello("cli")).await?;
    let d = client
        .send(verb::DaemonStatus {})
        .await
        .map_err(|e| e.message)?;
    let sessions = client
        .send(verb::ListSessions {
            workdir: None,
            archived: None,
        })
        .await
        .map_err(|e| e.message)?;
    Ok(HostStatus {
        version: Some(d.version),
        sessions: u32::try_from(sessions.len()).unwrap_or(u32::MAX),
        running: d.busy_sessions,
        questions: d.pending,
        idle_exit_secs: Some(d.idle_secs),
        ..HostStatus::default()
    })
}

/// One host's entry, computed there by its own weft.
async fn remote(home: &Home, ssh: &Ssh, host: weft_hosts::Host) -> HostStatus {
    let mut status = HostStatus {
        name: host.name.clone(),
        destination: host.destination.clone(),
        ..HostStatus::default()
    };
    if host.direct() {
        match direct_status(&host).await {
            Ok(there) => {
                status = HostStatus {
                    name: status.name,
                    destination: status.destination,
                    reachable: true,
                    ..there
                };
                status.note = status
                    .version
                    .as_deref()
                    .and_then(|v| version_note(v, weft_client::VERSION, false))
                    .or_else(|| {
                        Some("over TLS: its agent processes are listed over ssh only".into())
                    });
            }
            Err(why) => status.note = Some(why),
        }
        return status;
    }
    let asked = async {
        let host = weft_hosts::link::ready(home, ssh, &host.name, false)
            .await
            .map_err(|e| e.to_string())?;
        let bin = weft_hosts::remote_binary(
            host.home.as_deref().unwrap_or_default(),
            weft_client::VERSION,
        );
        let mut cmd = ssh.command(
            &host.destination,
            &[&bin, "hosts", "status", "--here", "--json"],
        );
        let out = run_script(&mut cmd, "").await?;
        // A login shell's rc file may have printed first: the JSON starts at its
        // first field.
        let json = out
            .find("{\n  \"name\"")
            .map_or(out.as_str(), |at| &out[at..]);
        serde_json::from_str::<HostStatus>(json.trim()).map_err(|e| e.to_string())
    };
    match asked.await {
        Ok(there) => {
            status = HostStatus {
                name: status.name,
                destination: status.destination,
                reachable: true,
                ..there
            };
            status.note = status
                .version
                .as_deref()
                .and_then(|v| version_note(v, weft_client::VERSION, false));
        }
        Err(why) => status.note = Some(why),
    }
    status
}

async fn status(home: &Home, json: bool) -> ExitCode {
    let hosts = match Hosts::load(home) {
        Ok(h) => h,
        Err(e) => return failed(&e),
    };
    let ssh = Ssh::from_env(home);
    let asks: Vec<_> = hosts
        .hosts
        .into_iter()
        .map(|h| {
            let (home, ssh) = (home.clone(), ssh.clone());
            tokio::spawn(async move { remote(&home, &ssh, h).await })
        })
        .collect();
    let mut all = match here().await {
        Ok(local) => vec![local],
        Err(code) => return code,
    };
    for ask in asks {
        if let Ok(s) = ask.await {
            all.push(s);
        }
    }
    if json {
        return print_json(&all);
    }
    print_status(&all);
    ExitCode::SUCCESS
}

fn print_status(all: &[HostStatus]) {
    for s in all {
        let dest = if s.destination.is_empty() {
            "(this machine)"
        } else {
            &s.destination
        };
        if !s.reachable {
            out!("{}\t{dest}\tunreachable", s.name);
        } else if let Some(version) = &s.version {
            out!(
                "{}\t{dest}\tweft {version}\t{} session(s), {} running, {} question(s) waiting, idle exit after {} s",
                s.name,
                s.sessions,
                s.running,
                s.questions,
                s.idle_exit_secs.unwrap_or_default()
            );
        } else {
            out!("{}\t{dest}\tno daemon running", s.name);
        }
        for a in &s.agents {
            out!("\tpid {}\t{}\t{} MB", a.pid, a.agent, a.rss_bytes >> 20);
        }
        if let Some(note) = &s.note {
            out!("\t{note}");
        }
    }
}

/// One host's sessions (`None`: this machine), or why they could not be read.
async fn sessions_of(
    home: &Home,
    host: Option<weft_hosts::Host>,
    query: weft_protocol::LibraryQuery,
) -> Result<Vec<weft_protocol::LibrarySession>, String> {
    let daemon = match &host {
        None => client::connect().await,
        Some(h) => {
            let ssh = Ssh::from_env(home);
            let ready = weft_hosts::link::ready(home, &ssh, &h.name, false)
                .await
                .map_err(|e| e.to_string())?;
            client::connect_remote(&ready).await
        }
    }
    .map_err(|_| "not reached (said above)".to_string())?;
    daemon
        .send(query)
        .await
        .map_err(|_| "its daemon failed (said above)".into())
}

/// `weft sessions --every-host`: this machine's sessions and every host's, newest
/// first, each key written `HOST/agent:id` (which every command takes).
pub(crate) async fn sessions_everywhere(
    query: weft_protocol::LibraryQuery,
    json: bool,
) -> ExitCode {
    let home = Home::from_env();
    let hosts = match Hosts::load(&home) {
        Ok(h) => h,
        Err(e) => return failed(&e),
    };
    let local = {
        let (home, query) = (home.clone(), query.clone());
        tokio::spawn(async move { sessions_of(&home, None, query).await })
    };
    let mut asks = vec![(weft_hosts::list::LOCAL.to_string(), local)];
    for host in hosts.hosts {
        let (home, query) = (home.clone(), query.clone());
        let name = host.name.clone();
        asks.push((
            name,
            tokio::spawn(async move { sessions_of(&home, Some(host), query).await }),
        ));
    }
    let mut all = Vec::new();
    let mut failed_any = false;
    for (name, ask) in asks {
        match ask.await {
            Ok(Ok(list)) => all.extend(list.into_iter().map(|s| (name.clone(), s))),
            Ok(Err(why)) => {
                eprintln!("weft: host {name}: {why}");
                failed_any = true;
            }
            Err(e) => {
                eprintln!("weft: host {name}: {e}");
                failed_any = true;
            }
        }
    }
    all.sort_by_key(|s| std::cmp::Reverse(s.1.updated_at));
    if json {
        let rows: Vec<serde_json::Value> = all
            .iter()
            .map(|(host, s)| {
                let mut row = serde_json::json!(s);
                row["host"] = serde_json::json!(host);
                row["hostKey"] = serde_json::json!(format!("{host}/{}", s.session_key));
                row
            })
            .collect();
        let code = print_json(&rows);
        return if failed_any { ExitCode::FAILURE } else { code };
    }
    for (host, s) in &all {
        out!(
            "{:<9} {:<60} {:<7} {}  ({})",
            crate::library::age(s.updated_at),
            format!("{host}/{}", s.session_key),
            s.agent,
            s.title,
            s.workdir.as_deref().unwrap_or("?")
        );
    }
    if failed_any {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// Runs this weft's `args` on `host` with its own binary there, its output shown here:
/// for what acts on a machine itself rather than through its daemon (`weft agents
/// install`). Each argument must be a plain word (see `weft_hosts::plain_word`): the
/// host's login shell reads the command line.
pub(crate) async fn run_there(host: &weft_hosts::Host, args: &[&str]) -> ExitCode {
    let home = Home::from_env();
    let ssh = Ssh::from_env(&home);
    let bin = weft_hosts::remote_binary(
        host.home.as_deref().unwrap_or_default(),
        weft_client::VERSION,
    );
    if let Some(bad) = args.iter().find(|a| !weft_hosts::plain_word(a)) {
        eprintln!(
            "weft: {bad:?} cannot be passed to host {} as it is",
            host.name
        );
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let mut words = vec![bin.as_str()];
    words.extend_from_slice(args);
    let status = ssh
        .command(&host.destination, &words)
        .stdin(std::process::Stdio::null())
        .status()
        .await;
    match status.map(|s| s.code()) {
        Ok(Some(0)) => ExitCode::SUCCESS,
        Ok(Some(255)) | Err(_) => {
            eprintln!("weft: host {} could not be reached over ssh", host.name);
            ExitCode::FAILURE
        }
        Ok(Some(code)) => ExitCode::from(u8::try_from(code).unwrap_or(1)),
        Ok(None) => ExitCode::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn removal_stops_the_daemon_first_and_purges_only_when_asked() {
        let keep = remove_script(false);
        assert!(keep.find("daemon stop") < keep.find("rm -rf"), "{keep}");
        assert!(!keep.contains(".weft\""), "{keep}");
        assert!(remove_script(true).contains("rm -rf \"${WEFT_HOME:-$HOME/.weft}\""));
    }
}
