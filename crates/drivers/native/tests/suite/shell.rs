//! The bash tool through the permission step (rules, classifier, sandbox, mode,
//! confirmation) and the chain's order when two steps would refuse (plan mode, the
//! context fuse, hooks, rules).

use std::time::Duration;

use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_protocol::{permission, CommandRisk, InteractionResponse};
use weft_testkit::sink::{self, TestSink};
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{anthropic, driver, write, Dirs};

/// A server whose model makes these bash calls (id, command), one a step, then says
/// "done"; and the environment pointing a turn at it in `mode`.
async fn bash_steps(
    steps: &[(&str, &str)],
    mode: &str,
) -> (AnthropicServer, Vec<(String, String)>) {
    let mut script = Script::new();
    for (id, command) in steps {
        script = script.turn(Turn::new().tool_use(id, "bash", json!({ "command": command })));
    }
    anthropic(script.default_reply(Turn::text_reply("done")), mode).await
}

async fn one_bash(command: &str, mode: &str) -> (AnthropicServer, Vec<(String, String)>) {
    bash_steps(&[("t1", command)], mode).await
}

/// The same bash call three times in a row, one per step (ids t1, t2, t3).
async fn thrice(command: &str, mode: &str) -> (AnthropicServer, Vec<(String, String)>) {
    bash_steps(&[("t1", command), ("t2", command), ("t3", command)], mode).await
}

/// What the model was told for t1, t2 and t3.
fn three_results(s: &AnthropicServer) -> Vec<String> {
    let reqs = s.messages_requests();
    ["t1", "t2", "t3"]
        .iter()
        .map(|id| {
            reqs.iter()
                .find_map(|r| r.last_tool_result(id))
                .unwrap_or_default()
        })
        .collect()
}

/// Dirs whose workspace has these permission rules.
fn with_rules(rules: &str) -> Dirs {
    Dirs::with_file(".weft/permissions.json", rules)
}

/// The result of the first tool call, as the model was told it.
fn first_result(s: &AnthropicServer) -> String {
    s.messages_requests()[1].last_tool_result("t1").unwrap()
}

