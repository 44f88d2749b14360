//! Limits from Codex and Gemini folded into their accounts, and a session that opted in
//! to auto-switch moving on by itself: the real codex and gemini against scripted
//! servers that report windows (codex's `x-codex-*` headers) or refuse with 429.

use serde_json::{json, Value};
use weft_testkit::{GeminiServer, ResponsesServer};

use super::{agent_bin, only_credential, secret, World};

fn account<'a>(listed: &'a Value, id: &str) -> &'a Value {
    listed
        .as_array()
        .and_then(|a| a.iter().find(|x| x["id"] == id))
        .unwrap_or_else(|| panic!("no account {id} in {listed}"))
}

fn window<'a>(account: &'a Value, name: &str) -> Option<&'a Value> {
    account["limits"]
        .as_array()?
        .iter()
        .find(|w| w["window"] == name)
}

/// What `weft run --json --agent AGENT --account ID REST…` printed (whatever its exit
/// code).
fn run_any(w: &mut World, [agent, id]: [&str; 2], rest: &[&str]) -> Value {
    let mut args = vec!["run", "--json", "--agent", agent, "--account", id];
    args.extend_from_slice(rest);
    let out = w.weft(&args);
    serde_json::from_slice::<Value>(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "weft {args:?} ({e}): {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_limits_fold_into_the_account_and_an_opted_in_session_moves_on_by_itself() {
    let Some(codex) = agent_bin("codex") else {
        return;
    };
    use weft_testkit::openai::{Script, Turn};
    let reset = 1_896_100_000_i64;
    // The first account's server: its five-hour window is used up.
    let capped = ResponsesServer::start(
        Script::new().default_reply(
            Turn::status_body(
                429,
                json!({"error": {"type": "usage_limit_reached",
                "message": "The usage limit has been reached", "resets_at": reset}}),
            )
            .header("x-codex-primary-used-percent", "100")
            .header("x-codex-primary-window-minutes", "300")
            .header("x-codex-primary-reset-at", &reset.to_string()),
        ),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    // The second's: 42% of five hours, 10% of the week used.
    let roomy = ResponsesServer::start(
        Script::new().default_reply(
            Turn::new()
                .text("done on the second account")
                .header("x-codex-primary-used-percent", "42")
                .header("x-codex-primary-window-minutes", "300")
                .header("x-codex-primary-reset-at", &reset.to_string())
                .header("x-codex-secondary-used-percent", "10")
                .header("x-codex-secondary-window-minutes", "10080")
                .header("x-codex-secondary-reset-at", &(reset + 86_400).to_string()),
        ),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new("http://127.0.0.1:9");
    w.vars
        .push(("WEFT_CODEX_BIN".into(), codex.display().to_string()));
    let (k1, k2) = (secret("capped"), secret("roomy"));
    let Some(c1) = w.add_account(["codex", "endpoint", "capped", &capped.v1_url()], &[], &k1)
    else {
        return;
    };
    let c2 = w
        .add_account(["codex", "endpoint", "roomy", &roomy.v1_url()], &[], &k2)
        .unwrap_or_default();

    let first = run_any(
        &mut w,
        ["codex", &c1],
        &["--auto-switch", "count the files"],
    );
    let snap = &first["snapshot"];
    let key = first["sessionKey"].as_str().unwrap_or_default().to_string();
    assert_eq!(snap["limitHit"]["window"], "five_hour", "{snap}");
    assert_eq!(snap["limitHit"]["status"], "rejected", "{snap}");
    let notices = snap["notices"].to_string();
    assert!(notices.contains("auto-switch"), "{snap}");

    // The session moved to the second account and ran the prompt again there.
    let last = w.wait_reply(&key, "done on the second account");
    // Another endpoint cannot read the first one's reasoning: a new codex thread,
    // started from the handover.
    assert_ne!(last["sessionId"], snap["sessionId"], "{last}");
    assert!(
        roomy
            .responses_requests()
            .iter()
            .any(|r| r.all_text().contains("count the files")
                && r.all_text().contains("take it over"))
    );
    only_credential(
        &roomy.recorder().requests(),
        ("authorization", &format!("Bearer {k2}")),
    );
    only_credential(
        &capped.recorder().requests(),
        ("authorization", &format!("Bearer {k1}")),
    );

    // Both accounts' windows, as codex reported them.
    let listed = w.run_json(&["accounts", "list", "--json"]);
    let used = window(account(&listed, &c1), "five_hour").cloned();
    let used = used.unwrap_or_else(|| panic!("no five_hour window on {c1}: {listed}"));
    assert_eq!(used["status"], "rejected");
    assert_eq!(used["usedPercent"], 100.0);
    assert_eq!(used["resetsAt"], reset * 1000);
    let second = account(&listed, &c2);
    assert_eq!(
        window(second, "five_hour").map(|w| w["usedPercent"].clone()),
        Some(json!(42.0)),
        "{listed}"
    );
    assert_eq!(
        window(second, "seven_day").map(|w| w["status"].clone()),
        Some(json!("allowed")),
        "{listed}"
    );
    assert_eq!(w.account_of(&key), Value::from(c2.clone()));

    // Without the opt-in, a used-up limit only says so: nothing moves.
    let snap = run_any(&mut w, ["codex", &c1], &["again, no opt-in"])["snapshot"].clone();
    assert_eq!(snap["limitHit"]["status"], "rejected", "{snap}");
    assert!(
        !snap["notices"].to_string().contains("auto-switch"),
        "{snap}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_429_resource_exhausted_is_the_accounts_used_up_daily_quota() {
    let Some(gemini) = agent_bin("gemini") else {
        return;
    };
    use weft_testkit::gemini::{Script, Turn};
    let server = GeminiServer::start(Script::new().default_reply(Turn::daily_quota_exhausted()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut w = World::new("http://127.0.0.1:9");
    w.vars
        .push(("WEFT_GEMINI_BIN".into(), gemini.display().to_string()));
    // Gemini skips a settings file under a folder others may write to (/tmp): this
    // WEFT_HOME, where Weft writes the account's, is in the build's own tmp instead, or
    // under the user's cache when the build itself is under /tmp (a clone there).
    let tmp = std::path::Path::new(env!("CARGO_TARGET_TMPDIR"));
    let parent = if tmp.starts_with("/tmp") {
        let cache = std::env::var_os("HOME")
            .map(std::path::PathBuf::from)
            .unwrap_or_default()
            .join(".cache/weft-tests");
        std::fs::create_dir_all(&cache).unwrap_or_else(|e| panic!("{e}"));
        cache
    } else {
        tmp.to_path_buf()
    };
    w.env.home = tempfile::tempdir_in(parent).unwrap_or_else(|e| panic!("{e}"));
    // The user's own settings choose a Google login: the key account still uses its
    // key (Weft forces the auth type for its spawns).
    std::fs::write(
        w.agent_home.path().join(".gemini/settings.json"),
        r#"{"security":{"auth":{"selectedType":"oauth-personal"}},"privacy":{"usageStatisticsEnabled":false}}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let key = secret("gemini-quota");
    let Some(id) = w.add_account(
        ["gemini", "api-key", "free tier", &server.base_url()],
        &["--env", "GEMINI_CLI_NO_RELAUNCH=true"],
        &key,
    ) else {
        return;
    };
    let snap = run_any(&mut w, ["gemini", &id], &["hello"])["snapshot"].clone();
    assert_eq!(snap["limitHit"]["window"], "daily", "{snap}");
    assert!(snap["error"].as_str().is_some_and(|e| e.contains("quota")));
    assert!(snap["notices"]
        .to_string()
        .contains("daily usage limit is reached"));
    let listed = w.run_json(&["accounts", "list", "--json"]);
    assert_eq!(
        window(account(&listed, &id), "daily").map(|w| w["status"].clone()),
        Some(json!("rejected")),
        "{listed}"
    );
    only_credential(&server.recorder().requests(), ("x-goog-api-key", &key));
}
