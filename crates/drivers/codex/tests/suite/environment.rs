//! Whose environment `codex app-server` gets, and where it comes from: a turn's
//! process starts from exactly its client's environment, the session's process is
//! replaced (resuming the thread) when that changes and kept while it does not, and
//! nothing planted in the current folder runs.

use std::sync::Arc;
use std::time::Duration;

use weft_agent_process::planted::PlantedFolder;
use weft_codex::{spawn, CodexDriver, Config, CODEX_ID};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_protocol::ClientEnv;
use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{Script, Turn};

use super::support::*;

/// The kernel's environment with `vars` on top, as a `weft run` would send its own.
fn client(vars: &[(&str, &str)]) -> Arc<ClientEnv> {
    let mut env = ClientEnv(std::env::vars().collect());
    for (k, v) in vars {
        env.0.insert(k.to_string(), v.to_string());
    }
    Arc::new(env)
}

fn environ(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/environ"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_client_environment_respawns_app_server_on_the_same_thread() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(Script::new().default_reply(Turn::text_reply("Noted."))).await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let turn = |mark: &str| AgentTurnInput {
        session_key: format!("{CODEX_ID}:env"),
        task_id: "t".into(),
        prompt: "hi".into(),
        workdir: work.path().canonicalize().unwrap(),
        env: model.env(),
        client_env: Some(client(&[("WEFT_TEST_CLIENT", mark)])),
        ..Default::default()
    };
    let (r1, _) = run_turn(&d, turn("one"), &new_sink()).await;
    assert!(r1.ok, "{r1:?}");
    let first = d.live_pids();
    assert_eq!(first.len(), 1);
    assert!(environ(first[0]).contains(&"WEFT_TEST_CLIENT=one".to_string()));

    let (r2, _) = run_turn(&d, turn("one"), &new_sink()).await;
    assert!(r2.ok, "{r2:?}");
    assert_eq!(
        d.live_pids(),
        first,
        "the same environment keeps the process"
    );

    let (r3, _) = run_turn(&d, turn("two"), &new_sink()).await;
    assert!(r3.ok, "{r3:?}");
    let second = d.live_pids();
    assert_eq!(second.len(), 1);
    assert_ne!(second, first);
    assert!(environ(second[0]).contains(&"WEFT_TEST_CLIENT=two".to_string()));
    assert_eq!(r3.session_id, r1.session_id, "the thread was resumed");
    assert!(eventually(Duration::from_secs(5), || gone(first[0])).await);
    d.shutdown().await;
}

#[test]
fn codex_is_never_looked_up_in_the_current_folder() {
    let planted = PlantedFolder::new("codex").unwrap();
    let path = planted.relative_path_var();
    let var = |n: &str| (n == "PATH").then(|| path.clone());
    // Found elsewhere (the project-local install above this test binary) or not at
    // all; never the planted one.
    if let Ok(found) = spawn::find_binary(&Config::default(), &var) {
        assert!(!planted.is_planted(&found), "{}", found.display());
    }
    let mut env = ClientEnv::default();
    env.0.insert("PATH".into(), path.clone());
    let input = AgentTurnInput {
        workdir: planted.path().to_path_buf(),
        client_env: Some(Arc::new(env)),
        ..Default::default()
    };
    if let Some(tui) = CodexDriver::new().tui(&input) {
        assert!(
            !planted.is_planted(&tui.program),
            "{}",
            tui.program.display()
        );
    }
    assert!(!planted.ran());
}
