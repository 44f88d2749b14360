//! `weft check-command` and `weft sandbox`: the classifier and the sandbox as the
//! native agent's bash tool uses them.

use super::support::Env;

#[test]
fn check_command_prints_verdict_reasons_and_commands() {
    let env = Env::new();
    let (code, v, _) = env.json(&[
        "check-command",
        "--json",
        "--",
        "echo cm0gLXJmIC8K | base64 -d | sh",
    ]);
    assert_eq!(code, 0);
    assert_eq!(v["verdict"], "dangerous", "{v}");
    assert!(
        v["reasons"][0]
            .as_str()
            .is_some_and(|r| r.contains("piped into sh")),
        "{v}"
    );
    assert_eq!(
        v["commands"][1]["argv"],
        serde_json::json!(["base64", "-d"])
    );
    assert_eq!(v["commands"][1]["verdict"], "safe");
    let (_, v, _) = env.json(&["check-command", "--json", "--", "echo rm -rf /"]);
    assert_eq!(v["verdict"], "safe", "{v}");
    let w = env.workdir();
    let (_, v, _) = env.json(&["check-command", "--workdir", &w, "--json", "--", "rm -rf ."]);
    assert_eq!(v["verdict"], "dangerous", "{v}");
    let (_, v, _) = env.json(&[
        "check-command",
        "--workdir",
        &w,
        "--json",
        "--",
        "rm -rf build",
    ]);
    assert_eq!(v["verdict"], "unknown", "{v}");
    let out = env.weft(&["check-command", "--", "r''m -rf /"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && text.starts_with("dangerous") && text.contains("disguise"),
        "{text}"
    );
}

#[test]
fn sandbox_probe_and_run() {
    let env = Env::new();
    let (code, v, _) = env.json(&["sandbox", "--probe", "--json"]);
    assert_eq!(code, 0);
    let mech = v["mechanism"].as_str().unwrap_or_default().to_string();
    assert!(
        matches!(mech.as_str(), "bwrap" | "landlock" | "unavailable"),
        "{v}"
    );
    if mech == "unavailable" {
        eprintln!("SKIP weft sandbox run: {}", v["details"]);
        return;
    }
    let w = env.workdir();
    let out = env.weft(&[
        "sandbox",
        "--workdir",
        &w,
        "--",
        "echo inside > made.txt && cat made.txt; exit 7",
    ]);
    assert_eq!(out.status.code(), Some(7), "the command's own exit code");
    assert_eq!(String::from_utf8_lossy(&out.stdout), "inside\n");
    let out = env.weft(&[
        "sandbox",
        "--workdir",
        &w,
        "--",
        "echo x > /etc/weft-cli-sandbox-test",
    ]);
    assert_ne!(out.status.code(), Some(0));
    assert!(String::from_utf8_lossy(&out.stderr).contains("/etc/weft-cli-sandbox-test"));
}

/// `path` as `to`: a hard link (same file system as the build), else a copy.
fn place(path: &std::path::Path, to: &std::path::Path) {
    if std::fs::hard_link(path, to).is_err() {
        std::fs::copy(path, to).unwrap_or_else(|e| panic!("copy {}: {e}", path.display()));
    }
}

fn probe_from(weft: &std::path::Path, cwd: &std::path::Path, path: &str) -> serde_json::Value {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let out = std::process::Command::new(weft)
        .args(["sandbox", "--probe", "--json"])
        .env("WEFT_HOME", home.path())
        .env("WEFT_SANDBOX", "landlock")
        .env_remove("WEFT_SANDBOX_HELPER")
        .env("PATH", path)
        .current_dir(cwd)
        .output()
        .unwrap_or_else(|e| panic!("run {}: {e}", weft.display()));
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "not JSON ({e}): {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    })
}

#[test]
fn the_landlock_helper_is_installed_beside_weft_and_found_only_there() {
    let weft = std::path::Path::new(env!("CARGO_BIN_EXE_weft"));
    let helper = std::path::Path::new(env!("CARGO_BIN_EXE_weft-sandbox-exec"));
    assert_eq!(
        weft.parent(),
        helper.parent(),
        "cargo build -p weft-cli puts weft-sandbox-exec beside weft"
    );
    let root = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR")).unwrap_or_else(|e| panic!("{e}"));
    // An installed layout (/usr/bin/weft and /usr/bin/weft-sandbox-exec, as the deb has it).
    let bin = root.path().join("usr/bin");
    std::fs::create_dir_all(&bin).unwrap_or_else(|e| panic!("{e}"));
    place(weft, &bin.join("weft"));
    place(helper, &bin.join("weft-sandbox-exec"));
    let cwd = root.path().join("project");
    std::fs::create_dir_all(cwd.join("bin")).unwrap_or_else(|e| panic!("{e}"));
    let v = probe_from(&bin.join("weft"), &cwd, "/usr/bin:/bin");
    let details = v["details"].as_str().unwrap_or_default();
    if v["mechanism"] == "unavailable" {
        // Landlock itself may be missing from this kernel; the helper was still found.
        assert!(!details.contains("not installed"), "{v}");
        eprintln!("SKIP landlock through the installed helper: {details}");
    } else {
        assert_eq!(v["mechanism"], "landlock", "{v}");
        assert!(
            details.contains(&bin.join("weft-sandbox-exec").display().to_string()),
            "{v}"
        );
    }
    // `weft` alone: a helper in the current folder, or one a relative PATH entry
    // names, is never used (it could confine nothing).
    let lone = root.path().join("opt/weft");
    std::fs::create_dir_all(&lone).unwrap_or_else(|e| panic!("{e}"));
    place(weft, &lone.join("weft"));
    let marker = root.path().join("fake-helper-ran");
    let fake = format!("#!/bin/sh\ntouch '{}'\nexit 0\n", marker.display());
    for p in [
        cwd.join("weft-sandbox-exec"),
        cwd.join("bin/weft-sandbox-exec"),
    ] {
        std::fs::write(&p, &fake).unwrap_or_else(|e| panic!("{e}"));
        let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
        std::fs::set_permissions(&p, mode).unwrap_or_else(|e| panic!("{e}"));
    }
    let v = probe_from(&lone.join("weft"), &cwd, "bin:.:/usr/bin:/bin");
    assert_eq!(v["mechanism"], "unavailable", "{v}");
    assert!(
        v["details"]
            .as_str()
            .is_some_and(|d| d.contains("not installed beside")),
        "{v}"
    );
    assert!(!marker.exists(), "a helper from the current folder ran");
}

/// The sandbox the daemon's own agent confines its commands in is the one `weft sandbox
/// --probe` finds, probed at the daemon's start and reported by `daemon status` (the
/// app's Agents view shows it from there).
#[test]
fn the_daemon_reports_the_sandbox_its_agent_runs_commands_in() {
    let env = Env::new();
    let (_, probe, _) = env.json(&["sandbox", "--probe", "--json"]);
    assert_eq!(env.weft(&["run", "hello"]).status.code(), Some(0));
    let status = super::support::wait_for("the daemon's sandbox probe", 30, || {
        let (code, status, _) = env.json(&["daemon", "status", "--json"]);
        (code == 0 && !status["sandbox"].is_null()).then_some(status)
    });
    assert_eq!(
        status["sandbox"]["mechanism"], probe["mechanism"],
        "{status}"
    );
    assert!(
        !status["sandbox"]["details"]
            .as_str()
            .unwrap_or_default()
            .is_empty(),
        "{status}"
    );
    let text = String::from_utf8_lossy(&env.weft(&["daemon", "status"]).stdout).to_string();
    let mechanism = probe["mechanism"].as_str().unwrap_or_default();
    assert!(
        text.contains(&format!("sandbox    {mechanism}: ")),
        "{text}"
    );
}

/// `weft check-command` on lines nested thousands of levels deep (10 KB of `$(`
/// aborted it on the main thread's stack): an answer, never a crash.
#[test]
fn check_command_answers_for_thousands_of_nested_substitutions() {
    let env = Env::new();
    for n in [5_000, 20_000] {
        let line = format!("echo {}ls{}", "$(".repeat(n), ")".repeat(n));
        let (code, v, stderr) = env.json(&["check-command", "--json", "--", &line]);
        assert_eq!(code, 0, "{n}: {stderr}");
        // Each inner program is itself a substitution: what runs is hidden.
        assert_eq!(v["verdict"], "dangerous", "{n}");
        // `: $(: $(…))`: harmless all the way down, 5 bytes a level (an argument is
        // at most 128 KiB).
        let harmless = format!("echo {}hi{}", "$(: ".repeat(n), ")".repeat(n));
        let (code, v, stderr) = env.json(&["check-command", "--json", "--", &harmless]);
        assert_eq!(code, 0, "{n}: {stderr}");
        assert_eq!(v["verdict"], "unknown", "{n}");
        assert!(
            v["reasons"].to_string().contains("nests deeper than"),
            "{n}: {}",
            v["reasons"]
        );
    }
}

/// `weft run --yes` (no terminal) lets the agent's shell commands run only when Weft
/// judged them safe, or a rule names them (security-3 M10): `python3 -c …`, `strace …`
/// (unknown) and `rm -rf ~root/…` (dangerous: bash reads `~root` as /root) are refused
/// with how to allow them, and did not run. Weft's own agent asks (`ask` mode) against
/// a scripted model that calls `bash` once per prompt.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn run_yes_runs_only_safe_or_rule_allowed_commands() {
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};
    let cases: [(&str, &str); 5] = [
        ("case-safe", "ls"),
        (
            "case-python",
            "python3 -c \"open('ran-python', 'w').write('x')\"",
        ),
        ("case-strace", "strace -o /dev/null touch ran-strace"),
        ("case-home", "rm -rf ~root/weft-yes-test-absent"),
        ("case-rule", "touch ran-by-rule"),
    ];
    let mut script = Script::new()
        .rule(when::no_tools(), Turn::text_reply("a title"))
        .default_reply(Turn::text_reply("done"));
    for (i, (tag, command)) in cases.iter().enumerate() {
        script = script.rule(
            when::user_text_contains(tag),
            Turn::new().tool_use(
                &format!("call-{i}"),
                "bash",
                serde_json::json!({ "command": command }),
            ),
        );
    }
    let server = AnthropicServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    // The user's own (global) rule: it names the one unknown line that may run.
    std::fs::write(
        env.home.path().join("permissions.json"),
        r#"{"allow": ["touch ran-by-rule"]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let work = env.work.path().to_path_buf();
    let base = server.base_url();
    let run = |tag: &str| {
        let mut cmd = env.cmd(&["run", "--agent", "native", "--yes", tag]);
        cmd.env("WEFT_NATIVE_PROTOCOL", "anthropic-messages")
            .env("WEFT_NATIVE_BASE_URL", &base)
            .env("WEFT_NATIVE_API_KEY", "sk-test")
            .env("WEFT_NATIVE_MODEL", "scripted-model")
            .env("WEFT_NATIVE_PERMISSION", "ask");
        let out = cmd.output().unwrap_or_else(|e| panic!("run weft: {e}"));
        env.keep_output(&out);
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stderr).into_owned(),
        )
    };
    let runs =
        tokio::task::block_in_place(|| cases.iter().map(|(tag, _)| run(tag)).collect::<Vec<_>>());
    let stderr = |i: usize| runs[i].1.as_str();
    for (i, (code, err)) in runs.iter().enumerate() {
        assert_eq!(*code, Some(0), "{}: {err}", cases[i].0);
    }
    assert!(stderr(0).contains("allowed \"Run `ls`?\""), "{}", stderr(0));
    for (i, verdict) in [(1, "unknown"), (2, "unknown"), (3, "dangerous")] {
        assert!(
            stderr(i).contains("refused") && stderr(i).contains(&format!("judges it {verdict}")),
            "{}: {}",
            cases[i].0,
            stderr(i)
        );
    }
    assert!(stderr(1).contains("permissions.json"), "{}", stderr(1));
    assert!(
        !work.join("ran-python").exists(),
        "python3 -c ran under --yes"
    );
    assert!(
        !work.join("ran-strace").exists(),
        "strace … ran under --yes"
    );
    // The rule answered in the agent itself: no question, and it ran.
    assert!(!stderr(4).contains("refused"), "{}", stderr(4));
    assert!(work.join("ran-by-rule").exists(), "{}", stderr(4));
    // What the model was told for `ls`: its real output.
    let reqs = server.messages_requests();
    let listed = reqs
        .iter()
        .find_map(|r| r.last_tool_result("call-0"))
        .unwrap_or_default();
    assert!(listed.contains("README.md"), "{listed}");
}
