//! Whose environment the CLI gets, and where it comes from: a turn's process starts
//! from exactly its client's environment, the session's process is replaced (resuming
//! the session) when that changes and kept while it does not, the turn's own
//! `WEFT_CLAUDE_*` settings apply, and nothing planted in the current folder runs.

use std::sync::Arc;
use std::time::Duration;

use weft_agent_process::planted::PlantedFolder;
use weft_claude::{spawn, ClaudeDriver, Config};
use weft_kernel::driver::{AgentDriver, AgentTurnInput};
use weft_protocol::ClientEnv;
use weft_testkit::Script;

use super::support::*;

/// The kernel's environment with `vars` on top, as a `weft run` would send its own.
fn client(vars: &[(&str, &str)]) -> Arc<ClientEnv> {
    let mut env = ClientEnv(std::env::vars().collect());
    for (k, v) in vars {
        env.0.insert(k.to_string(), v.to_string());
    }
    Arc::new(env)
}

fn proc_file(pid: u32, name: &str) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/{name}"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|s| String::from_utf8_lossy(s).into_owned())
        .collect()
}

#[tokio::test]
async fn a_new_client_environment_respawns_the_cli_and_resumes_and_the_same_one_reuses_it() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(Script::new()).await;
    let driver = ClaudeDriver::with_config(fast_config());
    let turn = |mark: &str, mode: &str| {
        let mut input = env.input("env", "hi");
        input.client_env = Some(client(&[
            ("WEFT_TEST_CLIENT", mark),
            ("WEFT_CLAUDE_PERMISSION_MODE", mode),
        ]));
        input
    };
    let (r1, _) = run_turn(&driver, turn("one", "default"), &new_sink()).await;
    assert!(r1.ok, "{r1:?}");
    let first = driver.live_pids();
    assert_eq!(first.len(), 1);
    assert!(proc_file(first[0], "environ").contains(&"WEFT_TEST_CLIENT=one".to_string()));

    let (r2, _) = run_turn(&driver, turn("one", "default"), &new_sink()).await;
    assert!(r2.ok, "{r2:?}");
    assert_eq!(
        driver.live_pids(),
        first,
        "the same environment keeps the process"
    );

    // Another client environment, which also asks for another permission mode: a new
    // process with both, on the same conversation.
    let (r3, _) = run_turn(&driver, turn("two", "acceptEdits"), &new_sink()).await;
    assert!(r3.ok, "{r3:?}");
    let second = driver.live_pids();
    assert_eq!(second.len(), 1);
    assert_ne!(second, first);
    let environ = proc_file(second[0], "environ");
    assert!(environ.contains(&"WEFT_TEST_CLIENT=two".to_string()));
    assert!(!environ.contains(&"WEFT_TEST_CLIENT=one".to_string()));
    let argv = proc_file(second[0], "cmdline").join(" ");
    assert!(argv.contains("--permission-mode acceptEdits"), "{argv}");
    assert!(
        argv.contains(&format!("--resume {}", r1.session_id.clone().unwrap())),
        "{argv}"
    );
    assert_eq!(r3.session_id, r1.session_id);
    assert!(eventually(Duration::from_secs(5), || gone(first[0])).await);
    driver.shutdown().await;
}

#[test]
fn claude_is_never_looked_up_in_the_current_folder() {
    let planted = PlantedFolder::new("claude").unwrap();
    let path = planted.relative_path_var();
    let var = |n: &str| (n == "PATH").then(|| path.clone());
    // Found elsewhere (the project-local install above this test binary) or not at
    // all; never the planted one.
    if let Ok(found) = spawn::find_binary(&Config::default(), &var) {
        assert!(!planted.is_planted(&found), "{}", found.display());
    }
    // The terminal rail looks the same way, through the turn's environment.
    let mut env = ClientEnv::default();
    env.0.insert("PATH".into(), path.clone());
    let input = AgentTurnInput {
        workdir: planted.path().to_path_buf(),
        client_env: Some(Arc::new(env)),
        ..Default::default()
    };
    if let Some(tui) = ClaudeDriver::new().tui(&input) {
        assert!(
            !planted.is_planted(&tui.program),
            "{}",
            tui.program.display()
        );
    }
    assert!(!planted.ran());
}
