//! Accounts end to end: `weft accounts add` with secrets in the real OS secret store
//! (Secret Service; CI runs the suite under `dbus-run-session` with an unlocked GNOME
//! Keyring), the real claude, codex and gemini against scripted servers that record
//! each request's credentials, and a search of everything Weft wrote and printed for
//! the secrets' bytes.
//!
//! This file holds what the tests share (a `World` of agent homes and the client's
//! environment); the tests are in the files beside it.

mod app_terminals;
mod inject;
mod kinds;
mod limits;
mod login;
mod switch;

use std::io::Write as _;
use std::path::PathBuf;
use std::process::{Output, Stdio};

use serde_json::Value;
use weft_testkit::RecordedRequest;

use super::support::{assert_reply, claude_home, find, ok_stdout, write, Env, GEMINI_KEY_SETTINGS};

pub(super) fn agent_bin(name: &str) -> Option<PathBuf> {
    super::support::agent_bin(name, &format!("WEFT_{}_BIN", name.to_uppercase()))
}

/// Everything the commands of one test printed, to search for secrets at the end.
#[derive(Default)]
pub(super) struct Captured(pub(super) Vec<u8>);

impl Captured {
    pub(super) fn keep(&mut self, out: &Output) {
        self.0.extend_from_slice(&out.stdout);
        self.0.extend_from_slice(&out.stderr);
    }
}

/// A home for the agents (onboarding done, Gemini set to key auth) and the client
/// environment every `weft` command of the test runs with: an ambient credential and
/// endpoint for each agent, which a chosen account must never see.
pub(super) struct World {
    pub(super) env: Env,
    pub(super) agent_home: tempfile::TempDir,
    pub(super) codex_home: PathBuf,
    pub(super) vars: Vec<(String, String)>,
    pub(super) captured: Captured,
}

impl World {
    pub(super) fn new(ambient: &str) -> World {
        let env = Env::new();
        let agent_home = claude_home();
        write(
            &agent_home.path().join(".gemini/settings.json"),
            GEMINI_KEY_SETTINGS,
        );
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

    pub(super) fn weft_in(&mut self, args: &[&str], stdin: Option<&str>) -> Output {
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
        self.env.keep_output(&out);
        out
    }

    pub(super) fn weft(&mut self, args: &[&str]) -> Output {
        self.weft_in(args, None)
    }

    pub(super) fn ok(&mut self, args: &[&str]) -> String {
        ok_stdout(&self.weft(args))
    }

    /// `weft accounts add ARGS --secret-stdin` fed `secret`; its id, or `None` when no
    /// secret service runs here (a skip, except in CI).
    pub(super) fn add_with_secret(&mut self, args: &[&str], secret: &str) -> Option<String> {
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
        self.env.watch_secret(secret);
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

    /// `weft accounts add --agent AGENT --kind KIND --label LABEL --base-url URL MORE…`
    /// fed `secret`, as [`World::add_with_secret`].
    pub(super) fn add_account(
        &mut self,
        [agent, kind, label, base_url]: [&str; 4],
        more: &[&str],
        secret: &str,
    ) -> Option<String> {
        let mut args = vec![
            "--agent",
            agent,
            "--kind",
            kind,
            "--label",
            label,
            "--base-url",
            base_url,
        ];
        args.extend_from_slice(more);
        self.add_with_secret(&args, secret)
    }

    /// `weft ARGS` fed `stdin` must be refused as bad input (exit 2); what it said.
    pub(super) fn refused(&mut self, args: &[&str], stdin: Option<&str>) -> String {
        let out = self.weft_in(args, stdin);
        let said = String::from_utf8_lossy(&out.stderr).into_owned();
        assert_eq!(out.status.code(), Some(2), "weft {args:?}: {said}");
        said
    }

    /// `weft accounts add ARGS --secret-stdin` fed `secret` must be refused; what it said.
    pub(super) fn refused_add(&mut self, args: &[&str], secret: &str) -> String {
        let mut all = vec!["accounts", "add"];
        all.extend_from_slice(args);
        all.push("--secret-stdin");
        self.refused(&all, Some(secret))
    }

    /// `weft run --json --agent AGENT --account ID PROMPT`, whose reply must hold `want`.
    pub(super) fn run_on(&mut self, agent: &str, id: &str, prompt: &str, want: &str) -> Value {
        let v = self.run_json(&["run", "--json", "--agent", agent, "--account", id, prompt]);
        assert_reply(&v, want);
        v
    }

    /// `weft wait KEY --json` (whatever its exit code): the last turn, whose text must
    /// hold `want`.
    pub(super) fn wait_reply(&mut self, key: &str, want: &str) -> Value {
        let out = self.weft(&["wait", key, "--json"]);
        let last: Value = serde_json::from_slice(&out.stdout).unwrap_or_default();
        assert!(
            last["text"].as_str().is_some_and(|t| t.contains(want)),
            "{last} / {}",
            String::from_utf8_lossy(&out.stderr)
        );
        last
    }

    /// The account session `key` is on, as `weft sessions` lists it (null if none).
    pub(super) fn account_of(&mut self, key: &str) -> Value {
        let sessions = self.run_json(&["sessions", "--json"]);
        find(&sessions, key)
            .map(|s| s["account"].clone())
            .unwrap_or_default()
    }

    /// Account `id` as `weft accounts list` shows it (null if not listed).
    pub(super) fn account(&mut self, id: &str) -> Value {
        let listed = self.run_json(&["accounts", "list", "--json"]);
        listed
            .as_array()
            .and_then(|a| a.iter().find(|x| x["id"] == id))
            .cloned()
            .unwrap_or_default()
    }

    pub(super) fn run_json(&mut self, args: &[&str]) -> Value {
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

pub(super) fn secret(tag: &str) -> String {
    format!("sk-{tag}-{}", uuid_like())
}

pub(super) fn uuid_like() -> String {
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or_default();
    format!("{:x}{:x}", t, std::process::id())
}

/// Every request to a model route carries `want` (header, value), and no request
/// carries any other credential header.
pub(super) fn only_credential(requests: &[RecordedRequest], want: (&str, &str)) {
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
