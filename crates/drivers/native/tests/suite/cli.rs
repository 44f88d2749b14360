//! `weft run --agent native [--pack P]` through the built binary and its daemon (its
//! own WEFT_HOME, stopped at the end), against the scripted Anthropic server.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::Value;
use weft_testkit::{Script, Turn};

use super::support::{anthropic, Dirs};

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

/// Stops the daemon of `home` whatever the test's outcome.
struct StopDaemon(pub PathBuf, pub PathBuf);

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

async fn weft_run(
    bin: &Path,
    home: &Path,
    work: &Path,
    env: &[(String, String)],
    args: &[&str],
) -> (i32, String, String) {
    let mut cmd = tokio::process::Command::new(bin);
    cmd.arg("run")
        .args(args)
        .env("WEFT_HOME", home)
        .current_dir(work)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    for (k, v) in env {
        cmd.env(k, v);
    }
    let out = tokio::time::timeout(Duration::from_secs(120), cmd.output())
        .await
        .unwrap()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// The built `weft` with its own home, whose daemon is stopped when this is dropped,
/// and a workspace to run in.
pub(super) struct Cli {
    // First, so the daemon stops before its home is removed.
    _stop: StopDaemon,
    pub bin: PathBuf,
    pub home: PathBuf,
    pub dirs: Dirs,
}

impl Cli {
    pub fn new() -> Self {
        let bin = weft_bin();
        let dirs = Dirs::new();
        let home = dirs.state.path().to_path_buf();
        Self {
            _stop: StopDaemon(home.clone(), bin.clone()),
            bin,
            home,
            dirs,
        }
    }

    /// `weft run ARGS` in the workspace with `env`: its exit code, stdout and stderr.
    pub async fn run(&self, env: &[(String, String)], args: &[&str]) -> (i32, String, String) {
        weft_run(&self.bin, &self.home, &self.dirs.work(), env, args).await
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weft_run_agent_native_with_a_pack() {
    let cli = Cli::new();
    let (server, env) = anthropic(
        Script::new().default_reply(Turn::text_reply("weft-native-cli-reply")),
        "auto",
    )
    .await;
    let (code, out, err) = cli
        .run(
            &env,
            &[
                "--agent",
                "native",
                "--pack",
                "notes",
                "--json",
                "What do my notes say?",
            ],
        )
        .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let v: Value = serde_json::from_str(out.trim()).unwrap();
    assert!(
        v["snapshot"]["text"]
            .as_str()
            .unwrap()
            .contains("weft-native-cli-reply"),
        "{v:#}"
    );
    let key = v["sessionKey"].as_str().unwrap().to_string();
    assert!(key.starts_with("native:"), "{key}");
    let tools = server.messages_requests()[0].tool_names();
    assert!(
        tools.contains(&"notes_search".to_string()) && !tools.contains(&"bash".to_string()),
        "{tools:?}"
    );
    // The session keeps its pack.
    let (code, out, err) = cli
        .run(&env, &["--session", &key, "--json", "And now?"])
        .await;
    assert_eq!(code, 0, "{out}\n{err}");
    let tools = server.messages_requests().last().unwrap().tool_names();
    assert!(tools.contains(&"notes_search".to_string()), "{tools:?}");
    // An unknown pack fails the turn, naming the packs there are.
    let (code, out, _) = cli
        .run(
            &env,
            &["--agent", "native", "--pack", "nope", "--json", "hi"],
        )
        .await;
    assert_ne!(code, 0);
    assert!(
        out.contains("no pack named") && out.contains("coding, notes, data"),
        "{out}"
    );
    // --pack belongs to the native agent only.
    let (code, _, err) = cli
        .run(&env, &["--agent", "echo", "--pack", "notes", "hi"])
        .await;
    assert_eq!(code, 2);
    assert!(err.contains("--pack is for --agent native"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weft_undo_restores_the_last_turns_files() {
    let cli = Cli::new();
    let (bin, home, dirs) = (&cli.bin, &cli.home, &cli.dirs);
    let script = Script::new()
        .turn_when(
            weft_testkit::anthropic::when::user_text_contains("make a file"),
            Turn::new().tool_use(
                "w",
                "write",
                serde_json::json!({"path": "made.txt", "content": "x"}),
            ),
        )
        .default_reply(Turn::text_reply("done"));
    let (_server, env) = anthropic(script, "auto").await;
    let (code, out, err) = cli
        .run(&env, &["--agent", "native", "--json", "make a file"])
        .await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(dirs.work().join("made.txt").exists());
    let key = serde_json::from_str::<Value>(out.trim()).unwrap()["sessionKey"]
        .as_str()
        .unwrap()
        .to_string();
    let mut cmd = tokio::process::Command::new(bin);
    cmd.args(["undo", &key])
        .env("WEFT_HOME", home)
        .current_dir(dirs.work())
        .stdin(Stdio::null());
    for (k, v) in &env {
        cmd.env(k, v);
    }
    let out = cmd.output().await.unwrap();
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{text}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // `weft undo` is the checkpoint restore of the last turn, for every agent.
    assert!(text.contains("deleted  made.txt"), "{text}");
    assert!(!dirs.work().join("made.txt").exists());
    let out = std::process::Command::new(bin)
        .args(["undo", "echo:x"])
        .env("WEFT_HOME", home)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn weft_tools_lists_the_agents_own_tools() {
    let cli = Cli::new();
    let tools = |args: &'static [&'static str]| {
        let mut cmd = std::process::Command::new(&cli.bin);
        cmd.arg("tools")
            .args(args)
            .env("WEFT_HOME", &cli.home)
            .current_dir(cli.dirs.work())
            .stdin(Stdio::null());
        cmd.output().unwrap()
    };
    let out = tools(&["--agent", "native", "--json"]);
    assert!(out.status.success(), "{out:?}");
    let listed: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = listed.iter().filter_map(|t| t["name"].as_str()).collect();
    for name in ["bash", "edit", "ask_user", "task"] {
        assert!(names.contains(&name), "{names:?}");
    }
    let out = tools(&["--agent", "nope"]);
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("unknown agent"),
        "{out:?}"
    );
}
