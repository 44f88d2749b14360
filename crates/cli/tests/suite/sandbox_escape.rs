//! H1 of the third security review: a command in the sandbox must not reach the
//! daemon outside it. Through the daemon's socket, `WEFT_CLAUDE_BIN=./evil weft run`
//! made the daemon (outside the sandbox, in the host's PID namespace) run `evil`.
//!
//! Each run uses the real `weft` and a real daemon whose home lies outside /tmp (the
//! sandbox replaces /tmp, which would hide the home for the wrong reason), under each
//! mechanism that works here; the daemon is stopped at the end.

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

use super::support::{pid_alive, stdout_json, DaemonGuard};

fn weft(home: &Path) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_weft"));
    cmd.env("WEFT_HOME", home)
        // A safety net only: the guard stops the daemon.
        .env("WEFT_DAEMON_IDLE_SECS", "120")
        .stdin(Stdio::null());
    cmd
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("run weft: {e}"))
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

fn dir(root: &Path, name: &str) -> PathBuf {
    let d = root.join(name);
    std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
    d
}

fn escape_through_the_daemon(mechanism: &str) {
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    let home = dir(root.path(), "home");
    let ws = dir(root.path(), "ws");
    let out_dir = dir(root.path(), "out");
    let probe = stdout_json(&run(weft(&home)
        .env("WEFT_SANDBOX", mechanism)
        .args(["sandbox", "--probe", "--json"])));
    if probe["mechanism"] != mechanism {
        eprintln!("SKIP {mechanism}: {}", probe["details"]);
        return;
    }
    assert_eq!(probe["hostSocketsBlocked"], true, "{probe}");
    let _daemon = DaemonGuard(home.clone());
    // Any client starts the daemon on demand: a turn of the echo agent.
    let started = run(weft(&home)
        .env("WEFT_ECHO_DELAY_MS", "0")
        .current_dir(&ws)
        .args(["run", "--agent", "echo", "hello"]));
    assert!(started.status.success(), "{}", text(&started));
    let status = stdout_json(&run(weft(&home).args(["daemon", "status", "--json"])));
    let pid = status["pid"].as_u64().unwrap_or_default() as u32;
    assert!(pid > 0 && pid_alive(pid), "{status}");
    let marker = out_dir.join("via-daemon");
    let line = format!(
        "printf '#!/bin/sh\\nid > {marker}\\n' > evil && chmod +x evil\n\
         WEFT_CLAUDE_BIN=$PWD/evil timeout 60 '{weft}' run --agent claude hi\n\
         echo \"weft run: $?\"\n\
         kill -TERM {pid}; echo \"kill: $?\"",
        marker = marker.display(),
        weft = env!("CARGO_BIN_EXE_weft"),
    );
    let out = run(weft(&home).env("WEFT_SANDBOX", mechanism).args([
        "sandbox",
        "--workdir",
        &ws.display().to_string(),
        "--",
        &line,
    ]));
    let said = text(&out);
    assert!(
        said.contains("weft run:"),
        "{mechanism}: the line did not run: {said}"
    );
    assert!(
        !marker.exists(),
        "{mechanism}: the daemon outside the sandbox ran the sandbox's program: {said}"
    );
    // Signals: bubblewrap's PID namespace hides the daemon; Landlock refuses a signal
    // out of the sandbox where the kernel scopes them (Linux 6.12).
    let scoped = probe["details"]
        .as_str()
        .is_some_and(|d| d.contains("fully enforced"));
    if mechanism == "bwrap" || scoped {
        assert!(
            pid_alive(pid),
            "{mechanism}: the sandbox's kill ended the daemon: {said}"
        );
        let again = stdout_json(&run(weft(&home).args(["daemon", "status", "--json"])));
        assert_eq!(again["pid"], status["pid"], "{again}");
    }
}

#[test]
fn a_bwrap_sandboxed_weft_run_cannot_make_the_daemon_run_its_program() {
    escape_through_the_daemon("bwrap");
}

#[test]
fn a_landlock_sandboxed_weft_run_cannot_make_the_daemon_run_its_program() {
    escape_through_the_daemon("landlock");
}
