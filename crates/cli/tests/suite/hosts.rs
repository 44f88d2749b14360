//! Hosts over SSH against real OpenSSH servers on loopback (see `hosts_rig`): login
//! shells that broke other tools, a jump host, a link killed mid-turn, a host of
//! another architecture, and nothing of Weft left on a host after `hosts remove`.

use std::time::{Duration, Instant};

use serde_json::Value;
use weft_client::{Client, Event, Home};
use weft_protocol::{verb, Phase, ServerMessage, UniversalSnapshot};

use super::hosts_rig::Rig;
use super::support::stdout_json;

pub(super) const BASH: &str = "/bin/bash";
const FISH: &str = "/usr/bin/fish";
const CSH: &str = "/usr/bin/csh";

/// Adds `name` (reaching `destination`): how long first contact took.
pub(super) fn add(rig: &Rig, name: &str, destination: &str) -> Duration {
    let started = Instant::now();
    rig.ok(&["hosts", "add", name, destination]);
    started.elapsed()
}

/// Runs an echo turn on `host`: its final snapshot.
fn echo_turn(rig: &Rig, host: &str, prompt: &str) -> Value {
    let out = rig.weft(&["--host", host, "run", "--agent", "echo", "--json", prompt]);
    assert!(
        out.status.success(),
        "run on {host}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout_json(&out)
}

/// Nothing of the user's runs any more (sshd's session processes end a moment after
/// the shared connection does).
pub(super) fn assert_nothing_runs_as(user: &str) {
    let deadline = Instant::now() + Duration::from_secs(15);
    loop {
        let left = Rig::live_processes(user);
        if left.is_empty() {
            return;
        }
        assert!(
            Instant::now() < deadline,
            "still running as {user}: {left:?}"
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn bash_fish_and_csh_users_each_run_an_echo_turn_and_keep_nothing_running_once_removed() {
    let Some(mut rig) = Rig::new() else { return };
    let users: Vec<(String, &str)> = [("bash", BASH), ("fish", FISH), ("csh", CSH)]
        .into_iter()
        .map(|(name, shell)| (rig.user(shell).0, name))
        .collect();
    // Each login shell's rc file prints to stdout first, as some do: ssh passes that
    // on before Weft's own output.
    for (user, shell) in &users {
        let home = std::path::PathBuf::from(format!("/home/{user}"));
        let rc = match *shell {
            "bash" => home.join(".bashrc"),
            "fish" => home.join(".config/fish/config.fish"),
            _ => home.join(".cshrc"),
        };
        if let Some(dir) = rc.parent() {
            std::fs::create_dir_all(dir).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(&rc, format!("echo {shell}-banner\n")).unwrap_or_else(|e| panic!("{e}"));
        let owner = std::process::Command::new("chown")
            .args(["-R", &format!("{user}:{user}"), &home.display().to_string()])
            .status()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(owner.success());
    }
    let names: Vec<&str> = users.iter().map(|(u, _)| u.as_str()).collect();
    let (port, _) = rig.sshd(&names, "");
    for (user, shell) in &users {
        rig.alias(&format!("h-{shell}"), port, user, "");
    }
    for (user, shell) in &users {
        let host = format!("h-{shell}");
        let took = add(&rig, shell, &host);
        eprintln!("first contact with a {shell} user's host (copy + check): {took:?}");
        // The sandbox's helper sits beside weft there, as here.
        let dir = format!("/home/{user}/.local/share/weft/{}", weft_client::VERSION);
        for file in ["weft", "weft-sandbox-exec"] {
            let path = std::path::Path::new(&dir).join(file);
            assert!(path.is_file(), "{} is missing", path.display());
        }
        let turn = echo_turn(&rig, shell, &format!("hello from {shell}"));
        let key = turn["sessionKey"].as_str().unwrap_or_default().to_string();
        let text = turn["snapshot"]["text"].as_str().unwrap_or_default();
        assert!(text.contains(&format!("hello from {shell}")), "{turn}");
        // It ran there: in that user's home, by that user's daemon.
        let workdir = turn["snapshot"]["workdir"].as_str().unwrap_or_default();
        assert!(
            workdir.is_empty() || workdir.starts_with(&format!("/home/{user}")),
            "{workdir}"
        );
        let sessions = rig.ok(&["--host", shell, "sessions", "--all", "--json"]);
        assert!(sessions.contains(&key), "{sessions}");
        let inbox = rig.ok(&["--host", shell, "inbox", "--json"]);
        assert_eq!(inbox.trim(), "[]");
        // Weft's binary removed there by hand: the next command puts it back.
        std::fs::remove_dir_all(format!("/home/{user}/.local/share/weft"))
            .unwrap_or_else(|e| panic!("{e}"));
        let again = rig.ok(&["--host", shell, "sessions", "--all", "--json"]);
        assert!(again.contains(&key), "{again}");
        // `HOST/agent:id` names the host with the key, wherever a key is taken.
        let waited = rig.ok(&["wait", &format!("{shell}/{key}"), "--json"]);
        assert!(waited.contains(&format!("hello from {shell}")), "{waited}");
    }
    // One list over this machine and every host, each key with its host.
    let every: Value = serde_json::from_str(&rig.ok(&["sessions", "--every-host", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    for (_, shell) in &users {
        let row = every
            .as_array()
            .and_then(|rows| rows.iter().find(|r| r["host"] == *shell))
            .unwrap_or_else(|| panic!("no session of {shell} in {every}"));
        let key = row["sessionKey"].as_str().unwrap_or_default();
        assert_eq!(row["hostKey"], format!("{shell}/{key}"), "{row}");
    }
    let status: Value = serde_json::from_str(&rig.ok(&["hosts", "status", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    let all = status.as_array().cloned().unwrap_or_default();
    assert_eq!(all.len(), 4, "{status}");
    assert_eq!(all[0]["name"], "local");
    for (_, shell) in &users {
        let s = all
            .iter()
            .find(|s| s["name"] == *shell)
            .unwrap_or_else(|| panic!("no {shell} in {status}"));
        assert_eq!(s["destination"], format!("h-{shell}"));
        assert_eq!(s["reachable"], true, "{s}");
        assert_eq!(s["version"], weft_client::VERSION, "{s}");
        assert_eq!(s["sessions"], 1, "{s}");
        assert_eq!(s["running"], 0, "{s}");
        assert_eq!(s["questions"], 0, "{s}");
        assert!(s["agents"].is_array(), "{s}");
        assert!(s["idleExitSecs"].as_u64().is_some_and(|v| v > 0), "{s}");
    }
    for (user, shell) in &users {
        assert!(
            Rig::live_processes(user)
                .iter()
                .any(|p| p.contains("weft daemon run")),
            "no daemon ran as {user}"
        );
        rig.ok(&["hosts", "remove", shell]);
        assert_nothing_runs_as(user);
        assert!(!std::path::Path::new(&format!("/home/{user}/.local/share/weft")).exists());
        // Its sessions stay without --purge.
        assert!(std::path::Path::new(&format!("/home/{user}/.weft")).exists());
    }
    let list = rig.ok(&["hosts", "list"]);
    assert_eq!(list.trim(), "local\t(this machine)");
}

#[test]
fn a_host_alias_with_proxyjump_goes_through_the_jump_host() {
    let Some(mut rig) = Rig::new() else { return };
    let (jumper, _) = rig.user(BASH);
    let (target, _) = rig.user(FISH);
    // The jump host logs the forwarding it does (debug1), which proves the path.
    let (jump_port, jump_log) = rig.sshd(&[&jumper], "LogLevel DEBUG1");
    let (port, _) = rig.sshd(&[&target], "");
    rig.alias("jump", jump_port, &jumper, "");
    rig.alias("far", port, &target, "  ProxyJump jump\n");
    add(&rig, "far", "far");
    let turn = echo_turn(&rig, "far", "through the jump");
    assert!(turn["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("through the jump")));
    let log = std::fs::read_to_string(&jump_log).unwrap_or_default();
    assert!(
        log.contains(&format!("target 127.0.0.1 port {port}")),
        "the jump host forwarded nothing to port {port}"
    );
    rig.ok(&["hosts", "remove", "far", "--purge"]);
    assert_nothing_runs_as(&target);
    assert!(!std::path::Path::new(&format!("/home/{target}/.weft")).exists());
}

#[test]
fn a_host_of_another_architecture_gets_an_error_naming_it_and_nothing_installed() {
    let Some(mut rig) = Rig::new() else { return };
    let (user, home) = rig.user(BASH);
    // That host's sshd gives sessions a PATH whose `uname -m` says riscv64.
    let shim = home.join("shim");
    std::fs::create_dir_all(&shim).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        shim.join("uname"),
        "#!/bin/sh\nif [ \"$1\" = -m ]; then echo riscv64; else exec /bin/uname \"$@\"; fi\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(
        shim.join("uname"),
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let extra = format!(
        "SetEnv PATH={}:/usr/local/bin:/usr/bin:/bin",
        shim.display()
    );
    let (port, _) = rig.sshd(&[&user], &extra);
    rig.alias("odd", port, &user, "");
    let out = rig.weft(&["hosts", "add", "odd", "odd"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{err}");
    assert!(err.contains("host odd runs Linux on riscv64"), "{err}");
    assert!(
        err.contains(&format!(
            "~/.local/share/weft/{}/weft",
            weft_client::VERSION
        )),
        "{err}"
    );
    assert!(!home.join(".local/share/weft").exists());
    // Its status says why it is not usable.
    let status: Value = serde_json::from_str(&rig.ok(&["hosts", "status", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    let odd = &status[1];
    assert_eq!(odd["name"], "odd", "{status}");
    assert_eq!(odd["reachable"], false, "{status}");
    assert!(
        odd["note"].as_str().is_some_and(|n| n.contains("riscv64")),
        "{status}"
    );
    // A command for that host says the same and does nothing.
    let out = rig.weft(&["--host", "odd", "sessions"]);
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("riscv64"));
}

#[test]
fn local_only_commands_refuse_a_host() {
    let env = super::support::Env::new();
    for args in [
        &["--host", "gpu", "daemon", "status"][..],
        &["--host", "gpu", "sandbox", "--probe"][..],
        &["--host", "gpu", "hosts", "list"][..],
    ] {
        let out = env.weft(args);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains("acts on this machine only"), "{err}");
    }
    let out = env.weft(&["--host", "gpu", "sessions"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no host named \"gpu\""));
    // A key's host and --host must agree.
    let out = env.weft(&["--host", "gpu", "wait", "local/echo:abc"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("the key names host local"));
}

/// Subscribes to `key` over a fresh link to `host`: the client, its events, the ssh
/// pid, and the snapshot with its seq.
async fn subscribe(
    rig: &Rig,
    host: &str,
    key: &str,
    hello: weft_protocol::Hello,
) -> (
    Client,
    tokio::sync::mpsc::Receiver<Event>,
    u32,
    u64,
    UniversalSnapshot,
) {
    let home = Home::at(rig.env.home.path());
    let ssh = weft_hosts::Ssh::with_config(&home, Some(rig.config()));
    let hosts = weft_hosts::Hosts::load(&home).unwrap_or_else(|e| panic!("{e}"));
    let record = hosts.get(host).unwrap_or_else(|e| panic!("{e}"));
    let link = weft_hosts::link::open(&ssh, record).unwrap_or_else(|e| panic!("{e}"));
    let pid = link.pid().unwrap_or_default();
    let (client, events) = Client::connect_over(link, hello)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let at = client
        .send(verb::Subscribe {
            session_key: key.to_string(),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    (client, events, pid, at.seq, at.snapshot)
}

/// The next patch of `key`: its first seq, last seq and the snapshot after it.
async fn next_patch(
    events: &mut tokio::sync::mpsc::Receiver<Event>,
    key: &str,
    snap: &UniversalSnapshot,
) -> Option<(u64, u64, UniversalSnapshot)> {
    loop {
        match tokio::time::timeout(Duration::from_secs(60), events.recv()).await {
            Ok(Some(Event::Message(ServerMessage::Patch(p)))) if p.session_key == key => {
                let next = weft_protocol::apply(snap, &p.patch);
                return Some((p.first_seq(), p.seq, next));
            }
            Ok(Some(Event::Message(ServerMessage::Resync { .. }))) => {
                panic!("the daemon dropped patches for a client that reads")
            }
            Ok(Some(Event::Disconnected(_)) | None) | Err(_) => return None,
            Ok(Some(_)) => {}
        }
    }
}

#[test]
fn killing_ssh_mid_turn_leaves_the_turn_running_a_new_link_sees_every_delta_once_and_a_question_waits_for_a_later_one(
) {
    let Some(mut rig) = Rig::new() else { return };
    let (user, _) = rig.user(BASH);
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("box", port, &user, "");
    add(&rig, "box", "box");
    let detached = rig.ok(&[
        "--host",
        "box",
        "run",
        "--agent",
        "echo",
        "--detach",
        "slow count",
    ]);
    let detached: Value = serde_json::from_str(&detached).unwrap_or_else(|e| panic!("{e}"));
    let key = detached["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        let (first, mut events, ssh_pid, mut seq, mut snap) =
            subscribe(&rig, "box", &key, super::support::app_hello()).await;
        // A few deltas through the first link, each the next seq.
        let mut seen = 0;
        while seen < 3 {
            let (from, to, next) = next_patch(&mut events, &key, &snap)
                .await
                .unwrap_or_else(|| panic!("the first link ended early"));
            assert_eq!(from, seq + 1, "a gap or a duplicate on the first link");
            (seq, snap) = (to, next);
            seen += 1;
        }
        assert_eq!(
            snap.phase,
            Phase::Streaming,
            "the turn ended too soon to cut"
        );
        let before = snap.text.clone();
        let killed = std::process::Command::new("kill")
            .args(["-KILL", &ssh_pid.to_string()])
            .status()
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(killed.success());
        while next_patch(&mut events, &key, &snap).await.is_some() {}
        drop(first);
        // A new link: the snapshot it starts from holds everything seen, and its
        // patches follow on without a gap or a repeat until the turn ends.
        let reconnect = Instant::now();
        let (second, mut events, _, at, mut snap) =
            subscribe(&rig, "box", &key, super::support::app_hello()).await;
        eprintln!(
            "a new link subscribed (ssh through the shared connection, proxy, hello, \
             snapshot) in {:?}",
            reconnect.elapsed()
        );
        assert!(at >= seq, "the daemon went back from seq {seq} to {at}");
        assert!(
            snap.text.starts_with(&before),
            "lost text: {before:?} → {:?}",
            snap.text
        );
        let mut seq = at;
        while snap.phase == Phase::Streaming {
            let (from, to, next) = next_patch(&mut events, &key, &snap)
                .await
                .unwrap_or_else(|| panic!("the second link ended before the turn"));
            assert_eq!(from, seq + 1, "a gap or a duplicate after reconnecting");
            (seq, snap) = (to, next);
        }
        let done = second
            .send(verb::GetSnapshot {
                session_key: key.clone(),
            })
            .await
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(done.snapshot.text, snap.text);
        assert!(
            !done.snapshot.incomplete && done.snapshot.error.is_none(),
            "{:?}",
            done.snapshot.error
        );
        assert!(done.snapshot.text.len() > before.len());
        // Echo's slow reply is its reply eight times: all of it arrived, once each.
        assert_eq!(
            done.snapshot.text.matches("Echo: slow count").count(),
            8,
            "{}",
            done.snapshot.text
        );
    });
    // A question asked while no client is connected waits there, and is answered
    // from a later connection.
    rig.ok(&[
        "--host",
        "box",
        "run",
        "--session",
        &key,
        "--detach",
        "a question",
    ]);
    let prompt = super::support::wait_for("the question in the host's inbox", 30, || {
        let inbox: Value = serde_json::from_str(&rig.ok(&["--host", "box", "inbox", "--json"]))
            .unwrap_or_else(|e| panic!("{e}"));
        inbox[0]["promptId"].as_str().map(String::from)
    });
    rig.ok(&["--host", "box", "answer", &prompt, "--select", "blue"]);
    let done = rig.ok(&["--host", "box", "wait", &key, "--json"]);
    assert!(done.contains("You picked blue."), "{done}");
    rig.ok(&["hosts", "remove", "box"]);
    assert_nothing_runs_as(&user);
}

#[test]
fn a_newer_client_does_not_stop_an_older_host_daemon_that_has_a_turn_running() {
    let Some(mut rig) = Rig::new() else { return };
    let (user, _) = rig.user(CSH);
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("old", port, &user, "");
    add(&rig, "old", "old");
    let detached = rig.ok(&[
        "--host",
        "old",
        "run",
        "--agent",
        "echo",
        "--detach",
        "slow count",
    ]);
    let detached: Value = serde_json::from_str(&detached).unwrap_or_else(|e| panic!("{e}"));
    let key = detached["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let runtime = tokio::runtime::Runtime::new().unwrap_or_else(|e| panic!("{e}"));
    runtime.block_on(async {
        // A client of a later version than the host's daemon (this build's).
        let newer = weft_protocol::Hello {
            version: "99.0.0".into(),
            ..super::support::app_hello()
        };
        let (client, mut events, _, mut seq, mut snap) = subscribe(&rig, "old", &key, newer).await;
        let welcome = client.welcome().clone();
        assert!(welcome.restarting, "{welcome:?}");
        assert_eq!(
            snap.phase,
            Phase::Streaming,
            "the turn ended before the newer client came"
        );
        let daemon = welcome.pid;
        // The turn goes on to its end in the same daemon.
        while snap.phase == Phase::Streaming {
            let (from, to, next) = next_patch(&mut events, &key, &snap)
                .await
                .unwrap_or_else(|| panic!("the daemon went away mid-turn"));
            assert_eq!(from, seq + 1);
            (seq, snap) = (to, next);
            assert!(
                super::support::pid_alive(daemon),
                "the old daemon was stopped mid-turn"
            );
        }
        assert!(!snap.incomplete && snap.error.is_none(), "{:?}", snap.error);
        assert_eq!(
            snap.text.matches("Echo: slow count").count(),
            8,
            "{}",
            snap.text
        );
        // Only then does it make way for the newer version.
        super::support::wait_for("the old daemon to make way", 30, || {
            (!super::support::pid_alive(daemon)).then_some(())
        });
    });
    // The next connection starts a daemon again, and the session is there.
    let after = rig.ok(&["--host", "old", "wait", &key, "--json"]);
    assert!(after.contains("Echo: slow count"), "{after}");
    rig.ok(&["hosts", "remove", "old"]);
    assert_nothing_runs_as(&user);
}

/// `weft --host HOST ARGS` in a PTY (what `tui` and `attach` need).
fn weft_in_pty(rig: &Rig, args: &[&str]) -> weft_pty::PtyBridge {
    let mut all = vec!["--host".to_string(), "box".to_string()];
    all.extend(args.iter().map(|a| a.to_string()));
    weft_pty::PtyBridge::spawn(
        &weft_pty::PtySpec {
            program: env!("CARGO_BIN_EXE_weft").into(),
            args: all,
            base_env: None,
            env: vec![
                (
                    "WEFT_HOME".into(),
                    rig.env.home.path().display().to_string(),
                ),
                ("WEFT_SSH_CONFIG".into(), rig.config().display().to_string()),
                // The shared ssh connection's socket in the test's home.
                ("XDG_RUNTIME_DIR".into(), String::new()),
            ],
            cwd: rig.env.work.path().to_path_buf(),
            ..weft_pty::PtySpec::default()
        },
        weft_pty::PtySize {
            rows: 24,
            cols: 100,
        },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

fn wait_screen(bridge: &weft_pty::PtyBridge, what: &str, want: &str) {
    let deadline = Instant::now() + Duration::from_secs(30);
    while !bridge.screen_text().contains(want) {
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{}",
            bridge.screen_text()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A host's agent terminal, opened through one link and attached through another:
/// both type into the same program on the host, and detaching ends nothing there.
#[tokio::test]
async fn a_terminal_on_a_host_is_opened_and_attached_through_ssh() {
    let Some(mut rig) = Rig::new() else { return };
    let (user, _) = rig.user(FISH);
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("box", port, &user, "");
    add(&rig, "box", "box");
    let first = weft_in_pty(&rig, &["tui"]);
    wait_screen(&first, "the host's echo terminal", "echo> ");
    first
        .write(b"from the first\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&first, "its line", "Echo: from the first");
    let list: Value = serde_json::from_str(&rig.ok(&[
        "--host",
        "box",
        "sessions",
        "--json",
        "--all",
        "--managed",
    ]))
    .unwrap_or_else(|e| panic!("{e}"));
    let key = list[0]["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    // The terminal's shell runs under the host's daemon: status lists it, with its memory.
    let status: Value = serde_json::from_str(&rig.ok(&["hosts", "status", "--json"]))
        .unwrap_or_else(|e| panic!("{e}"));
    let agents = status[1]["agents"].as_array().cloned().unwrap_or_default();
    assert!(
        agents
            .iter()
            .any(|a| a["pid"].as_u64().is_some_and(|p| p > 1)
                && a["rssBytes"].as_u64().is_some_and(|r| r > 0)
                && a["agent"].as_str().is_some_and(|n| !n.is_empty())),
        "{status}"
    );
    let second = weft_in_pty(&rig, &["attach", &key]);
    wait_screen(&second, "the kept screen", "Echo: from the first");
    second
        .write(b"from the second\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&second, "its own line", "Echo: from the second");
    wait_screen(&first, "the other's line", "Echo: from the second");
    second.write(b"\x1d").unwrap_or_else(|e| panic!("{e}"));
    let exit = tokio::time::timeout(Duration::from_secs(20), second.wait())
        .await
        .unwrap_or_else(|_| panic!("attach did not detach:\n{}", second.screen_text()));
    assert!(exit.success, "{}", second.screen_text());
    first
        .write(b"still here\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&first, "the terminal still running", "Echo: still here");
    first.write(b"\x04").unwrap_or_else(|e| panic!("{e}"));
    let _ = tokio::time::timeout(Duration::from_secs(20), first.wait()).await;
    // `agents install` runs the host's own weft there: its answer comes back.
    let out = rig.weft(&["--host", "box", "agents", "install", "no-such-agent"]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("no-such-agent"), "{err}");
    rig.ok(&["hosts", "remove", "box"]);
    assert_nothing_runs_as(&user);
}

/// A real claude turn on hosts whose users log in with bash, fish and csh: the host's
/// own environment (here given by its sshd) names the claude binary and the scripted
/// model server, which the host reaches on loopback; nothing of this machine's
/// environment goes there.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_claude_turn_runs_on_bash_fish_and_csh_hosts() {
    let Some(claude) = super::support::agent_bin("claude", "WEFT_CLAUDE_BIN") else {
        return;
    };
    let Some(mut rig) = Rig::new() else { return };
    let claude = claude.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let server =
        weft_testkit::AnthropicServer::start(weft_testkit::anthropic::Script::new().default_reply(
            weft_testkit::anthropic::Turn::text_reply("kiwi-reply from the host"),
        ))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut users = Vec::new();
    for (shell, path) in [("bash", BASH), ("fish", FISH), ("csh", CSH)] {
        let (user, home) = rig.user(path);
        // Claude's own first-run screen, done (as on a host where it was set up).
        let marker = home.join(".claude.json");
        std::fs::write(&marker, r#"{"hasCompletedOnboarding":true}"#)
            .unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::chown(&marker, Some(uid_of(&user)), None)
            .unwrap_or_else(|e| panic!("{e}"));
        users.push((user, shell));
    }
    let names: Vec<&str> = users.iter().map(|(u, _)| u.as_str()).collect();
    let extra = format!(
        "SetEnv WEFT_CLAUDE_BIN={} ANTHROPIC_BASE_URL={} ANTHROPIC_API_KEY={} IS_SANDBOX=1 \
         CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1 CLAUDE_CODE_MAX_RETRIES=0",
        claude.display(),
        server.base_url(),
        weft_testkit::leaks::AMBIENT_ANTHROPIC_KEY,
    );
    let (port, _) = rig.sshd(&names, &extra);
    for (user, shell) in &users {
        rig.alias(&format!("c-{shell}"), port, user, "");
    }
    for (user, shell) in &users {
        add(&rig, shell, &format!("c-{shell}"));
        let out = rig.weft(&[
            "--host",
            shell,
            "run",
            "--agent",
            "claude",
            "--json",
            "hello claude",
        ]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(out.status.success(), "claude on {shell}: {err}");
        let turn = stdout_json(&out);
        let text = turn["snapshot"]["text"].as_str().unwrap_or_default();
        assert!(text.contains("kiwi-reply from the host"), "{turn}");
        assert!(
            turn["sessionKey"]
                .as_str()
                .is_some_and(|k| k.starts_with("claude:")),
            "{turn}"
        );
        rig.ok(&["hosts", "remove", shell, "--purge"]);
        assert_nothing_runs_as(user);
    }
}

/// The uid of `user`.
fn uid_of(user: &str) -> u32 {
    let out = std::process::Command::new("id")
        .args(["-u", user])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    String::from_utf8_lossy(&out.stdout)
        .trim()
        .parse()
        .unwrap_or_else(|e| panic!("uid of {user}: {e}"))
}

#[test]
fn a_hosts_account_without_an_os_store_says_so_and_reads_its_key_from_the_hosts_environment() {
    use std::io::Write;
    let Some(mut rig) = Rig::new() else { return };
    // A headless server's user: no D-Bus session, so no Secret Service.
    let (user, _) = rig.user(BASH);
    let (port, _) = rig.sshd(&[&user], "");
    rig.alias("headless", port, &user, "");
    add(&rig, "headless", "headless");
    let key = "sk-ant-api03-weft-test-host-key-never-stored";
    rig.env.watch_secret(key);
    let args = [
        "--host", "headless", "accounts", "add", "--agent", "claude", "--kind", "api-key",
        "--label", "work",
    ];
    let mut cmd = rig.cmd(&[&args[..], &["--secret-stdin"]].concat());
    let mut child = cmd
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{e}"));
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(key.as_bytes())
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let out = child.wait_with_output().unwrap_or_else(|e| panic!("{e}"));
    rig.env.keep_output(&out);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "a key was kept with no OS store");
    assert!(
        stderr.contains("the OS secret store is not available") && stderr.contains("--secret-env"),
        "{stderr}"
    );
    // No clear-text fallback: the key is nowhere in the host user's files.
    let found = std::process::Command::new("grep")
        .args(["-rlF", key, &format!("/home/{user}")])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        found.stdout.is_empty(),
        "the key was written on the host: {}",
        String::from_utf8_lossy(&found.stdout)
    );
    // What it offers works: the key from the host daemon's own environment.
    let id = rig.ok(&[&args[..], &["--secret-env", "ANTHROPIC_API_KEY"]].concat());
    let list = stdout_json(&rig.weft(&["--host", "headless", "accounts", "list", "--json"]));
    let account = list
        .as_array()
        .and_then(|a| a.iter().find(|a| a["id"] == id.trim()))
        .unwrap_or_else(|| panic!("{id} not in {list}"));
    assert_eq!(account["label"], "work", "{account}");
    assert_eq!(account["secret"]["type"], "env", "{account}");
    assert_eq!(account["secret"]["name"], "ANTHROPIC_API_KEY", "{account}");
    rig.ok(&["hosts", "remove", "headless", "--purge"]);
    assert_nothing_runs_as(&user);
}
