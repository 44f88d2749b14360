use std::collections::BTreeMap;
use std::sync::Arc;

use weft_kernel::ports::Accounts as _;
use weft_kernel::AgentTurnInput;
use weft_protocol::{AddAccountRequest, ClientEnv, SecretInput, SecretSource, SecretText};

use super::*;

struct Fixture {
    _dir: tempfile::TempDir,
    store: Arc<MemoryStore>,
    accounts: Accounts,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let store = Arc::new(MemoryStore::default());
    let accounts = Accounts::open(
        dir.path(),
        &dir.path().join("weft.db"),
        store.clone(),
        weft_drivers::specs_in(dir.path()),
    )
    .unwrap();
    Fixture {
        _dir: dir,
        store,
        accounts,
    }
}

fn key_request(agent: &str, kind: &str, secret: &str) -> AddAccountRequest {
    AddAccountRequest {
        agent: agent.into(),
        kind: kind.into(),
        label: format!("{agent} {kind}"),
        secret: Some(SecretInput::Value {
            value: SecretText(secret.into()),
        }),
        ..Default::default()
    }
}

fn input(agent: &str, account: Option<&str>, client: &[(&str, &str)]) -> AgentTurnInput {
    AgentTurnInput {
        session_key: format!("{agent}:s1"),
        account: account.map(str::to_string),
        client_env: Some(Arc::new(ClientEnv(
            client
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect::<BTreeMap<_, _>>(),
        ))),
        ..Default::default()
    }
}

#[test]
fn a_key_account_keeps_its_secret_in_the_store_only() {
    let f = fixture();
    let a = f
        .accounts
        .add(key_request("claude", "api-key", "sk-one"))
        .unwrap();
    assert_eq!(a.secret, SecretSource::Store);
    assert_eq!(f.store.get(&a.id).unwrap().unwrap().expose(), "sk-one");
    let listed = serde_json::to_string(&f.accounts.list().unwrap()).unwrap();
    assert!(!listed.contains("sk-one"), "{listed}");
    let spawn = f
        .accounts
        .resolve(&input(
            "claude",
            Some(&a.id),
            &[("ANTHROPIC_API_KEY", "ambient")],
        ))
        .unwrap();
    assert!(spawn.isolated);
    assert!(spawn
        .env
        .contains(&("ANTHROPIC_API_KEY".into(), "sk-one".into())));
    assert!(!format!("{spawn:?}").contains("sk-one"));
}

#[test]
fn ambient_turns_get_nothing() {
    let f = fixture();
    let spawn = f.accounts.resolve(&input("claude", None, &[])).unwrap();
    assert_eq!(spawn, SpawnAccount::default());
}

#[test]
fn bad_input_is_refused_with_the_account_named() {
    let f = fixture();
    let a = f
        .accounts
        .add(key_request("claude", "api-key", "sk-1"))
        .unwrap();
    let e = f.accounts.check("claude", "acct-nope").unwrap_err();
    assert!(e.contains("unknown account `acct-nope`"), "{e}");
    let e = f.accounts.check("codex", &a.id).unwrap_err();
    assert!(e.contains(&a.id) && e.contains("claude account"), "{e}");
    f.store.delete(&a.id).unwrap();
    let e = f.accounts.check("claude", &a.id).unwrap_err();
    assert!(e.contains(&a.id) && e.contains("gone"), "{e}");
    let mut r = key_request("codex", "endpoint", "k");
    r.base_url = Some("::not a url".into());
    let e = f.accounts.add(r).unwrap_err().to_string();
    assert!(e.contains("not a URL"), "{e}");
    let mut r = key_request("claude", "login", "k");
    r.secret = None;
    let login = f.accounts.add(r).unwrap();
    let e = f.accounts.check("claude", &login.id).unwrap_err();
    assert!(e.contains("not logged in") && e.contains(&login.id), "{e}");
    let home = std::path::PathBuf::from(login.home_dir.clone().unwrap());
    std::fs::write(
        home.join(".credentials.json"),
        r#"{"claudeAiOauth":{"accessToken":"x","expiresAt":1}}"#,
    )
    .unwrap();
    let e = f.accounts.check("claude", &login.id).unwrap_err();
    assert!(e.contains("expired"), "{e}");
    assert!(f
        .accounts
        .add(key_request("claude", "api-key", "  "))
        .is_err());
    let mut r = key_request("claude", "api-key", "k");
    r.secret = None;
    assert!(f
        .accounts
        .add(r)
        .unwrap_err()
        .to_string()
        .contains("needs a secret"));
}

