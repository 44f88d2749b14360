//! Whose environment an agent gets, and where its program comes from: a turn's agent
//! starts from exactly its client's environment (a new process when that changes,
//! the same one while it does not), and nothing planted in the current folder runs.

use std::sync::Arc;
use std::time::Duration;

use weft_acp::{AcpDriver, AcpSpec};
use weft_agent_process::planted::PlantedFolder;
use weft_kernel::AgentDriver;
use weft_protocol::{ClientEnv, DriverEvent};

use super::fake::fake_spec;
use super::support::*;

/// A client's environment: only PATH (to find `node`) and `vars`.
fn client(vars: &[(&str, &str)]) -> Arc<ClientEnv> {
    let mut env: ClientEnv = ClientEnv::default();
    env.0.insert(
        "PATH".into(),
        std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
    );
    for (k, v) in vars {
        env.0.insert(k.to_string(), v.to_string());
    }
    Arc::new(env)
}

/// True when process `pid` is gone (or a zombie).
fn gone(pid: u32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).map_or(true, |s| {
        s.rsplit_once(')')
            .and_then(|(_, r)| r.split_whitespace().next())
            == Some("Z")
    })
}

/// `NAME=value pid=N` → (value, N).
fn seen(text: &str) -> (String, u32) {
    let (var, pid) = text.split_once(" pid=").expect(text);
    let value = var.split_once('=').expect(text).1.to_string();
    (value, pid.parse().expect(text))
}

#[tokio::test]
async fn a_new_client_environment_gets_a_new_process_that_sees_it_and_the_same_one_reuses() {
    let Some(spec) = fake_spec() else { return };
    let d = AcpDriver::new(spec);
    let h = Home::new();
    let turn = |mark: &str| {
        let mut input = h.input("fake:env", "env:WEFT_FAKE_MARK", vec![]);
        input.client_env = Some(client(&[("WEFT_FAKE_MARK", mark)]));
        input
    };
    let (r1, s1) = run(&d, turn("one"), &TestSink::new()).await;
    assert!(r1.ok, "{r1:?}");
    let (value, first) = seen(&s1.text);
    assert_eq!(value, "one");
    assert_eq!(d.live_pids(), vec![first]);

    // The same environment (a fresh copy of it, as a client's next request brings):
    // the same process.
    let (r2, s2) = run(&d, turn("one"), &TestSink::new()).await;
    assert!(r2.ok, "{r2:?}");
    assert_eq!(seen(&s2.text), ("one".to_string(), first));

    // What the Gemini driver asks before choosing between its live ACP process and a
    // resumed headless one.
    assert!(d.can_continue(&turn("one")));
    assert!(!d.can_continue(&turn("two")));

    // Another: a new process that sees the new value, on the same session, and the
    // old process is gone.
    let sink = TestSink::new();
    let (r3, s3) = run(&d, turn("two"), &sink).await;
    assert!(r3.ok, "{r3:?}");
    let (value, second) = seen(&s3.text);
    assert_eq!(value, "two");
    assert_ne!(second, first);
    assert_eq!(d.live_pids(), vec![second]);
    assert_eq!(r3.session_id, r1.session_id, "the session was resumed");
    let restarted = sink.events.lock().iter().any(|e| {
        matches!(e, DriverEvent::Notice { text } if text.contains("restarted") && text.contains("environment"))
    });
    assert!(restarted, "no notice of the restart");
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while !gone(first) {
        assert!(
            std::time::Instant::now() < deadline,
            "{first} outlived its session"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    d.shutdown().await;
}

#[tokio::test]
async fn the_agent_sees_the_clients_environment_not_the_kernels() {
    let Some(spec) = fake_spec() else { return };
    let d = AcpDriver::new(spec);
    let h = Home::new();
    // The kernel (this test process) has a HOME; the client did not send one.
    assert!(std::env::var_os("HOME").is_some());
    let mut input = h.input("fake:home", "env:HOME", vec![]);
    input.client_env = Some(client(&[]));
    let (r, s) = run(&d, input, &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(seen(&s.text).0, "<unset>");
    // The turn's own env (an account) goes on top of the client's.
    let mut input = h.input(
        "fake:home2",
        "env:HOME",
        vec![("HOME".into(), "/acct".into())],
    );
    input.client_env = Some(client(&[("HOME", "/client")]));
    let (r, s) = run(&d, input, &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(seen(&s.text).0, "/acct");
    d.shutdown().await;
}

#[tokio::test]
async fn an_agent_planted_in_the_current_folder_is_not_run() {
    let planted = PlantedFolder::new("weft-planted-acp").unwrap();
    let d = AcpDriver::new(AcpSpec::new("planted", "weft-planted-acp", &[]));
    let h = Home::new();
    // The client ran in the planted folder, with a PATH that names it every way.
    let mut input = h.input("planted:1", "hi", vec![]);
    input.workdir = planted.path().to_path_buf();
    let mut env = ClientEnv::default();
    env.0.insert("PATH".into(), planted.relative_path_var());
    input.client_env = Some(Arc::new(env));
    let (r, snap) = run(&d, input, &TestSink::new()).await;
    assert!(!r.ok);
    let err = snap.error.unwrap_or_default();
    assert!(err.contains("was not found"), "{err}");
    assert!(!planted.ran());
}

#[test]
fn no_preset_is_looked_up_in_the_current_folder() {
    for spec in weft_acp::config::presets() {
        let planted = PlantedFolder::new(&spec.command).unwrap();
        let path = planted.relative_path_var();
        let var = |n: &str| (n == "PATH").then(|| path.clone());
        // Found elsewhere (the project-local install above this test binary) or not
        // at all; never the planted one.
        if let Ok(found) = spec.find_binary(&var) {
            assert!(
                !planted.is_planted(&found),
                "{}: {}",
                spec.id,
                found.display()
            );
        }
        assert!(!planted.ran());
    }
}
