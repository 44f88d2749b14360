//! The warm pool with the real claude against a scripted server: the process started
//! ahead (for a new session, and for a session whose process was closed when idle) is
//! the one the next prompt's turn runs on, and the pool says what it holds.

use serde_json::Value;
use weft_testkit::anthropic::{Script, Turn};
use weft_testkit::AnthropicServer;

use super::support::{agent_bin, claude_env, claude_home, pid_alive, wait_for, Env};

/// The arguments `pid` was started with.
fn argv(pid: u32) -> Vec<String> {
    std::fs::read(format!("/proc/{pid}/cmdline"))
        .unwrap_or_default()
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect()
}

/// The value after `flag` in `pid`'s arguments.
fn arg_after(pid: u32, flag: &str) -> Option<String> {
    let args = argv(pid);
    let i = args.iter().position(|a| a == flag)?;
    args.get(i + 1).cloned()
}

fn pid_of(v: &Value) -> u32 {
    v["pid"]
        .as_u64()
        .and_then(|p| u32::try_from(p).ok())
        .unwrap_or_else(|| panic!("no process was started ahead: {v}"))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_process_started_ahead_is_the_one_the_next_turn_runs_on() {
    let Some(claude) = agent_bin("claude", "WEFT_CLAUDE_BIN") else {
        return;
    };
    let server = AnthropicServer::start(Script::new().default_reply(Turn::text_reply("warm-ok")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let home = claude_home();
    let json = |args: &[&str]| -> Value {
        let mut cmd = env.cmd(args);
        claude_env(&mut cmd, home.path(), &claude, &server.base_url());
        // Idle processes close after 2 s, so the session's second prompt needs a resume.
        cmd.env("WEFT_AGENT_IDLE_SECS", "2")
            .env("WEFT_WARM_POOL_SECS", "60")
            // As a shell sets it, different for each command: a process started ahead
            // by one command still serves the next.
            .env("_", format!("/usr/bin/{}", args[0]));
        let out = cmd.output().unwrap_or_else(|e| panic!("{e}"));
        env.keep_output(&out);
        assert_eq!(out.status.code(), Some(0), "weft {args:?}: {out:?}");
        serde_json::from_slice(&out.stdout)
            .unwrap_or_else(|e| panic!("weft {args:?} printed no JSON ({e}): {out:?}"))
    };
    let warm_list =
        |json: &dyn Fn(&[&str]) -> Value| json(&["daemon", "status", "--json"])["warm"].clone();

    // A folder whose own settings the user has not trusted: they would take effect.
    super::support::write(
        &env.work.path().join(".claude/settings.json"),
        r#"{"env":{"WEFT_WARM_TEST":"1"}}"#,
    );
    let untrusted = json(&["agents", "warm", "claude", "--json"]);
    assert!(untrusted["pid"].is_null(), "{untrusted}");
    assert!(
        untrusted["reason"]
            .as_str()
            .unwrap_or_default()
            .contains("not trusted"),
        "{untrusted}"
    );

    let mut trust = env.cmd(&["trust", "--yes"]);
    claude_env(&mut trust, home.path(), &claude, &server.base_url());
    let out = trust.output().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let warm = json(&["agents", "warm", "claude", "--json"]);
    let pid = pid_of(&warm);
    let listed = warm_list(&json);
    assert_eq!(listed.as_array().map(Vec::len), Some(1), "{listed}");
    assert_eq!(listed[0]["agent"], "claude", "{listed}");
    assert!(listed[0]["rssBytes"].as_u64().unwrap_or(0) > 0, "{listed}");
    let reserved = listed[0]["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let started_id = arg_after(pid, "--session-id").unwrap_or_else(|| panic!("{:?}", argv(pid)));

    // The new session takes the reserved key, and its turn runs on that very process.
    let ran = json(&["run", "--agent", "claude", "--json", "first question"]);
    assert_eq!(ran["sessionKey"], reserved.as_str(), "{ran}");
    assert!(ran.to_string().contains("warm-ok"), "{ran}");
    assert_eq!(ran["snapshot"]["sessionId"], started_id.as_str(), "{ran}");
    assert!(warm_list(&json).as_array().is_some_and(Vec::is_empty));

    // Closed when idle; opening the session starts it again ahead, resuming it.
    wait_for("the idle close", 30, || (!pid_alive(pid)).then_some(()));
    // Until the close has finished, the session is busy closing and nothing starts.
    let again = wait_for("a warm start after the idle close", 30, || {
        json(&["agents", "warm", "--session", &reserved, "--json"])["pid"]
            .as_u64()
            .and_then(|p| u32::try_from(p).ok())
    });
    assert_eq!(
        arg_after(again, "--resume").as_deref(),
        Some(started_id.as_str())
    );
    let second = json(&["run", "--session", &reserved, "--json", "second question"]);
    assert!(second.to_string().contains("warm-ok"), "{second}");
    assert!(pid_alive(again), "the turn ran on another process");
    assert!(warm_list(&json).as_array().is_some_and(Vec::is_empty));
}
