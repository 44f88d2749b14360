//! The agents whose models are reachable only through their vendor's login (Auggie,
//! Amp through the acp-amp adapter): what can be proven offline, against the real
//! binaries — they start, `initialize` and `session/new` answer, their modes are read,
//! and a prompt without a login ends with the agent's own words in the snapshot.

use weft_kernel::AgentDriver;

use super::chat_agents::preset;
use super::support::*;

fn isolated(h: &Home) -> Vec<(String, String)> {
    let home = h.home.path();
    vec![
        ("HOME".into(), home.display().to_string()),
        (
            "XDG_CONFIG_HOME".into(),
            home.join(".config").display().to_string(),
        ),
        (
            "XDG_DATA_HOME".into(),
            home.join(".local/share").display().to_string(),
        ),
        (
            "XDG_CACHE_HOME".into(),
            home.join(".cache").display().to_string(),
        ),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auggie_without_login_fails_with_its_own_words() {
    let Some((spec, _)) = preset_binary("auggie") else {
        return;
    };
    let d = driver(spec);
    let info = d.info().await;
    assert!(info.installed, "{info:?}");
    assert_eq!(info.version.as_deref(), Some("0.36.0"), "{info:?}");
    let h = Home::new();
    let sink = TestSink::new();
    let (result, snap) = run(&d, h.input("auggie:a", "Say hello.", isolated(&h)), &sink).await;
    assert!(!result.ok, "{result:?}");
    // `initialize` answered (the driver records the agent's version from it), then
    // session/new was refused with Auggie's own message.
    let error = snap.error.clone().unwrap_or_default();
    assert!(
        error.contains("Authentication required") && error.contains("auggie login"),
        "{snap:#?}"
    );
    assert!(d.live_pids().is_empty());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn auggie_with_a_session_reads_its_modes() {
    let Some((spec, _)) = preset_binary("auggie") else {
        return;
    };
    // A session whose tenant is a loopback server that knows none of Augment's API:
    // enough for session/new (models come back empty), never for a model call.
    let tenant = weft_testkit::ChatServer::start(weft_testkit::chat::Script::new())
        .await
        .unwrap();
    let h = Home::new();
    let auth = serde_json::json!({"accessToken": "weft-placeholder",
        "tenantURL": format!("{}/", tenant.base_url()), "scopes": ["read", "write"]});
    let mut env = isolated(&h);
    env.push(("AUGMENT_SESSION_AUTH".into(), auth.to_string()));
    let mut spec = spec;
    spec.env = env;
    let d = driver(spec);
    let models = d.models().await;
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert!(
        ids.contains(&"mode:default") && ids.contains(&"mode:ask"),
        "{models:#?}"
    );
    assert!(
        tenant
            .recorder()
            .requests()
            .iter()
            .any(|r| r.route() == "/get-models"),
        "auggie never asked the tenant for its models"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn amp_adapter_starts_and_reads_modes_without_login() {
    let Some((spec, _)) = preset_binary("amp") else {
        return;
    };
    let h = Home::new();
    let mut spec = spec;
    spec.env = isolated(&h);
    let d = driver(spec);
    let models = d.models().await;
    let ids: Vec<&str> = models.iter().map(|m| m.id.as_str()).collect();
    assert!(
        ids.contains(&"mode:default") && ids.contains(&"mode:bypass"),
        "{models:#?}"
    );
    // Without a login amp starts its browser login flow and prints no JSON; the
    // adapter says only that, as the reply's text, and ends the turn normally.
    let sink = TestSink::new();
    let (result, snap) = run(&d, h.input("amp:a", "Say hello.", isolated(&h)), &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    assert!(snap.text.starts_with("Error: "), "{snap:#?}");
    d.shutdown().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_preset_is_listed_with_its_version() {
    // `weft agents` shows what info() says: installed and a version for each preset
    // setup.sh installs (under CI=true a missing one fails).
    for (id, version) in [
        ("qwen", "0.24.4"),
        ("copilot", "1.0.102"),
        ("codex-acp", "0.16.0"),
        ("auggie", "0.36.0"),
        ("hermes", "0.19.0"),
        ("kimi", "1.51.0"),
    ] {
        let Some((spec, _)) = preset_binary(id) else {
            continue;
        };
        let info = weft_acp::AcpDriver::new(spec).info().await;
        assert!(info.installed, "{info:?}");
        assert_eq!(info.version.as_deref(), Some(version), "{id}: {info:?}");
    }
    assert_eq!(preset("amp").command, "acp-amp");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn copilot_without_login_or_provider_fails_with_its_own_words() {
    // The GitHub login path, offline: no token, no provider of one's own.
    let Some((spec, _)) = preset_binary("copilot") else {
        return;
    };
    let h = Home::new();
    let mut env = isolated(&h);
    env.push(("COPILOT_AUTO_UPDATE".into(), "false".into()));
    let d = driver(spec);
    let sink = TestSink::new();
    let (result, snap) = run(&d, h.input("copilot:a", "Say hello.", env), &sink).await;
    assert!(!result.ok, "{result:?}");
    let error = snap.error.clone().unwrap_or_default();
    assert!(error.contains("Authentication required"), "{snap:#?}");
    assert!(d.live_pids().is_empty());
}
