//! `weft [--host NAME] forward KEY [--port N] [--cancel] [--json]`: a session's dev
//! server opened on this machine. The session's worktree has a port range (its
//! `WEFT_PORT_RANGE`, from `listWorktrees`); its first port (or `--port N` within the
//! range) on the host is forwarded to `127.0.0.1` here through the host's shared ssh
//! connection (`weft_hosts::forward`, what `weft hosts forward` does). On this machine
//! there is nothing to forward: the worktree's own URL is printed.

use std::process::ExitCode;

use clap::Args;
use serde::Serialize;
use weft_client::Home;
use weft_hosts::forward::Forward;
use weft_hosts::{HostError, Ssh};
use weft_protocol::{verb, WorktreeInfo};

use crate::client;
use crate::list::print_json;

#[derive(Args)]
pub(crate) struct ForwardArgs {
    /// The session key (`agent:id`, or `HOST/agent:id`).
    key: String,
    /// This port of the worktree's range (default: its first).
    #[arg(long, value_name = "N")]
    port: Option<u16>,
    /// Stop forwarding it.
    #[arg(long)]
    cancel: bool,
    /// Print JSON: {host, sessionKey, remotePort, localPort, url}.
    #[arg(long)]
    json: bool,
}

/// What `--json` prints.
#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Forwarded {
    host: String,
    session_key: String,
    remote_port: u16,
    local_port: u16,
    url: String,
}

/// `first-last` read as a range.
fn range(ports: &str) -> Option<(u16, u16)> {
    let (first, last) = ports.split_once('-').unwrap_or((ports, ports));
    let (first, last) = (first.trim().parse().ok()?, last.trim().parse().ok()?);
    (first > 0 && first <= last).then_some((first, last))
}

/// Whether `dir` is `root` or inside it.
fn within(dir: &str, root: &str) -> bool {
    dir == root || dir.starts_with(&format!("{}/", root.trim_end_matches('/')))
}

/// The port of `key`'s worktree to open: its first, or `asked` when in its range. The
/// worktree is the one that lists the session, else the one holding its `workdir`.
fn pick(
    key: &str,
    worktrees: &[WorktreeInfo],
    workdir: Option<&str>,
    asked: Option<u16>,
) -> Result<u16, String> {
    let Some(w) = worktrees
        .iter()
        .find(|w| w.sessions.iter().any(|k| k == key))
        .or_else(|| {
            let dir = workdir?;
            worktrees.iter().find(|w| within(dir, &w.path))
        })
    else {
        return Err(format!(
            "{key} is not in a Weft worktree, so it has no port range to forward \
             (weft run --worktree NAME starts a session in one; weft worktrees lists them)"
        ));
    };
    let Some((first, last)) = range(&w.ports) else {
        return Err(format!(
            "{key}'s worktree {} has no port range ({:?})",
            w.name, w.ports
        ));
    };
    match asked {
        None => Ok(first),
        Some(p) if (first..=last).contains(&p) => Ok(p),
        Some(p) => Err(format!(
            "port {p} is not in {key}'s worktree {}'s range {first}-{last}",
            w.name
        )),
    }
}

/// A local port for the host's `port`: the same number when it is free here, else
/// any free one (on a host reached over loopback the same number is the host's own).
fn local_port(port: u16) -> u16 {
    let free = |p: u16| {
        std::net::TcpListener::bind(("127.0.0.1", p))
            .and_then(|l| l.local_addr())
            .map(|a| a.port())
            .ok()
    };
    free(port).or_else(|| free(0)).unwrap_or(port)
}

