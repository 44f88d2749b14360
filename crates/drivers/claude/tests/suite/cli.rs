//! The real CLI through the built `weft run --agent claude` binary, one process per
//! turn, against the scripted server.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};
use weft_testkit::anthropic::when;
use weft_testkit::{Script, Turn};

use super::support::*;

/// The `weft` binary beside this test's target dir, built first (a no-op when fresh).
fn weft_bin() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let debug = exe.parent().unwrap().parent().unwrap().to_path_buf();
    let target = debug.parent().unwrap().to_path_buf();
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let status = std::process::Command::new(cargo)
        .args(["build", "-q", "-p", "weft-cli", "--bin", "weft"])
        .env("CARGO_TARGET_DIR", &target)
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .status()
        .unwrap();
    assert!(status.success(), "building weft failed");
    debug.join("weft")
}

/// Stops the daemon the test's `weft run`s started for `state` (they each get their
/// own WEFT_HOME, so their own daemon), whatever the test's outcome.
pub(super) struct StopDaemon(pub std::path::PathBuf);

impl Drop for StopDaemon {
    fn drop(&mut self) {
        let _ = std::process::Command::new(weft_bin())
            .args(["daemon", "stop"])
            .env("WEFT_HOME", &self.0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

pub(super) struct Run {
    pub code: i32,
    pub json: Value,
    pub stderr: String,
}

fn command(env: &ClaudeEnv, state: &std::path::Path, args: &[&str]) -> tokio::process::Command {
    let mut cmd = weft(env, state);
    cmd.arg("run").args(args);
    cmd
}

/// `weft` with the test's environment (what a daemon it starts runs claude with).
pub(super) fn weft(env: &ClaudeEnv, state: &std::path::Path) -> tokio::process::Command {
    let claude = claude_bin().unwrap();
    let mut cmd = tokio::process::Command::new(weft_bin());
    cmd.env("WEFT_HOME", state)
        .env("WEFT_CLAUDE_BIN", claude)
        .env("WEFT_CLAUDE_BG_QUIET_MS", "1500")
        .current_dir(env.workdir())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env.env() {
        cmd.env(k, v);
    }
    cmd
}

pub(super) async fn weft_run(env: &ClaudeEnv, state: &std::path::Path, args: &[&str]) -> Run {
    let out = tokio::time::timeout(Duration::from_secs(120), command(env, state, args).output())
        .await
        .expect("weft run did not finish in 120 s")
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let json = serde_json::from_str(stdout.trim())
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr: {stderr}"));
    Run {
        code: out.status.code().unwrap_or(-1),
        json,
        stderr,
    }
}

#[tokio::test]
async fn weft_run_text_tools_permissions_resume_and_subagent() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start_in(|workdir| {
        let written = workdir.join("written.md").display().to_string();
        Script::new()
        .rule(
            when::user_text_contains("what came before"),
            Turn::text_reply("I remember."),
        )
        .rule(
            when::user_text_contains("hello there"),
            Turn::new().text("Hi from weft run.").usage(900, 33),
        )
        .rule(
            when::user_text_contains("make files"),
            Turn::new().tool_use(
                "toolu_cb",
                "Bash",
                json!({"command": "echo from-weft-run > cli.txt", "description": "write cli.txt"}),
            ),
        )
        .rule(
            when::tool_result_for("toolu_cb"),
            Turn::new().tool_use(
                "toolu_cw",
                "Write",
                json!({"file_path": written, "content": "# written\n"}),
            ),
        )
        .rule(when::tool_result_for("toolu_cw"), Turn::text_reply("files made"))
        .rule(
            when::user_text_contains("forbidden"),
            Turn::new().tool_use(
                "toolu_cd",
                "Bash",
                json!({"command": "touch forbidden.txt", "description": "touch forbidden"}),
            ),
        )
        .rule(when::tool_result_for("toolu_cd"), Turn::text_reply("left it alone"))
        .rule(
            when::user_text_contains("SUBTASK"),
            Turn::text_reply("sub report"),
        )
        .rule(
            when::user_text_contains("delegate"),
            Turn::new().tool_use(
                "toolu_ca",
                "Agent",
                json!({"description": "look around", "prompt": "SUBTASK look", "subagent_type": "general-purpose"}),
            ),
        )
        .rule(when::tool_result_for("toolu_ca"), Turn::text_reply("delegated ok"))
    })
    .await;
    let state = tempfile::tempdir().unwrap();
    let _daemon = StopDaemon(state.path().to_path_buf());
    let st = state.path();

    let r = weft_run(&env, st, &["--agent", "claude", "--json", "hello there"]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let snap = &r.json["snapshot"];
    assert_eq!(snap["text"], "Hi from weft run.");
    assert_eq!(snap["usage"]["outputTokens"], 33);
    let key = r.json["sessionKey"].as_str().unwrap().to_string();
    assert!(key.starts_with("claude:"));

    // Allowed with --yes: the command runs (--yes runs an unknown line only when a rule
    // names it: the user's own, global one here) and the Write makes an artifact.
    std::fs::write(
        st.join("permissions.json"),
        r#"{"allow": ["echo from-weft-run"]}"#,
    )
    .unwrap();
    let workdir = env.workdir();
    let r = weft_run(
        &env,
        st,
        &["--session", &key, "--yes", "--json", "make files"],
    )
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(
        std::fs::read_to_string(workdir.join("cli.txt"))
            .unwrap()
            .trim(),
        "from-weft-run"
    );
    let snap = &r.json["snapshot"];
    assert_eq!(snap["text"], "files made");
    let artifacts = snap["artifacts"].as_array().unwrap();
    assert_eq!(artifacts.len(), 1, "{snap:#}");
    assert_eq!(artifacts[0]["fileName"], "written.md");

    // Without --yes and without a terminal the permission is refused.
    let r = weft_run(&env, st, &["--session", &key, "--json", "forbidden thing"]).await;
    assert!(!workdir.join("forbidden.txt").exists());
    let snap = &r.json["snapshot"];
    assert_eq!(snap["text"], "left it alone", "{}", r.stderr);
    let call = snap["toolCalls"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["id"] == "toolu_cd")
        .unwrap();
    assert_eq!(call["status"], "failed");

    // A subagent.
    let r = weft_run(
        &env,
        st,
        &["--session", &key, "--yes", "--json", "delegate"],
    )
    .await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    let snap = &r.json["snapshot"];
    assert_eq!(snap["subAgents"][0]["id"], "toolu_ca");
    assert_eq!(snap["subAgents"][0]["status"], "done");
    assert_eq!(snap["text"], "delegated ok");

    // Each `weft run` is a new process: this one resumes, and the model sees it all.
    let r = weft_run(&env, st, &["--session", &key, "--json", "what came before"]).await;
    assert_eq!(r.code, 0, "{}", r.stderr);
    assert_eq!(r.json["snapshot"]["text"], "I remember.");
    let all = env.server.messages_requests().pop().unwrap().all_text();
    assert!(
        all.contains("hello there") && all.contains("Hi from weft run."),
        "{all}"
    );
}

#[tokio::test]
async fn weft_run_ctrl_c_stops_and_a_server_crash_fails_clearly() {
    let Some(_) = claude_bin() else { return };
    let words: Vec<String> = (0..100).map(|i| format!("w{i} ")).collect();
    let chunks: Vec<&str> = words.iter().map(String::as_str).collect();
    let script = Script::new()
        .rule(
            when::user_text_contains("long stream"),
            Turn::new()
                .delta_delay(Duration::from_millis(100))
                .text_chunks(&chunks),
        )
        .rule(
            when::user_text_contains("crash now"),
            Turn::new().text("half an ans").then_drop(),
        );
    let env = ClaudeEnv::start(script).await;
    let state = tempfile::tempdir().unwrap();
    let _daemon = StopDaemon(state.path().to_path_buf());
    let st = state.path();

    let child = command(&env, st, &["--agent", "claude", "--json", "long stream"])
        .spawn()
        .unwrap();
    assert!(
        env.server
            .wait_for_messages(1, Duration::from_secs(60))
            .await
    );
    tokio::time::sleep(Duration::from_millis(800)).await; // some words streamed
    let pid = nix::unistd::Pid::from_raw(child.id().unwrap() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGINT).unwrap();
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .unwrap()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let json: Value = serde_json::from_slice(&out.stdout).unwrap();
    let snap = &json["snapshot"];
    assert_eq!(snap["incomplete"], true);
    assert!(!snap["text"].as_str().unwrap().contains("w99"));

    let r = weft_run(&env, st, &["--agent", "claude", "--json", "crash now"]).await;
    assert_eq!(r.code, 1);
    assert_eq!(r.json["snapshot"]["incomplete"], true);
    assert!(r.json["snapshot"]["error"].as_str().is_some(), "{}", r.json);
}