fn answer(sink: &TestSink, value: &'static str) {
    sink.answer_with(move |_| Some(InteractionResponse::select(value)));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dangerous_command_asks_with_its_verdict_and_reasons() {
    let (s, env) = one_bash("rm -rf ~", "trusted").await;
    let dirs = Dirs::new();
    let sink = TestSink::new();
    answer(&sink, permission::DENY);
    let (r, _) = sink::run(&driver(), dirs.input(&env, "go", None), &sink).await;
    assert!(r.ok);
    let asked = sink.asked.lock().clone();
    assert_eq!(
        asked.len(),
        1,
        "trusted mode still asks for a dangerous command"
    );
    let verdict = asked[0].verdict.clone().unwrap_or_default();
    assert_eq!(verdict.verdict, CommandRisk::Dangerous, "{verdict:?}");
    assert_eq!(verdict.command, "rm -rf ~");
    assert!(
        verdict.reasons.iter().any(|r| r.contains("home folder")),
        "{verdict:?}"
    );
    let detail = asked[0].detail.clone().unwrap_or_default();
    assert!(
        !detail.contains("home folder"),
        "the reasons are not repeated: {detail}"
    );
    let choices: Vec<String> = asked[0].questions[0]
        .choices
        .iter()
        .map(|c| c.value.clone())
        .collect();
    // No "always allow" in a workspace not trusted: the rule would not count.
    assert_eq!(choices, ["allow", "allowSession", "deny"]);
    let result = first_result(&s);
    assert!(
        result.contains("refused by permission") && result.contains("denied"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_deny_rule_refuses_without_asking_and_an_allow_rule_runs_without_asking() {
    let (s, env) = one_bash("git -C . push --force origin main", "trusted").await;
    let dirs = with_rules(r#"{"deny": ["git push"]}"#);
    let sink = TestSink::new();
    let (r, _) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &sink).await;
    assert!(r.ok);
    assert!(sink.asked.lock().is_empty());
    let result = first_result(&s);
    assert!(
        result.contains("denied by the rule `git push`") && result.contains("permissions.json:1"),
        "{result}"
    );

    let (s, env) = one_bash("echo allowed > out.txt", "ask").await;
    let dirs = with_rules(r#"{"allow": ["echo"]}"#);
    let sink = TestSink::new();
    let (r, _) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &sink).await;
    assert!(r.ok);
    assert!(sink.asked.lock().is_empty(), "an allow rule answers");
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("out.txt")).unwrap(),
        "allowed\n"
    );
    let _ = s;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_bad_rule_is_named_with_its_line_and_the_file_s_other_rules_hold() {
    let (s, env) = one_bash("ls", "trusted").await;
    let dirs = Dirs::with_file(
        ".weft/permissions.json",
        "{\n  \"allow\": [\"ls | wc\"],\n  \"deny\": [\"ls\"]\n}",
    );
    let (r, _) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &TestSink::new()).await;
    assert!(r.ok);
    let result = first_result(&s);
    assert!(result.contains("denied by the rule `ls`"), "{result}");
    assert!(
        result.contains("permissions.json:2") && result.contains("more than one command"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn always_allow_writes_the_workspace_rule_and_the_next_call_runs() {
    let script = Script::new()
        .turn(Turn::new().tool_use("t1", "bash", json!({"command": "touch a.txt"})))
        .turn(Turn::new().tool_use("t2", "bash", json!({"command": "touch b.txt"})))
        .default_reply(Turn::text_reply("done"));
    let (_s, env) = anthropic(script, "ask").await;
    let dirs = Dirs::new();
    let sink = TestSink::new();
    answer(&sink, weft_native::shell::ALLOW_PREFIX);
    let (r, _) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &sink).await;
    assert!(r.ok);
    assert_eq!(
        sink.asked.lock().len(),
        1,
        "the second touch ran on the saved rule"
    );
    let rules = std::fs::read_to_string(dirs.work().join(".weft/permissions.json")).unwrap();
    assert!(rules.contains("\"touch\""), "{rules}");
    assert!(dirs.work().join("a.txt").exists() && dirs.work().join("b.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_refusing_steps_the_earlier_one_answers() {
    // PreToolUse hook (step 4) and a deny rule (step 5): the hook answers.
    let (s, env) = one_bash("rm -rf build", "trusted").await;
    let dirs = with_rules(r#"{"deny": ["rm"]}"#);
    write(
        &dirs.work(),
        ".weft/hooks.json",
        r#"{"PreToolUse": [{"matcher": "bash", "command": "echo hook says no >&2; exit 2"}]}"#,
    );
    let (r, snap) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &TestSink::new()).await;
    assert!(r.ok);
    let result = first_result(&s);
    assert_eq!(result, "refused by PreToolUse hooks: hook says no");
    assert!(snap.tool_calls[0]
        .result
        .clone()
        .unwrap_or_default()
        .contains("refused by PreToolUse hooks"));
    // Without the hook, the deny rule answers.
    std::fs::remove_file(dirs.work().join(".weft/hooks.json")).unwrap();
    let (s, env) = one_bash("rm -rf build", "trusted").await;
    let (_, _) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &TestSink::new()).await;
    let result = first_result(&s);
    assert!(
        result.starts_with("refused by permission: denied by the rule `rm`"),
        "{result}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_answers_before_the_hook_and_the_rules() {
    let (s, env) = one_bash("touch x", "trusted").await;
    let dirs = with_rules(r#"{"deny": ["touch"]}"#);
    write(
        &dirs.work(),
        ".weft/hooks.json",
        r#"{"PreToolUse": [{"matcher": "bash", "command": "exit 2"}]}"#,
    );
    let sink = TestSink::new();
    sink.answer_with(|_| Some(InteractionResponse::cancel()));
    let (r, _) = sink::run(&driver(), dirs.trusted_input(&env, "/plan go"), &sink).await;
    assert!(r.ok);
    let result = first_result(&s);
    assert!(result.starts_with("refused by plan mode:"), "{result}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn plan_mode_answers_before_the_context_fuse() {
    // Were the fuse first, it would see all three calls and refuse the third itself.
    let (s, env) = thrice("touch x", "trusted").await;
    let dirs = Dirs::new();
    let sink = TestSink::new();
    sink.answer_with(|_| Some(InteractionResponse::cancel()));
    let (r, _) = sink::run(&driver(), dirs.input(&env, "/plan go", None), &sink).await;
    assert!(r.ok);
    for result in three_results(&s) {
        assert!(result.starts_with("refused by plan mode:"), "{result}");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_context_fuse_answers_before_a_deny_rule_and_a_hook() {
    // A deny rule (step 5) refuses the first two; on the third the fuse (step 2) would
    // refuse too, and answers.
    let (s, env) = thrice("rm -rf build", "trusted").await;
    let dirs = with_rules(r#"{"deny": ["rm"]}"#);
    let (r, snap) = sink::run(&driver(), dirs.input(&env, "go", None), &TestSink::new()).await;
    assert!(r.ok);
    let results = three_results(&s);
    for result in &results[..2] {
        assert!(
            result.starts_with("refused by permission: denied by the rule `rm`"),
            "{result}"
        );
    }
    assert!(
        results[2].starts_with("refused by context fuse:"),
        "{}",
        results[2]
    );
    let third = snap.tool_calls.iter().find(|c| c.id == "t3").unwrap();
    assert!(third
        .result
        .clone()
        .unwrap_or_default()
        .starts_with("refused by context fuse:"));

    // A PreToolUse hook (step 4) likewise.
    write(
        &dirs.work(),
        ".weft/hooks.json",
        r#"{"PreToolUse": [{"matcher": "bash", "command": "echo hook says no >&2; exit 2"}]}"#,
    );
    let (s, env) = thrice("rm -rf build", "trusted").await;
    let (r, _) = sink::run(&driver(), dirs.trusted_input(&env, "go"), &TestSink::new()).await;
    assert!(r.ok);
    let results = three_results(&s);
    assert_eq!(
        results[..2],
        ["refused by PreToolUse hooks: hook says no"; 2]
    );
    assert!(
        results[2].starts_with("refused by context fuse:"),
        "{}",
        results[2]
    );
}

fn sandbox_works() -> bool {
    let p = weft_sandbox::probe();
    if p.mechanism == weft_sandbox::Mechanism::Unavailable {
        eprintln!("SKIP: no sandbox here: {}", p.details);
        return false;
    }
    true
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bash_runs_in_the_sandbox() {
    if !sandbox_works() {
        return;
    }
    // Not under the temp folder, which the sandbox leaves writable.
    let outside = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap();
    let target = outside.path().join("escaped.txt");
    let host_tmp = std::env::temp_dir().join(format!("weft-native-host-{}", std::process::id()));
    let cmd = format!(
        "echo in > inside.txt; echo out > '{}'; echo x > .git/HEAD; echo s > \"$TMPDIR/scratch.txt\"; echo h > '{}'",
        target.display(),
        host_tmp.display()
    );
    let (s, env) = one_bash(&cmd, "trusted").await;
    let dirs = Dirs::with_file(".git/HEAD", "ref: refs/heads/main\n");
    // The sandbox is under test, not the verdict: a target dir under the home (CI keeps
    // it in ~/.cache) makes the write outside dangerous, which asks even when trusted.
    let sink = TestSink::new();
    answer(&sink, permission::ALLOW);
    let (r, _) = sink::run(&driver(), dirs.input(&env, "go", None), &sink).await;
    assert!(r.ok);
    let result = first_result(&s);
    assert!(dirs.work().join("inside.txt").exists(), "{result}");
    assert!(
        !target.exists(),
        "a write outside the workspace got through: {result}"
    );
    if weft_sandbox::probe().mechanism == weft_sandbox::Mechanism::Bwrap {
        assert_eq!(
            std::fs::read_to_string(dirs.work().join(".git/HEAD")).unwrap(),
            "ref: refs/heads/main\n"
        );
    }
    // Its temp space is the session's private folder, not the system /tmp.
    let host_written = host_tmp.exists();
    let _ = std::fs::remove_file(&host_tmp);
    assert!(!host_written, "the system /tmp is writable: {result}");
    let private: Vec<_> = std::fs::read_dir(dirs.state.path().join("sandbox-tmp"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    assert_eq!(private.len(), 1, "{private:?}");
    assert!(private[0].join("scratch.txt").exists(), "{result}");
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&private[0]).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o700);
}

fn marked_alive(marker: &str) -> bool {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .any(|e| {
            std::fs::read(e.path().join("cmdline"))
                .map(|c| {
                    String::from_utf8_lossy(&c)
                        .replace('\0', " ")
                        .contains(marker)
                })
                .unwrap_or(false)
        })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn stop_kills_what_a_sandboxed_command_started() {
    if !sandbox_works() {
        return;
    }
    let marker = format!("{}.{}", 300 + std::process::id() % 100, std::process::id());
    let (_s, env) = one_bash(
        &format!("sleep {marker} & echo started > started; wait"),
        "trusted",
    )
    .await;
    let dirs = Dirs::new();
    let input = dirs.input(&env, "go", None);
    let sink = TestSink::new();
    let cancel = CancellationToken::new();
    let run = {
        let (sink, cancel) = (sink.clone(), cancel.clone());
        tokio::spawn(async move { sink::run_with(&driver(), input, &sink, cancel).await })
    };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(30);
    while !dirs.work().join("started").exists() {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the command never started"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(marked_alive(&format!("sleep {marker}")));
    cancel.cancel();
    let _ = run.await.unwrap();
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while marked_alive(&format!("sleep {marker}")) {
        assert!(
            tokio::time::Instant::now() < deadline,
            "the sandboxed sleep survived the stop"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Headless `weft run --yes`: an unknown command runs only when a rule names it (a
/// workspace's rule once the folder is trusted), a dangerous one never, rule or not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn headless_yes_runs_an_unknown_command_only_by_rule_and_a_dangerous_one_never() {
    let cli = super::cli::Cli::new();
    let dirs = &cli.dirs;
    let (server, env) = bash_steps(
        &[
            ("t1", "touch made.txt"),
            ("t2", "git push --force origin main"),
        ],
        "ask",
    )
    .await;
    let (code, out, err) = cli.run(&env, &["--agent", "native", "--yes", "go"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(
        !dirs.work().join("made.txt").exists(),
        "--yes ran an unknown command no rule names: {err}"
    );
    assert!(err.contains("judges it unknown"), "{err}");
    let pushed = server.messages_requests()[2]
        .last_tool_result("t2")
        .unwrap();
    assert!(pushed.contains("denied"), "{pushed}");
    assert!(err.contains("judges it dangerous"), "{err}");

    // A trusted workspace's rules: the unknown line they name runs; the dangerous one
    // they name still does not (an allow rule never covers a dangerous line).
    let (server, env) = bash_steps(
        &[
            ("t3", "touch made.txt"),
            ("t4", "git push --force origin main"),
        ],
        "ask",
    )
    .await;
    write(
        &dirs.work(),
        ".weft/permissions.json",
        r#"{"allow": ["touch", "git push"]}"#,
    );
    let trusted = std::process::Command::new(&cli.bin)
        .args(["trust", "--yes"])
        .env("WEFT_HOME", &cli.home)
        .current_dir(dirs.work())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert!(trusted.status.success(), "{trusted:?}");
    let (code, out, err) = cli.run(&env, &["--agent", "native", "--yes", "go"]).await;
    assert_eq!(code, 0, "{out}\n{err}");
    assert!(dirs.work().join("made.txt").exists(), "{err}");
    let pushed = server.messages_requests()[2]
        .last_tool_result("t4")
        .unwrap();
    assert!(pushed.contains("did not run"), "{pushed}");
    assert!(err.contains("judges it dangerous"), "{err}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_sandbox_started_ahead_is_not_used_after_git_or_weft_appears() {
    if weft_sandbox::probe().mechanism != weft_sandbox::Mechanism::Bwrap {
        eprintln!("SKIP: sandboxes are started ahead only for bubblewrap");
        return;
    }
    // Each call leaves a sandbox waiting for the next. A command cannot make `.weft`
    // (an empty read-only folder is mounted where it is missing), and the one the next
    // call runs in keeps it read-only too.
    let (s, env) = bash_steps(
        &[
            ("t1", "mkdir .weft || echo one > a.txt"),
            ("t2", "echo bad > .weft/x; echo two > b.txt"),
            ("t3", "echo three > c.txt; echo $TMPDIR"),
        ],
        "trusted",
    )
    .await;
    let dirs = Dirs::new();
    let sink = TestSink::new();
    answer(&sink, permission::ALLOW);
    let (r, _) = sink::run(&driver(), dirs.input(&env, "go", None), &sink).await;
    assert!(r.ok);
    let reqs = s.messages_requests();
    let first = reqs[1].last_tool_result("t1").unwrap_or_default();
    assert!(dirs.work().join("a.txt").exists(), "{first}");
    let second = reqs[2].last_tool_result("t2").unwrap_or_default();
    assert!(dirs.work().join("b.txt").exists(), "{second}");
    assert!(
        !dirs.work().join(".weft/x").exists(),
        ".weft was writable in a sandbox made before it existed: {second}"
    );
    // The third call (a spare made for the same workspace state) runs as a cold one would.
    let third = reqs[3].last_tool_result("t3").unwrap_or_default();
    assert!(dirs.work().join("c.txt").exists(), "{third}");
    assert!(third.contains("/tmp"), "{third}");
}
