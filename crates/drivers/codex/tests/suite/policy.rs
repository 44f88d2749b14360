//! Weft's permission rules answer the real codex's command approvals before a surface
//! sees them (the daemon's ShellPolicy), through the built `weft run`.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{when, Script, Turn};

use super::support::{require_codex, CodexModel};

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

struct StopDaemon(PathBuf, PathBuf);

impl Drop for StopDaemon {
    fn drop(&mut self) {
        let _ = std::process::Command::new(&self.1)
            .args(["daemon", "stop"])
            .env("WEFT_HOME", &self.0)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_allow_rule_answers_a_codex_approval() {
    let Some(codex) = require_codex() else { return };
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Touch it"),
                Turn::new().shell("call_t", "touch made-by-codex.txt"),
            )
            .turn_when(
                when::tool_output_for("call_t"),
                Turn::text_reply("Touched."),
            ),
    )
    .await
    .with("WEFT_CODEX_APPROVAL_POLICY", "untrusted");
    let work = tempfile::tempdir().unwrap();
    let workdir = work.path().canonicalize().unwrap();
    std::fs::create_dir_all(workdir.join(".weft")).unwrap();
    std::fs::write(
        workdir.join(".weft/permissions.json"),
        r#"{"allow": ["touch"]}"#,
    )
    .unwrap();
    let state = tempfile::tempdir().unwrap();
    let bin = weft_bin();
    let _stop = StopDaemon(state.path().to_path_buf(), bin.clone());
    let mut cmd = tokio::process::Command::new(&bin);
    cmd.args(["run", "--agent", "codex", "--json", "Touch it"])
        .env("WEFT_HOME", state.path())
        .env("WEFT_CODEX_BIN", &codex)
        .current_dir(&workdir)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in model.env() {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let stdout = String::from_utf8_lossy(&out.stdout);
    // No --yes and no terminal: a dialog would have been cancelled; the rule answered.
    assert!(
        !stderr.contains("cancelled"),
        "a dialog was shown: {stderr}"
    );
    assert!(
        workdir.join("made-by-codex.txt").exists(),
        "{stdout}\n{stderr}"
    );
    // The kernel notes the automatic answer and why in the snapshot.
    assert!(
        stdout.contains("allowed by the Weft rule touch"),
        "{stdout}"
    );
}
