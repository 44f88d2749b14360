//! Accounts end to end: `weft accounts add` with secrets in the real OS secret store
//! (Secret Service; CI runs the suite under `dbus-run-session` with an unlocked GNOME
//! Keyring), the real claude, codex and gemini against scripted servers that record
//! each request's credentials, and a search of everything Weft wrote and printed for
//! the secrets' bytes.

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::{Output, Stdio};

use serde_json::Value;
use weft_testkit::{AnthropicServer, GeminiServer, RecordedRequest, ResponsesServer, Script, Turn};

use super::support::Env;

fn agent_bin(name: &str) -> Option<PathBuf> {
    let var = format!("WEFT_{}_BIN", name.to_uppercase());
    let found = weft_agent_process::find_agent(name, &[&var], &|n| std::env::var(n).ok()).ok();
    if found.is_none() {
        assert!(
            std::env::var("CI").map_or(true, |v| v != "true"),
            "CI=true and the real {name} CLI is missing (scripts/setup.sh installs it)"
        );
        eprintln!("SKIPPED: no {name} CLI found");
    }
    found
}

/// Everything the commands of one test printed, to search for secrets at the end.
#[derive(Default)]
struct Captured(Vec<u8>);

impl Captured {
    fn keep(&mut self, out: &Output) {
        self.0.extend_from_slice(&out.stdout);
        self.0.extend_from_slice(&out.stderr);
    }
}

/// A home for the agents (onboarding done, Gemini set to key auth) and the client
/// environment every `weft` command of the test runs with: an ambient credential and
/// endpoint for each agent, which a chosen account must never see.
struct World {
    env: Env,
    agent_home: tempfile::TempDir,
    codex_home: PathBuf,
    vars: Vec<(String, String)>,
    captured: Captured,
}

impl World {
    fn new(ambient: &str) -> World {
        let env = Env::new();
        let agent_home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            agent_home.path().join(".claude.json"),
            r#"{"hasCompletedOnboarding":true}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let gemini = agent_home.path().join(".gemini");
        std::fs::create_dir_all(&gemini).unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            gemini.join("settings.json"),
            r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}"#,
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let codex_home = agent_home.path().join(".codex");
        std::fs::create_dir_all(&codex_home).unwrap_or_else(|e| panic!("{e}"));
        let home = agent_home.path().display().to_string();
        let vars = [
            ("HOME", home.as_str()),
            ("CODEX_HOME", &codex_home.display().to_string()),
            ("ANTHROPIC_BASE_URL", ambient),
            ("ANTHROPIC_API_KEY", "sk-ambient-claude-key"),
            ("WEFT_CODEX_BASE_URL", &format!("{ambient}/v1")),
            ("WEFT_CODEX_API_KEY_ENV", "WEFT_TEST_AMBIENT_KEY"),
            ("WEFT_TEST_AMBIENT_KEY", "sk-ambient-codex-key"),
            ("GOOGLE_GEMINI_BASE_URL", ambient),
            ("GEMINI_API_KEY", "ambient-gemini-key"),
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("IS_SANDBOX", "1"),
            ("WEFT_CODEX_MAX_RETRIES", "0"),
            ("WEFT_CODEX_SANDBOX", "danger-full-access"),
            ("WEFT_CODEX_APPROVAL_POLICY", "never"),
            ("WEFT_CODEX_CONFIG", "model=\"mock-model\""),
            ("GEMINI_CLI_NO_RELAUNCH", "true"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
        World {
            env,
            agent_home,
            codex_home,
            vars,
            captured: Captured::default(),
        }
    }

    fn weft_in(&mut self, args: &[&str], stdin: Option<&str>) -> Output {
        let mut cmd = self.env.cmd(args);
        cmd.envs(self.vars.iter().map(|(k, v)| (k.as_str(), v.as_str())));
        if stdin.is_some() {
            cmd.stdin(Stdio::piped());
        }
        cmd.stdout(Stdio::piped()).stderr(Stdio::piped());
        let mut child = cmd.spawn().unwrap_or_else(|e| panic!("run weft: {e}"));
        if let (Some(text), Some(mut pipe)) = (stdin, child.stdin.take()) {
            pipe.write_all(text.as_bytes())
                .unwrap_or_else(|e| panic!("{e}"));
        }
        let out = child
            .wait_with_output()
            .unwrap_or_else(|e| panic!("weft: {e}"));
        self.captured.keep(&out);
        out
    }

    fn weft(&mut self, args: &[&str]) -> Output {
        self.weft_in(args, None)
    }

    fn ok(&mut self, args: &[&str]) -> String {
        let out = self.weft(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "weft {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// `weft accounts add ARGS --secret-stdin` fed `secret`; its id, or `None` when no
    /// secret service runs here (a skip, except in CI).
    fn add_with_secret(&mut self, args: &[&str], secret: &str) -> Option<String> {
        let mut all = vec!["accounts", "add"];
        all.extend_from_slice(args);
        if args.contains(&"claude") {
            // The turns' own knobs are public variables of the account: the ambient
            // CLAUDE_* ones are dropped with the rest.
            all.extend_from_slice(&[
                "--env",
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC=1",
                "--env",
                "CLAUDE_CODE_MAX_RETRIES=0",
                "--env",
                "IS_SANDBOX=1",
            ]);
        }
        all.push("--secret-stdin");
        let out = self.weft_in(&all, Some(secret));
        let stderr = String::from_utf8_lossy(&out.stderr);
        if stderr.contains("secret store is not available") {
            // scripts/lib/with-keyring.sh (where CI runs this test) provides one.
            assert!(
                std::env::var("WEFT_IN_KEYRING_SESSION").map_or(true, |v| v != "1"),
                "no Secret Service inside scripts/lib/with-keyring.sh: {stderr}"
            );
            eprintln!("SKIPPED: no Secret Service here ({stderr})");
            return None;
        }
        assert_eq!(out.status.code(), Some(0), "accounts add: {stderr}");
        Some(String::from_utf8_lossy(&out.stdout).trim().to_string())
    }

    fn run_json(&mut self, args: &[&str]) -> Value {
        let out = self.weft(args);
        let v: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "weft {args:?} ({e}): {} / {}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            )
        });
        assert_eq!(out.status.code(), Some(0), "weft {args:?}: {v}");
        v
    }
}

fn secret(tag: &str) -> String {
    format!("sk-{tag}-{}", uuid_like())
}

fn uuid_like() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", t, std::process::id())
}

