//! A host's ports here, through its shared ssh connection (`weft hosts forward`, and
//! `weft forward KEY` for a remote worktree's dev server), against a real sshd on
//! loopback (see `hosts_rig`).

use std::time::Duration;

use serde_json::Value;

use super::hosts::{add, assert_nothing_runs_as, BASH};
use super::hosts_rig::Rig;
use super::support::git;

/// A port free on loopback now.
fn free_local_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"))
}

/// The first line `127.0.0.1:port` says to a new connection (an error if none listens).
fn greeting(port: u16) -> std::io::Result<String> {
    use std::io::BufRead as _;
    let stream = std::net::TcpStream::connect(("127.0.0.1", port))?;
    stream.set_read_timeout(Some(Duration::from_secs(20)))?;
    let mut line = String::new();
    std::io::BufReader::new(stream).read_line(&mut line)?;
    Ok(line.trim_end().to_string())
}

#[test]
fn a_hosts_port_opens_here_through_the_shared_connection_and_closes_when_cancelled() {
    let Some(mut rig) = Rig::new() else { return };
    let (user, _) = rig.user(BASH);
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("devbox", port, &user, "");
    add(&rig, "devbox", "devbox");
    // A dev server on the host's loopback: it greets each connection.
    let server = std::net::TcpListener::bind("127.0.0.1:0").unwrap_or_else(|e| panic!("{e}"));
    let remote = server
        .local_addr()
        .map(|a| a.port())
        .unwrap_or_else(|e| panic!("{e}"));
    std::thread::spawn(move || {
        for stream in server.incoming().flatten() {
            use std::io::Write as _;
            let mut stream = stream;
            let _ = stream.write_all(b"hello from the host\n");
        }
    });
    // No shared connection open (first contact's ended): the forward opens one that
    // stays for it.
    let control = format!("ControlPath={}/ssh/cm-%C", rig.env.home.path().display());
    let ended = std::process::Command::new("ssh")
        .arg("-F")
        .arg(rig.config())
        .args(["-o", &control, "-O", "exit", "devbox"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(ended.status.success(), "{ended:?}");
    let local = free_local_port();
    let started: Value = serde_json::from_str(&rig.ok(&[
        "hosts",
        "forward",
        "devbox",
        &format!("{remote}:{local}"),
        "--json",
    ]))
    .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(started["local"], local);
    assert_eq!(
        greeting(local).unwrap_or_else(|e| panic!("the forward: {e}")),
        "hello from the host"
    );
    let listed: Value = serde_json::from_str(&rig.ok(&["hosts", "forward", "--list", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["host"], "devbox");
    assert_eq!(listed[0]["port"], remote);
    assert_eq!(listed[0]["local"], local);
    assert_eq!(listed[0]["listening"], true);
    // No ssh of its own: the shared connection (ssh's master) listens on the port.
    let master = std::process::Command::new("ss")
        .args(["-ltnpH", &format!("sport = :{local}")])
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    if !master.is_empty() {
        assert!(master.contains("\"ssh\""), "{master}");
    }

    rig.ok(&[
        "hosts",
        "forward",
        "--cancel",
        "devbox",
        &remote.to_string(),
    ]);
    assert!(greeting(local).is_err(), "still forwarded after --cancel");
    let listed: Value = serde_json::from_str(&rig.ok(&["hosts", "forward", "--list", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed, serde_json::json!([]));
    // A port that is not forwarded cannot be cancelled.
    let out = rig.weft(&[
        "hosts",
        "forward",
        "--cancel",
        "devbox",
        &remote.to_string(),
    ]);
    assert!(!out.status.success());
    rig.ok(&["hosts", "remove", "devbox", "--purge"]);
    // The connection the forward opened ended with the host's removal.
    assert_nothing_runs_as(&user);
}

#[test]
fn a_remote_worktree_sessions_dev_server_is_forwarded_by_its_key_and_cancelled() {
    let Some(mut rig) = Rig::new() else { return };
    let (user, home) = rig.user(BASH);
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("devbox", port, &user, "");
    add(&rig, "devbox", "devbox");
    // A repository of the host's user, and a session in a worktree of it there.
    let repo = home.join("app");
    std::fs::create_dir_all(&repo).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(repo.join("a.txt"), "a\n").unwrap_or_else(|e| panic!("{e}"));
    git(&repo, &["init", "-q", "-b", "main"]);
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let out = std::process::Command::new("chown")
        .args(["-R", &format!("{user}:{user}"), &repo.display().to_string()])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(out.status.success(), "chown: {out:?}");
    let repo_dir = repo.display().to_string();
    let run: Value = serde_json::from_str(&rig.ok(&[
        "--host",
        "devbox",
        "run",
        "--agent",
        "echo",
        "--workdir",
        &repo_dir,
        "--worktree",
        "preview",
        "--yes",
        "--json",
        "ports",
    ]))
    .unwrap_or_else(|e| panic!("{e}"));
    let key = run["sessionKey"].as_str().unwrap_or_default().to_string();
    let worktrees: Value =
        serde_json::from_str(&rig.ok(&["--host", "devbox", "worktrees", "--json"]))
            .unwrap_or_else(|e| panic!("{e}"));
    let ports = worktrees
        .as_array()
        .and_then(|a| a.iter().find(|w| w["name"] == "preview"))
        .and_then(|w| w["ports"].as_str())
        .unwrap_or_else(|| panic!("no worktree preview in {worktrees}"))
        .to_string();
    let first: u16 = ports
        .split('-')
        .next()
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("ports {ports}"));
    // Its dev server on the host's first port: it greets each connection.
    let server = std::net::TcpListener::bind(("127.0.0.1", first))
        .unwrap_or_else(|e| panic!("port {first} of {ports}: {e}"));
    std::thread::spawn(move || {
        for stream in server.incoming().flatten() {
            use std::io::Write as _;
            let mut stream = stream;
            let _ = stream.write_all(b"the dev server\n");
        }
    });

    // By `--host` and the key: the host's port here (another local port: on loopback
    // the host's own number is taken by the host's server).
    let forwarded: Value =
        serde_json::from_str(&rig.ok(&["--host", "devbox", "forward", &key, "--json"]))
            .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(forwarded["host"], "devbox", "{forwarded}");
    assert_eq!(forwarded["sessionKey"], key.as_str(), "{forwarded}");
    assert_eq!(forwarded["remotePort"], first, "{forwarded}");
    let local = forwarded["localPort"].as_u64().unwrap_or_default() as u16;
    assert_ne!(local, first);
    assert_eq!(
        forwarded["url"].as_str(),
        Some(format!("http://127.0.0.1:{local}/").as_str())
    );
    assert_eq!(
        greeting(local).unwrap_or_else(|e| panic!("the forward: {e}")),
        "the dev server"
    );
    // Asked again by `HOST/KEY`: the same forward, not a second one; its URL printed.
    let again = rig.ok(&["forward", &format!("devbox/{key}")]);
    assert_eq!(again.trim(), format!("http://127.0.0.1:{local}/"));
    let listed: Value = serde_json::from_str(&rig.ok(&["hosts", "forward", "--list", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    // A port outside its range is refused.
    let out = rig.weft(&[
        "--host",
        "devbox",
        "forward",
        &key,
        "--port",
        &(first - 1).to_string(),
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");

    rig.ok(&["forward", &format!("devbox/{key}"), "--cancel"]);
    assert!(greeting(local).is_err(), "still forwarded after --cancel");

    // A session that is not in a worktree has no port range: said so.
    let plain: Value = serde_json::from_str(
        &rig.ok(&["--host", "devbox", "run", "--agent", "echo", "--json", "hi"]),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let plain_key = plain["sessionKey"].as_str().unwrap_or_default();
    let out = rig.weft(&["--host", "devbox", "forward", plain_key]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("not in a Weft worktree") && said.contains("no port range"),
        "{said}"
    );
    rig.ok(&["hosts", "remove", "devbox", "--purge"]);
    assert_nothing_runs_as(&user);
}
