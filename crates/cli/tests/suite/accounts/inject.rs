//! Three Claude accounts streaming at once, a Codex endpoint and a Gemini key account,
//! switches that resume, bad input, and no secret left behind.

use std::path::PathBuf;

use serde_json::Value;
use weft_testkit::{AnthropicServer, GeminiServer, ResponsesServer, Script, Turn};

use super::super::support::{assert_reply, write};
use super::{agent_bin, only_credential, secret, World};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn accounts_inject_exactly_their_credentials_and_leave_no_secret_behind() {
    let Some(claude) = agent_bin("claude") else {
        return;
    };
    let reply = |t: &str| Script::new().default_reply(Turn::new().text(t));
    let ambient = AnthropicServer::start(reply("ambient reply"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let one = AnthropicServer::start(reply("reply from one"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let two = AnthropicServer::start(reply("reply from two"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let gateway = AnthropicServer::start(reply("reply from the gateway"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new(&ambient.base_url());
    w.vars
        .push(("WEFT_CLAUDE_BIN".into(), claude.display().to_string()));
    let (k1, k2, kg) = (secret("one"), secret("two"), secret("gateway"));
    let mut secrets = vec![k1.clone(), k2.clone(), kg.clone()];

    let Some(a1) = w.add_account(
        ["claude", "api-key", "first key", &one.base_url()],
        &[],
        &k1,
    ) else {
        return;
    };
    let a2 = w
        .add_account(
            ["claude", "api-key", "second key", &two.base_url()],
            &[],
            &k2,
        )
        .unwrap_or_default();
    let ag = w
        .add_account(
            ["claude", "gateway", "gateway", &gateway.base_url()],
            &["--model", "claude-sonnet-4-5"],
            &kg,
        )
        .unwrap_or_default();
    for id in [&a1, &a2, &ag] {
        assert!(id.starts_with("acct-"), "{id}");
    }
    let listed = w.run_json(&["accounts", "list", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(3), "{listed}");
    assert_eq!(listed[0]["secret"]["type"], "store", "{listed}");

    // Three sessions on three accounts, streaming at the same time.
    let mut keys = Vec::new();
    for (id, prompt) in [
        (&a1, "hello one"),
        (&a2, "hello two"),
        (&ag, "hello gateway"),
    ] {
        let v = w.run_json(&[
            "run",
            "--detach",
            "--agent",
            "claude",
            "--account",
            id,
            prompt,
        ]);
        keys.push(v["sessionKey"].as_str().unwrap_or_default().to_string());
    }
    for (key, want) in
        keys.iter()
            .zip(["reply from one", "reply from two", "reply from the gateway"])
    {
        let v = w.run_json(&["wait", key, "--json"]);
        assert!(
            v["text"].as_str().is_some_and(|t| t.contains(want)),
            "{key}: {v}"
        );
    }
    let (r1, r2, rg) = (
        one.recorder().requests(),
        two.recorder().requests(),
        gateway.recorder().requests(),
    );
    assert!(!r1.is_empty() && !r2.is_empty() && !rg.is_empty());
    // Every model call carries exactly its account's credential; nothing carries
    // another's (claude's bodiless `HEAD /` preconnect carries none).
    only_credential(&r1, ("x-api-key", &k1));
    only_credential(&r2, ("x-api-key", &k2));
    only_credential(&rg, ("authorization", &format!("Bearer {kg}")));
    assert!(
        ambient.recorder().requests().is_empty(),
        "a turn on an account reached the ambient endpoint"
    );
    assert_eq!(w.account_of(&keys[0]), Value::from(a1.clone()));

    // The first session switches to the second key mid-conversation: the same config
    // folder, so claude resumes and the second endpoint sees the history.
    let before = two.messages_requests().len();
    let v = w.run_json(&[
        "run",
        "--json",
        "--session",
        &keys[0],
        "--account",
        &a2,
        "and now on two",
    ]);
    assert_reply(&v, "reply from two");
    let switched: Vec<_> = two.messages_requests().into_iter().skip(before).collect();
    assert!(
        switched
            .iter()
            .any(|r| r.all_text().contains("hello one") && r.all_text().contains("reply from one")),
        "the switched turn did not carry the history: {:?}",
        switched
            .iter()
            .map(|r| r.messages().to_vec())
            .collect::<Vec<_>>()
    );
    only_credential(&two.recorder().requests(), ("x-api-key", &k2));

    // Bad input: a clear error naming the account, the session untouched.
    let turns_before = w.run_json(&["history", &keys[0], "--json"]);
    let said = w.refused(
        &["run", "--session", &keys[0], "--account", "acct-nope", "x"],
        None,
    );
    assert!(said.contains("unknown account `acct-nope`"));
    let (code, codex_acct) = {
        let out = w.weft_in(
            &[
                "accounts",
                "add",
                "--agent",
                "codex",
                "--kind",
                "api-key",
                "--label",
                "codex key",
                "--secret-env",
                "WEFT_TEST_NEVER_SET",
            ],
            None,
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).trim().to_string(),
        )
    };
    assert_eq!(code, Some(0));
    let stderr = w.refused(
        &["run", "--session", &keys[0], "--account", &codex_acct, "x"],
        None,
    );
    assert!(
        stderr.contains(&codex_acct) && stderr.contains("codex account"),
        "{stderr}"
    );
    let out = w.weft(&["run", "--agent", "codex", "--account", &codex_acct, "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(stderr.contains("$WEFT_TEST_NEVER_SET"), "{stderr}");
    let login = w.ok(&[
        "accounts", "add", "--agent", "claude", "--kind", "login", "--label", "sub",
    ]);
    let out = w.weft(&["run", "--session", &keys[0], "--account", &login, "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(
        stderr.contains(&login) && stderr.contains("not logged in"),
        "{stderr}"
    );
    let said = w.refused_add(
        &[
            "--agent",
            "codex",
            "--kind",
            "endpoint",
            "--label",
            "bad",
            "--base-url",
            "::not-a-url",
        ],
        "sk-never-kept",
    );
    assert!(said.contains("not a URL"));
    let listed = w.run_json(&["accounts", "list", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(5), "{listed}");
    assert_eq!(
        w.run_json(&["history", &keys[0], "--json"]),
        turns_before,
        "a refused switch changed the session"
    );
    assert_eq!(
        w.account_of(&keys[0]),
        Value::from(a2.clone()),
        "the session's account moved"
    );
    secrets.push("sk-never-kept".into());

    // The ambient account still works: the agent's own environment, passed through.
    let v = w.run_json(&["run", "--json", "--agent", "claude", "on my own login"]);
    assert_reply(&v, "ambient reply");
    only_credential(
        &ambient.recorder().requests(),
        ("x-api-key", "sk-ambient-claude-key"),
    );

    // A switch to a login account, whose config folder is its own: the transcript is
    // carried there (only the transcript), so claude resumes with the history.
    let sub = AnthropicServer::start(reply("reply from the subscription"))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let sub_url = format!("ANTHROPIC_BASE_URL={}", sub.base_url());
    let login2 = w.ok(&[
        "accounts",
        "add",
        "--agent",
        "claude",
        "--kind",
        "login",
        "--label",
        "subscription",
        "--env",
        &sub_url,
        "--env",
        "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
        "--env",
        "CLAUDE_CODE_MAX_RETRIES=0",
        "--env",
        "IS_SANDBOX=1",
    ]);
    let login_home = w.account(&login2)["homeDir"]
        .as_str()
        .map(PathBuf::from)
        .unwrap_or_default();
    // What `claude auth login` would leave there (the CLI's own file, in the account's
    // home; Weft never writes or copies one).
    let far = 4_102_444_800_000_i64;
    write(
        &login_home.join(".credentials.json"),
        &format!(
            r#"{{"claudeAiOauth":{{"accessToken":"oauth-access-e2e","refreshToken":"oauth-refresh-e2e","expiresAt":{far},"scopes":["user:inference"],"subscriptionType":"max"}}}}"#
        ),
    );
    write(
        &login_home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    );
    let v = w.run_json(&[
        "run",
        "--json",
        "--session",
        &keys[1],
        "--account",
        &login2,
        "now on the subscription",
    ]);
    assert_reply(&v, "reply from the subscription");
    let carried = sub.messages_requests();
    assert!(
        carried
            .iter()
            .any(|r| r.all_text().contains("hello two") && r.all_text().contains("reply from two")),
        "the turn on the login account did not carry the history"
    );
    assert!(sub
        .recorder()
        .requests()
        .iter()
        .filter(|r| r.route().contains("/v1/messages"))
        .all(
            |r| r.header("authorization") == Some("Bearer oauth-access-e2e")
                && r.header("x-api-key").is_none()
        ));
    assert!(
        !login_home
            .join("projects")
            .read_dir()
            .map_or(true, |mut d| d.next().is_none()),
        "no transcript was carried into the login account's home"
    );

    codex_and_gemini(&mut w, &mut secrets).await;

    // `weft accounts test` takes the key to its endpoint.
    let out = w.weft(&["accounts", "test", &a1, "--json"]);
    let t: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    assert_eq!(t["id"], a1.as_str(), "{t}");
    assert!(one
        .recorder()
        .requests()
        .iter()
        .any(|r| r.route() == "/v1/models" && r.header("x-api-key") == Some(k1.as_str())));

    // Nothing Weft wrote or printed holds a secret: the database and its WAL, the
    // logs, every stored event and snapshot, the commands' output.
    let history: Vec<Value> = keys
        .iter()
        .map(|k| w.run_json(&["history", k, "--json"]))
        .collect();
    let stored = serde_json::to_string(&history).unwrap_or_default();
    w.ok(&["daemon", "stop"]);
    // Every file and database row under WEFT_HOME (the daemon's log among them) and
    // everything printed.
    let all: Vec<&str> = secrets.iter().map(String::as_str).collect();
    weft_testkit::leaks::assert_none(&[w.env.home.path()], &w.captured.0, &all);
    for s in &secrets {
        assert!(!stored.contains(s.as_str()), "a secret is in the history");
    }
    // Removing an account takes its secret out of the store.
    let out = w.weft(&["accounts", "remove", &a1]);
    assert_eq!(out.status.code(), Some(0));
    let listed = w.run_json(&["accounts", "list", "--json"]);
    assert!(!listed.to_string().contains(&a1));
    let _ = (&w.agent_home, &w.codex_home);
}

/// A codex `endpoint` account and a gemini `api-key` account, each against its own
/// scripted server, with the ambient endpoints never reached.
async fn codex_and_gemini(w: &mut World, secrets: &mut Vec<String>) {
    if let Some(codex) = agent_bin("codex") {
        let server = ResponsesServer::start(
            weft_testkit::openai::Script::new()
                .default_reply(weft_testkit::openai::Turn::new().text("codex on its endpoint")),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let key = one_turn_on_new_account(
            w,
            secrets,
            ("codex", codex),
            ["endpoint", "local server", &server.v1_url()],
            &["--protocol", "openai-responses"],
            "codex on its endpoint",
        );
        only_credential(
            &server.recorder().requests(),
            ("authorization", &format!("Bearer {key}")),
        );
    }
    if let Some(gemini) = agent_bin("gemini") {
        let server = GeminiServer::start(
            weft_testkit::gemini::Script::new()
                .default_reply(weft_testkit::gemini::Turn::new().text("gemini on its key")),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let key = one_turn_on_new_account(
            w,
            secrets,
            ("gemini", gemini),
            ["api-key", "gemini key", &server.base_url()],
            &["--env", "GEMINI_CLI_NO_RELAUNCH=true"],
            "gemini on its key",
        );
        only_credential(&server.recorder().requests(), ("x-goog-api-key", &key));
    }
}

/// Adds an account of `agent` (its CLI at `bin`) with a new secret, and runs
/// `hello AGENT` on it, whose reply must hold `want`; the secret.
fn one_turn_on_new_account(
    w: &mut World,
    secrets: &mut Vec<String>,
    (agent, bin): (&str, PathBuf),
    [kind, label, base_url]: [&str; 3],
    more: &[&str],
    want: &str,
) -> String {
    w.vars.push((
        format!("WEFT_{}_BIN", agent.to_uppercase()),
        bin.display().to_string(),
    ));
    let key = secret(agent);
    secrets.push(key.clone());
    let id = w
        .add_account([agent, kind, label, base_url], more, &key)
        .unwrap_or_default();
    w.run_on(agent, &id, &format!("hello {agent}"), want);
    key
}
