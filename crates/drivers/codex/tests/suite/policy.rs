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
    // A workspace's allow rule acts once the user trusted the folder.
    let trusted = std::process::Command::new(&bin)
        .args(["trust", "--yes"])
        .env("WEFT_HOME", state.path())
        .current_dir(&workdir)
        .stdin(Stdio::null())
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
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

/// `weft ARGS` with the model's environment (what a daemon it starts runs codex with).
fn weft(
    bin: &std::path::Path,
    model: &CodexModel,
    codex: &std::path::Path,
    state: &std::path::Path,
    workdir: &std::path::Path,
    args: &[&str],
) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(args)
        .env("WEFT_HOME", state)
        .env("WEFT_CODEX_BIN", codex)
        .current_dir(workdir)
        .stdin(Stdio::null())
        .kill_on_drop(true);
    for (k, v) in model.env() {
        cmd.env(k, v);
    }
    cmd
}

async fn output(mut cmd: tokio::process::Command) -> (serde_json::Value, String) {
    let out = tokio::time::timeout(Duration::from_secs(180), cmd.output())
        .await
        .unwrap()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "{stdout}\n{stderr}");
    let json = serde_json::from_str(stdout.trim()).unwrap_or(serde_json::Value::Null);
    (json, stderr)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_on_a_codex_approval_writes_a_weft_rule_not_codex_execpolicy() {
    let Some(codex) = require_codex() else { return };
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Touch one"),
                Turn::new().shell("call_1", "touch one.txt"),
            )
            .turn_when(when::tool_output_for("call_1"), Turn::text_reply("One."))
            .turn_when(
                when::user_text_contains("Touch two"),
                Turn::new().shell("call_2", "touch two.txt"),
            )
            .turn_when(when::tool_output_for("call_2"), Turn::text_reply("Two.")),
    )
    .await
    .with("WEFT_CODEX_APPROVAL_POLICY", "untrusted");
    let work = tempfile::tempdir().unwrap();
    let workdir = work.path().canonicalize().unwrap();
    let state = tempfile::tempdir().unwrap();
    let bin = weft_bin();
    let _stop = StopDaemon(state.path().to_path_buf(), bin.clone());
    let run = |args: &[&str]| weft(&bin, &model, &codex, state.path(), &workdir, args);

    // Detached: the approval waits in the inbox for an answer from another terminal.
    let (started, _) = output(run(&["run", "--agent", "codex", "--detach", "Touch one"])).await;
    let key = started["sessionKey"].as_str().unwrap().to_string();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    let item = loop {
        let (inbox, _) = output(run(&["inbox", "--json"])).await;
        if let Some(item) = inbox.as_array().and_then(|a| a.first()) {
            break item.clone();
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "codex asked nothing"
        );
        tokio::time::sleep(Duration::from_millis(200)).await;
    };
    let choices = item["questions"][0]["choices"].as_array().unwrap().clone();
    let ours = choices
        .iter()
        .find(|c| c["value"] == "allowPrefix")
        .unwrap_or_else(|| panic!("no Weft rule choice: {item}"));
    assert_eq!(
        ours["label"],
        "Always allow `touch` in this workspace (Weft rule)"
    );
    let at = |v: &str| choices.iter().position(|c| c["value"] == v);
    assert!(at("allowPrefix") < at("deny"), "{item}");
    let prompt_id = item["promptId"].as_str().unwrap();
    output(run(&["answer", prompt_id, "--select", "allowPrefix"])).await;
    let (last, _) = output(run(&["wait", &key, "--json"])).await;
    assert_eq!(last["text"], "One.", "{last}");
    assert!(workdir.join("one.txt").exists(), "{last}");
    let rules: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(workdir.join(".weft/permissions.json")).unwrap(),
    )
    .unwrap();
    assert_eq!(rules, serde_json::json!({"allow": ["touch"]}));
    // codex was answered with its plain accept: its own exec policy is unchanged.
    let rules_dir = model
        .env()
        .into_iter()
        .find(|(k, _)| k == "CODEX_HOME")
        .unwrap()
        .1;
    assert!(
        !std::path::Path::new(&rules_dir).join("rules").exists(),
        "codex's execpolicy was amended"
    );

    // The next approval in a new session is answered by the rule: no --yes, no terminal.
    let (done, stderr) = output(run(&["run", "--agent", "codex", "--json", "Touch two"])).await;
    assert!(
        !stderr.contains("cancelled"),
        "a dialog was shown: {stderr}"
    );
    assert!(workdir.join("two.txt").exists(), "{done}\n{stderr}");
    assert!(
        done["snapshot"]["notices"]
            .to_string()
            .contains("allowed by the Weft rule touch"),
        "{done}"
    );
}