/// `weft forward`.
pub(crate) async fn forward(args: ForwardArgs) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let worktrees: Vec<WorktreeInfo> = match daemon.send(verb::ListWorktrees { repo: None }).await {
        Ok(l) => l,
        Err(code) => return code,
    };
    // A session the worktree does not list (started there by hand): its folder says.
    let listed = worktrees.iter().any(|w| w.sessions.contains(&args.key));
    let workdir = if listed {
        None
    } else {
        let asked = verb::ListSessions {
            workdir: None,
            archived: None,
        };
        match daemon.send(asked).await {
            Ok(all) => all
                .into_iter()
                .find(|s| s.session_key == args.key)
                .map(|s| s.worktree.map_or(s.workdir, |w| w.path)),
            Err(code) => return code,
        }
    };
    drop(daemon);
    let port = match pick(&args.key, &worktrees, workdir.as_deref(), args.port) {
        Ok(p) => p,
        Err(why) => {
            eprintln!("weft: {why}");
            return ExitCode::from(crate::EXIT_USAGE);
        }
    };
    let Some(host) = client::host() else {
        // This machine: the dev server is here already.
        if args.cancel {
            eprintln!(
                "weft: {} runs on this machine: nothing is forwarded",
                args.key
            );
            return ExitCode::from(crate::EXIT_USAGE);
        }
        let url = format!("http://127.0.0.1:{port}/");
        return report(&args, "local", port, port, url);
    };
    if host.direct() {
        eprintln!(
            "weft: host {} is reached over wss://, not ssh: its ports cannot be forwarded",
            host.name
        );
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let home = Home::from_env();
    let ssh = Ssh::from_env(&home);
    if args.cancel {
        return match weft_hosts::forward::cancel(&home, &ssh, host, port).await {
            Ok(gone) if args.json => print_json(&gone),
            Ok(gone) => {
                for f in gone {
                    out!("{}:{}: no longer at {}", host.name, f.port, f.url());
                }
                ExitCode::SUCCESS
            }
            Err(e) => failed(&e),
        };
    }
    // Already forwarded and listening: that one.
    let open = weft_hosts::forward::list(&home)
        .await
        .into_iter()
        .find(|f| f.listening && f.forward.host == host.name && f.forward.port == port)
        .map(|f| f.forward);
    let forward: Forward = match open {
        Some(f) => f,
        None => {
            let local = local_port(port);
            match weft_hosts::forward::start(&home, &ssh, host, port, local).await {
                Ok(f) => f,
                Err(e) => return failed(&e),
            }
        }
    };
    report(&args, &host.name, port, forward.local, forward.url())
}

fn report(args: &ForwardArgs, host: &str, remote: u16, local: u16, url: String) -> ExitCode {
    if args.json {
        return print_json(&Forwarded {
            host: host.to_string(),
            session_key: args.key.clone(),
            remote_port: remote,
            local_port: local,
            url,
        });
    }
    out!("{url}");
    if host != "local" {
        eprintln!(
            "weft: {}'s port {remote} on {host} (`weft --host {host} forward {} --cancel` stops it)",
            args.key, args.key
        );
    }
    ExitCode::SUCCESS
}

fn failed(e: &HostError) -> ExitCode {
    eprintln!("weft: {e}");
    match e {
        HostError::Invalid(_) | HostError::Unknown(_) => ExitCode::from(crate::EXIT_USAGE),
        _ => ExitCode::FAILURE,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn wt(sessions: &[&str], ports: &str) -> WorktreeInfo {
        serde_json::from_value(serde_json::json!({
            "name": "one", "repo": "/r", "path": "/w/one", "branch": "weft/one",
            "base": "main", "ahead": 0, "behind": 0, "dirty": false, "ports": ports,
            "sessions": sessions, "setupLog": null,
        }))
        .unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn the_first_port_or_one_in_the_range_and_none_outside_a_worktree() {
        let all = [wt(&["echo:a"], "40000-40009")];
        assert_eq!(pick("echo:a", &all, None, None), Ok(40000));
        assert_eq!(pick("echo:a", &all, None, Some(40003)), Ok(40003));
        assert!(pick("echo:a", &all, None, Some(40010)).is_err());
        // Not listed by the worktree, but working in it.
        assert_eq!(pick("echo:b", &all, Some("/w/one/src"), None), Ok(40000));
        assert!(pick("echo:b", &all, Some("/w/one-other"), None).is_err());
        let none = pick("echo:b", &all, Some("/w"), None)
            .err()
            .unwrap_or_default();
        assert!(none.contains("no port range"), "{none}");
    }
}
