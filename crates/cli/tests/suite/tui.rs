//! `weft tui` in a real PTY: the agent's own UI passes through raw, prompts to the
//! session queue while it is open, and the structured rail takes over when it exits.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use serde_json::Value;
use weft_pty::{PtyBridge, PtySize, PtySpec};

fn wait_screen(bridge: &PtyBridge, what: &str, pred: impl Fn(&str) -> bool) -> String {
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let text = bridge.screen_text();
        if pred(&text) {
            return text;
        }
        assert!(
            Instant::now() < deadline,
            "timed out waiting for {what}; screen:\n{text}"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `weft ARGS` in a PTY of `rows` × `cols`, with `home` as its WEFT_HOME, in `work`.
fn weft_in_pty(home: &Path, work: &Path, args: &[&str], (rows, cols): (u16, u16)) -> PtyBridge {
    PtyBridge::spawn(
        &PtySpec {
            program: env!("CARGO_BIN_EXE_weft").into(),
            args: args.iter().map(|a| a.to_string()).collect(),
            base_env: None,
            env: vec![
                ("WEFT_HOME".into(), home.to_string_lossy().into_owned()),
                ("WEFT_ECHO_DELAY_MS".into(), "0".into()),
            ],
            cwd: work.to_path_buf(),
            ..PtySpec::default()
        },
        PtySize { rows, cols },
    )
    .unwrap_or_else(|e| panic!("{e}"))
}

#[tokio::test]
async fn the_echo_terminal_runs_here_and_hands_the_session_back() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _daemon = super::support::DaemonGuard(home.path().to_path_buf());
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let weft = env!("CARGO_BIN_EXE_weft");
    let bridge = weft_in_pty(home.path(), work.path(), &["tui"], (24, 100));
    wait_screen(&bridge, "echo prompt", |s| s.contains("echo> "));
    bridge
        .write(b"hello pty\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "echoed line", |s| s.contains("Echo: hello pty"));

    // While the terminal is open, the session has one writer: the list shows it...
    let list = Command::new(weft)
        .args(["sessions", "--json", "--all", "--managed"])
        .env("WEFT_HOME", home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let sessions: Value = serde_json::from_slice(&list.stdout).unwrap_or_else(|e| panic!("{e}"));
    let key = sessions[0]["sessionKey"]
        .as_str()
        .unwrap_or_else(|| panic!("no session: {sessions}"))
        .to_string();
    assert_eq!(sessions[0]["phase"], "streaming");

    // Ctrl-D ends the echo terminal; `weft tui` restores the terminal and exits.
    bridge.write(b"\x04").unwrap_or_else(|e| panic!("{e}"));
    let exit = tokio::time::timeout(Duration::from_secs(20), bridge.wait())
        .await
        .unwrap_or_else(|_| panic!("weft tui did not exit:\n{}", bridge.screen_text()));
    assert!(exit.success, "{exit:?}\n{}", bridge.screen_text());
    let screen = bridge.screen_text();
    assert!(screen.contains("bye"), "{screen}");
    assert!(screen.contains(&format!("session {key}")), "{screen}");

    // The structured rail now runs prompts in the same session.
    let run = Command::new(weft)
        .args(["run", "--json", "--session", &key, "after the terminal"])
        .env("WEFT_HOME", home.path())
        .env("WEFT_ECHO_DELAY_MS", "0")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    super::support::ok_stdout(&run);
    let history = Command::new(weft)
        .args(["history", &key, "--json"])
        .env("WEFT_HOME", home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let turns: Value = serde_json::from_slice(&history.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(turns[0]["prompt"], "(the agent's own terminal)");
    assert_eq!(turns[0]["incomplete"], false);
    assert_eq!(turns[1]["prompt"], "after the terminal");
}

#[test]
fn without_a_terminal_it_is_a_usage_error() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .arg("tui")
        .env("WEFT_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("needs a terminal"));
}

/// `weft run` at a terminal puts a question to the user and sends the answer back.
#[tokio::test]
async fn run_at_a_terminal_asks_the_question_and_uses_the_answer() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _daemon = super::support::DaemonGuard(home.path().to_path_buf());
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let bridge = weft_in_pty(
        home.path(),
        work.path(),
        &["run", "a question and a permission"],
        (40, 120),
    );
    wait_screen(&bridge, "the permission", |s| {
        s.contains("Allow write_note?") && s.contains("choose 1-3")
    });
    bridge.write(b"1\r").unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&bridge, "the question", |s| {
        s.contains("Which color should the reply be?") && s.contains("choose 1-3")
    });
    bridge.write(b"3\r").unwrap_or_else(|e| panic!("{e}"));
    let exit = tokio::time::timeout(Duration::from_secs(20), bridge.wait())
        .await
        .unwrap_or_else(|_| panic!("weft run did not finish:\n{}", bridge.screen_text()));
    let screen = bridge.screen_text();
    assert!(exit.success, "{screen}");
    assert!(
        screen.contains("I wrote the note. You picked blue."),
        "{screen}"
    );
    assert!(work.path().join(".weft/echo-note.md").is_file());
}

/// Like tmux: a terminal opened by one client is attached from another, both see and
/// type into the same program, and Ctrl-] detaches without ending it.
#[tokio::test]
async fn a_terminal_is_attached_from_another_client_and_detached_without_ending() {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _daemon = super::support::DaemonGuard(home.path().to_path_buf());
    let work = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let first = weft_in_pty(home.path(), work.path(), &["tui"], (24, 100));
    wait_screen(&first, "echo prompt", |s| s.contains("echo> "));
    first
        .write(b"from the first\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&first, "first line", |s| s.contains("Echo: from the first"));

    let list = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["sessions", "--json", "--all", "--managed"])
        .env("WEFT_HOME", home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let sessions: Value = serde_json::from_slice(&list.stdout).unwrap_or_else(|e| panic!("{e}"));
    let key = sessions[0]["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    // The second client gets the screen as it is, then types into the same program.
    let second = weft_in_pty(home.path(), work.path(), &["attach", &key], (24, 100));
    wait_screen(&second, "the kept screen", |s| {
        s.contains("Echo: from the first")
    });
    second
        .write(b"from the second\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&second, "its own line", |s| {
        s.contains("Echo: from the second")
    });
    wait_screen(&first, "the other's line", |s| {
        s.contains("Echo: from the second")
    });

    // Ctrl-] detaches: the attach exits 0, the terminal goes on for the first client.
    second.write(b"\x1d").unwrap_or_else(|e| panic!("{e}"));
    let exit = tokio::time::timeout(Duration::from_secs(20), second.wait())
        .await
        .unwrap_or_else(|_| panic!("attach did not detach:\n{}", second.screen_text()));
    assert!(exit.success, "{}", second.screen_text());
    assert!(
        second.screen_text().contains("detached"),
        "{}",
        second.screen_text()
    );
    first
        .write(b"still here\r")
        .unwrap_or_else(|e| panic!("{e}"));
    wait_screen(&first, "the terminal still running", |s| {
        s.contains("Echo: still here")
    });
    let status = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["daemon", "status", "--json"])
        .env("WEFT_HOME", home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let status: Value = serde_json::from_slice(&status.stdout).unwrap_or_default();
    assert_eq!(status["terminals"], 1, "{status}");

    // Attaching to a session with no open terminal is a clear usage error.
    first.write(b"\x04").unwrap_or_else(|e| panic!("{e}"));
    let _ = tokio::time::timeout(Duration::from_secs(20), first.wait()).await;
    let again = weft_in_pty(home.path(), work.path(), &["attach", &key], (24, 100));
    let exit = tokio::time::timeout(Duration::from_secs(20), again.wait())
        .await
        .unwrap_or_else(|_| panic!("attach hung:\n{}", again.screen_text()));
    assert_eq!(exit.code, 2, "{}", again.screen_text());
    assert!(
        again.screen_text().contains("no terminal is open"),
        "{}",
        again.screen_text()
    );
}