/// Every request to a model route carries `want` (header, value), and no request
/// carries any other credential header.
fn only_credential(requests: &[RecordedRequest], want: (&str, &str)) {
    let calls: Vec<_> = requests
        .iter()
        .filter(|r| r.route().contains("/v1"))
        .collect();
    assert!(!calls.is_empty(), "no model call");
    for r in requests {
        let is_call = r.route().contains("/v1");
        for name in ["x-api-key", "authorization", "x-goog-api-key"] {
            let got = r.header(name);
            if name == want.0 {
                if is_call {
                    assert_eq!(got, Some(want.1), "{} {}", r.method, r.path);
                } else {
                    assert!(
                        got.is_none() || got == Some(want.1),
                        "{} {}",
                        r.method,
                        r.path
                    );
                }
            } else {
                assert_eq!(got, None, "{name} on {} {}", r.method, r.path);
            }
        }
    }
}

/// Every file under `dir` whose bytes contain `needle`.
fn files_containing(dir: &Path, needle: &[u8]) -> Vec<PathBuf> {
    let mut hits = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else if let Ok(bytes) = std::fs::read(&p) {
                if bytes.windows(needle.len()).any(|w| w == needle) {
                    hits.push(p);
                }
            }
        }
    }
    hits
}

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

    let Some(a1) = w.add_with_secret(
        &[
            "--agent",
            "claude",
            "--kind",
            "api-key",
            "--label",
            "first key",
            "--base-url",
            &one.base_url(),
        ],
        &k1,
    ) else {
        return;
    };
    let a2 = w
        .add_with_secret(
            &[
                "--agent",
                "claude",
                "--kind",
                "api-key",
                "--label",
                "second key",
                "--base-url",
                &two.base_url(),
            ],
            &k2,
        )
        .unwrap_or_default();
    let ag = w
        .add_with_secret(
            &[
                "--agent",
                "claude",
                "--kind",
                "gateway",
                "--label",
                "gateway",
                "--base-url",
                &gateway.base_url(),
                "--model",
                "claude-sonnet-4-5",
            ],
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
    let sessions = w.run_json(&["sessions", "--json"]);
    let account_of = |key: &str| {
        sessions
            .as_array()
            .into_iter()
            .flatten()
            .find(|s| s["sessionKey"] == key)
            .map(|s| s["account"].clone())
            .unwrap_or_default()
    };
    assert_eq!(account_of(&keys[0]), Value::from(a1.clone()));

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
    assert!(v["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("reply from two")));
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
    let out = w.weft(&["run", "--session", &keys[0], "--account", "acct-nope", "x"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("unknown account `acct-nope`"));
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
    let out = w.weft(&["run", "--session", &keys[0], "--account", &codex_acct, "x"]);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert_eq!(out.status.code(), Some(2), "{stderr}");
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
    let out = w.weft_in(
        &[
            "accounts",
            "add",
            "--agent",
            "codex",
            "--kind",
            "endpoint",
            "--label",
            "bad",
            "--base-url",
            "::not-a-url",
            "--secret-stdin",
        ],
        Some("sk-never-kept"),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("not a URL"));
    let listed = w.run_json(&["accounts", "list", "--json"]);
    assert_eq!(listed.as_array().map(Vec::len), Some(5), "{listed}");
    assert_eq!(
        w.run_json(&["history", &keys[0], "--json"]),
        turns_before,
        "a refused switch changed the session"
    );
    let sessions = w.run_json(&["sessions", "--json"]);
    let now = sessions
        .as_array()
        .into_iter()
        .flatten()
        .find(|s| s["sessionKey"] == keys[0].as_str())
        .map(|s| s["account"].clone())
        .unwrap_or_default();
    assert_eq!(now, Value::from(a2.clone()), "the session's account moved");
    secrets.push("sk-never-kept".into());

    // The ambient account still works: the agent's own environment, passed through.
    let v = w.run_json(&["run", "--json", "--agent", "claude", "on my own login"]);
    assert!(v["snapshot"]["text"]
        .as_str()
        .is_some_and(|t| t.contains("ambient reply")));
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
    let listed = w.run_json(&["accounts", "list", "--json"]);
    let login_home = listed
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["id"] == login2.as_str())
        .and_then(|a| a["homeDir"].as_str())
        .map(PathBuf::from)
        .unwrap_or_default();
    // What `claude auth login` would leave there (the CLI's own file, in the account's
    // home; Weft never writes or copies one).
    let far = 4_102_444_800_000_i64;
    std::fs::write(
        login_home.join(".credentials.json"),
        format!(
            r#"{{"claudeAiOauth":{{"accessToken":"oauth-access-e2e","refreshToken":"oauth-refresh-e2e","expiresAt":{far},"scopes":["user:inference"],"subscriptionType":"max"}}}}"#
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        login_home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let v = w.run_json(&[
        "run",
        "--json",
        "--session",
        &keys[1],
        "--account",
        &login2,
        "now on the subscription",
    ]);
    assert!(
        v["snapshot"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("reply from the subscription")),
        "{v}"
    );
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
    for s in &secrets {
        let hits = files_containing(w.env.home.path(), s.as_bytes());
        assert!(hits.is_empty(), "a secret is in {hits:?}");
        assert!(!stored.contains(s.as_str()), "a secret is in the history");
        assert!(
            !w.captured.0.windows(s.len()).any(|x| x == s.as_bytes()),
            "a secret was printed"
        );
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
        w.vars
            .push(("WEFT_CODEX_BIN".into(), codex.display().to_string()));
        let server = ResponsesServer::start(
            weft_testkit::openai::Script::new()
                .default_reply(weft_testkit::openai::Turn::new().text("codex on its endpoint")),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let key = secret("codex");
        secrets.push(key.clone());
        let id = w
            .add_with_secret(
                &[
                    "--agent",
                    "codex",
                    "--kind",
                    "endpoint",
                    "--label",
                    "local server",
                    "--base-url",
                    &server.v1_url(),
                    "--protocol",
                    "openai-responses",
                ],
                &key,
            )
            .unwrap_or_default();
        let v = w.run_json(&[
            "run",
            "--json",
            "--agent",
            "codex",
            "--account",
            &id,
            "hello codex",
        ]);
        assert!(
            v["snapshot"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("codex on its endpoint")),
            "{v}"
        );
        only_credential(
            &server.recorder().requests(),
            ("authorization", &format!("Bearer {key}")),
        );
    }
    if let Some(gemini) = agent_bin("gemini") {
        w.vars
            .push(("WEFT_GEMINI_BIN".into(), gemini.display().to_string()));
        let server = GeminiServer::start(
            weft_testkit::gemini::Script::new()
                .default_reply(weft_testkit::gemini::Turn::new().text("gemini on its key")),
        )
        .await
        .unwrap_or_else(|e| panic!("{e}"));
        let key = secret("gemini");
        secrets.push(key.clone());
        let id = w
            .add_with_secret(
                &[
                    "--agent",
                    "gemini",
                    "--kind",
                    "api-key",
                    "--label",
                    "gemini key",
                    "--base-url",
                    &server.base_url(),
                    "--env",
                    "GEMINI_CLI_NO_RELAUNCH=true",
                ],
                &key,
            )
            .unwrap_or_default();
        let v = w.run_json(&[
            "run",
            "--json",
            "--agent",
            "gemini",
            "--account",
            &id,
            "hello gemini",
        ]);
        assert!(
            v["snapshot"]["text"]
                .as_str()
                .is_some_and(|t| t.contains("gemini on its key")),
            "{v}"
        );
        only_credential(&server.recorder().requests(), ("x-goog-api-key", &key));
    }
}

#[test]
fn accounts_login_runs_the_agents_own_login_in_the_accounts_home_with_a_cleared_environment() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let seen = bin.path().join("seen.txt");
    let script = bin.path().join("claude");
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\nprintf 'args: %s\\n' \"$*\" > '{}'\nenv >> '{}'\n",
            seen.display(),
            seen.display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    let out = env
        .cmd(&[
            "accounts", "add", "--agent", "claude", "--kind", "login", "--label", "max",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = env
        .cmd(&["accounts", "login", &id])
        .env("WEFT_CLAUDE_BIN", &script)
        .env("ANTHROPIC_API_KEY", "sk-ambient-must-not-reach-the-login")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let seen = std::fs::read_to_string(&seen).unwrap_or_default();
    assert!(seen.starts_with("args: auth login\n"), "{seen}");
    let home = env.home.path().join("homes/claude").join(&id);
    assert!(
        seen.lines()
            .any(|l| l == format!("CLAUDE_CONFIG_DIR={}", home.display())),
        "{seen}"
    );
    assert!(!seen.contains("sk-ambient"), "{seen}");
    // Only login accounts log in.
    let out = env
        .cmd(&[
            "accounts",
            "add",
            "--agent",
            "gemini",
            "--kind",
            "api-key",
            "--label",
            "k",
            "--secret-env",
            "WEFT_TEST_KEY",
        ])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let key_id = String::from_utf8_lossy(&out.stdout).trim().to_string();
    let out = env
        .cmd(&["accounts", "login", &key_id])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("only login accounts"));
}

/// `weft agents install` runs the system's npm into `$WEFT_HOME/agents` (here an npm
/// stand-in that records its arguments and lays out what npm would), and the drivers
/// then find the agent there before `PATH`.
#[test]
fn agents_install_puts_the_tested_version_in_weft_s_own_folder_where_the_drivers_find_it() {
    use std::os::unix::fs::PermissionsExt;
    let env = Env::new();
    let bin = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let args = bin.path().join("npm-args.txt");
    let npm = bin.path().join("npm");
    std::fs::write(
        &npm,
        format!(
            r#"#!/bin/sh
printf '%s\n' "$@" > '{args}'
prefix=""
while [ $# -gt 0 ]; do [ "$1" = --prefix ] && prefix="$2"; shift; done
mkdir -p "$prefix/node_modules/.bin"
printf '#!/bin/sh\necho "9.9.9-weft-test (Claude Code)"\n' > "$prefix/node_modules/.bin/claude"
chmod +x "$prefix/node_modules/.bin/claude"
"#,
            args = args.display()
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::set_permissions(&npm, std::fs::Permissions::from_mode(0o755))
        .unwrap_or_else(|e| panic!("{e}"));
    let path = format!("{}:/usr/bin:/bin", bin.path().display());
    let out = env
        .cmd(&["agents", "install", "claude"])
        .env("PATH", &path)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let installed = env.home.path().join("agents/node_modules/.bin/claude");
    assert_eq!(
        String::from_utf8_lossy(&out.stdout).trim(),
        installed.display().to_string()
    );
    let recorded = std::fs::read_to_string(&args).unwrap_or_default();
    let prefix = env.home.path().join("agents").display().to_string();
    assert!(
        recorded
            .lines()
            .collect::<Vec<_>>()
            .windows(2)
            .any(|w| w == ["--prefix", prefix.as_str()]),
        "{recorded}"
    );
    assert!(
        recorded
            .lines()
            .any(|l| l == "@anthropic-ai/claude-code@2.1.197"),
        "{recorded}"
    );
    let out = env
        .cmd(&["agents", "--json"])
        .env("PATH", &path)
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let agents: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
    let claude = agents
        .as_array()
        .into_iter()
        .flatten()
        .find(|a| a["id"] == "claude")
        .cloned()
        .unwrap_or_default();
    assert_eq!(claude["installed"], true, "{agents}");
    assert!(
        claude["version"]
            .as_str()
            .is_some_and(|v| v.contains("9.9.9-weft-test")),
        "{claude}"
    );
    // No npm: a clear error, nothing installed.
    let out = env
        .cmd(&["agents", "install", "codex"])
        .env("PATH", "/nonexistent")
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&out.stderr).contains("npm is not installed"));
    let out = env
        .cmd(&["agents", "install", "vim"])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
}