#[test]
fn a_locked_store_fails_clearly_and_loses_no_record() {
    let f = fixture();
    let a = f
        .accounts
        .add(key_request("claude", "api-key", "sk-1"))
        .unwrap();
    f.store.set_unavailable(true);
    let e = f
        .accounts
        .add(key_request("claude", "api-key", "sk-2"))
        .unwrap_err();
    assert!(
        e.to_string().contains("secret store is not available"),
        "{e}"
    );
    let e = f.accounts.remove(&a.id, false).unwrap_err();
    assert!(e.to_string().contains("was kept"), "{e}");
    let e = f.accounts.check("claude", &a.id).unwrap_err();
    assert!(e.contains("not available"), "{e}");
    assert_eq!(f.accounts.list().unwrap().len(), 1);
    f.store.set_unavailable(false);
    assert_eq!(f.store.len(), 1);
    f.accounts.remove(&a.id, false).unwrap();
    assert!(f.accounts.list().unwrap().is_empty());
    assert!(f.store.is_empty());
}

#[test]
fn env_and_command_sources_are_read_at_spawn() {
    let f = fixture();
    let mut r = key_request("gemini", "api-key", "");
    r.secret = Some(SecretInput::Command {
        command: "printf g-key".into(),
    });
    let a = f.accounts.add(r).unwrap();
    let spawn = f
        .accounts
        .resolve(&input("gemini", Some(&a.id), &[]))
        .unwrap();
    assert!(spawn
        .env
        .contains(&("GEMINI_API_KEY".into(), "g-key".into())));
    let mut r = key_request("gemini", "api-key", "");
    r.secret = Some(SecretInput::Env {
        name: "WEFT_TEST_SURELY_UNSET_VAR".into(),
    });
    let b = f.accounts.add(r).unwrap();
    let e = f.accounts.check("gemini", &b.id).unwrap_err();
    assert!(e.contains("$WEFT_TEST_SURELY_UNSET_VAR"), "{e}");
}

#[test]
fn key_kinds_keep_the_clients_config_folder_and_login_kinds_have_their_own() {
    let f = fixture();
    let a = f
        .accounts
        .add(key_request("codex", "api-key", "k"))
        .unwrap();
    let spawn = f
        .accounts
        .resolve(&input("codex", Some(&a.id), &[("CODEX_HOME", "/u/codex")]))
        .unwrap();
    assert!(spawn
        .env
        .contains(&("CODEX_HOME".into(), "/u/codex".into())));
    let mut r = key_request("codex", "login", "");
    r.secret = None;
    let login = f.accounts.add(r).unwrap();
    let home = login.home_dir.clone().unwrap();
    assert!(home.ends_with(&login.id));
    std::fs::write(std::path::Path::new(&home).join("auth.json"), "{}").unwrap();
    let spawn = f
        .accounts
        .resolve(&input(
            "codex",
            Some(&login.id),
            &[("CODEX_HOME", "/u/codex")],
        ))
        .unwrap();
    assert!(spawn.env.contains(&("CODEX_HOME".into(), home.clone())));
    f.accounts.remove(&login.id, true).unwrap();
    assert!(!std::path::Path::new(&home).exists());
}

#[tokio::test]
async fn testing_a_key_account_says_its_endpoint_is_unreachable() {
    let f = fixture();
    let mut r = key_request("claude", "api-key", "sk-1");
    r.base_url = Some("http://127.0.0.1:9".into());
    let a = f.accounts.add(r).unwrap();
    let t = tokio::time::timeout(std::time::Duration::from_secs(20), f.accounts.test(&a.id))
        .await
        .expect("the test answers")
        .unwrap();
    assert_eq!(t.status, "unreachable", "{t:?}");
    assert!(!t.ok);
}

#[test]
fn a_limit_event_is_folded_into_its_account_and_usage_into_its_day() {
    let f = fixture();
    let a = f
        .accounts
        .add(key_request("claude", "setup-token", "t-1"))
        .unwrap();
    let limit = |status: &str, used: f64| weft_protocol::DriverEvent::Limit {
        limit: weft_protocol::LimitWindow {
            window: "five_hour".into(),
            status: status.into(),
            used_percent: Some(used),
            resets_at: Some(2_000_000),
            seen_at: 5,
        },
    };
    f.accounts.observe(&a.id, &limit("allowed_warning", 80.0));
    f.accounts.observe(&a.id, &limit("rejected", 100.0));
    let got = f.accounts.get(&a.id).unwrap();
    assert_eq!(
        got.limits.len(),
        1,
        "one window, replaced: {:?}",
        got.limits
    );
    assert_eq!(got.limits[0].status, "rejected");
    let snap = weft_protocol::UniversalSnapshot {
        updated_at: 1_796_083_200_000,
        usage: Some(weft_protocol::Usage {
            input_tokens: Some(10),
            output_tokens: Some(3),
            cost_usd: Some(0.25),
            ..Default::default()
        }),
        ..Default::default()
    };
    f.accounts.turn_finished(&a.id, &snap);
    f.accounts.turn_finished(
        &a.id,
        &weft_protocol::UniversalSnapshot {
            usage: Some(weft_protocol::Usage::default()),
            ..snap.clone()
        },
    );
    let days = f.accounts.usage(Some(&a.id)).unwrap();
    assert_eq!(days.len(), 1);
    assert_eq!(days[0].day, "2026-12-01");
    assert_eq!(
        (days[0].turns, days[0].unpriced_turns, days[0].input_tokens),
        (2, 1, 10)
    );
}

#[test]
fn a_turn_without_a_reported_cost_is_priced_by_its_model_or_counted_unknown() {
    let f = fixture();
    let a = f
        .accounts
        .add(key_request("codex", "api-key", "k"))
        .unwrap();
    let turn = |model: &str| weft_protocol::UniversalSnapshot {
        model: Some(model.into()),
        updated_at: 1_796_083_200_000,
        usage: Some(weft_protocol::Usage {
            input_tokens: Some(1_000_000),
            output_tokens: Some(0),
            ..Default::default()
        }),
        ..Default::default()
    };
    f.accounts.turn_finished(&a.id, &turn("gpt-5"));
    f.accounts.turn_finished(&a.id, &turn("mock-model"));
    let day = &f.accounts.usage(Some(&a.id)).unwrap()[0];
    assert!((day.cost_usd - 1.25).abs() < 1e-9, "{day:?}");
    assert_eq!((day.turns, day.unpriced_turns), (2, 1));
}

#[test]
fn a_fork_not_yet_run_finds_its_parents_transcript_in_a_new_accounts_home() {
    let f = fixture();
    let ambient = tempfile::tempdir().unwrap();
    let day = ambient.path().join("sessions/2026/12/01");
    std::fs::create_dir_all(&day).unwrap();
    let rollout = "rollout-2026-12-01T10-00-00-t-parent.jsonl";
    std::fs::write(day.join(rollout), "{\"type\":\"session_meta\"}\n").unwrap();
    let mut r = key_request("codex", "login", "");
    r.secret = None;
    let login = f.accounts.add(r).unwrap();
    let home = std::path::PathBuf::from(login.home_dir.clone().unwrap());
    std::fs::write(home.join("auth.json"), "{}").unwrap();

    let codex_home = ambient.path().to_str().unwrap();
    let mut fork = input("codex", Some(&login.id), &[("CODEX_HOME", codex_home)]);
    fork.fork = Some(weft_protocol::ForkOrigin {
        parent_key: "codex:t-parent".into(),
        parent_id: "t-parent".into(),
        ..Default::default()
    });
    f.accounts.resolve(&fork).unwrap();
    // codex resumes the parent from the account's own home to fork it: it is there now.
    let carried = home.join("sessions/2026/12/01").join(rollout);
    assert_eq!(
        std::fs::read_to_string(carried).unwrap(),
        "{\"type\":\"session_meta\"}\n"
    );
}
