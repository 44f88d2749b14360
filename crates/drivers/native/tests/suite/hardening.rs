//! What the native agent's own tools do outside the sandbox, against a workspace a
//! command (or a cloned repository) may have rigged: no credential in what they start
//! (M1), no write through a link out of the workspace (M2), no program run by the
//! repository's git configuration.

use std::path::Path;

use serde_json::json;
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{driver, run_turn, write, Dirs, ToolBench};

/// A key long enough to be matched by value, and unlike any other string here.
const KEY: &str = "sk-native-test-SECRET-4f1c9b";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn no_command_hook_or_check_sees_the_model_key() {
    let script = Script::new()
        .turn(Turn::new().tool_use(
            "p",
            "bash",
            json!({"command": "printenv WEFT_NATIVE_API_KEY; printenv MY_KEY_COPY; printenv GH_TOKEN; env | grep -c sk-native-test; echo end-of-env"}),
        ))
        .turn(Turn::new().tool_use("w", "write", json!({"path": "a.txt", "content": "x"})))
        .default_reply(Turn::text_reply("done"));
    let server = AnthropicServer::start(script).await.unwrap();
    let env: Vec<(String, String)> = [
        ("WEFT_NATIVE_PROTOCOL", "anthropic-messages"),
        ("WEFT_NATIVE_BASE_URL", server.base_url().as_str()),
        ("WEFT_NATIVE_API_KEY", KEY),
        ("WEFT_NATIVE_MODEL", "scripted-model"),
        ("WEFT_NATIVE_PERMISSION", "auto"),
        ("MY_KEY_COPY", KEY),
        ("GH_TOKEN", "ghp-weft-test-token"),
        ("WEFT_TEST_TURN_VAR", "from-the-turn"),
        ("PATH", "/usr/local/bin:/usr/bin:/bin"),
    ]
    .iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let dirs = Dirs::with_file(
        ".weft/hooks.json",
        r#"{"PreToolUse": [{"command": "env >> hook-env.txt"}]}"#,
    );
    write(
        &dirs.work(),
        ".weft/native.toml",
        "check = \"env > check-env.txt\"\n",
    );
    let (r, snap, _) = run_turn(&driver(), dirs.trusted_input(&env, "look")).await;
    assert!(r.ok, "{r:?}");
    let reqs = server.messages_requests();
    let printed = reqs[1].last_tool_result("p").unwrap();
    assert!(printed.contains("end-of-env"), "{printed}");
    assert!(
        !printed.contains(KEY) && !printed.contains("ghp-weft-test-token"),
        "{printed}"
    );
    assert!(
        printed.lines().any(|l| l.trim() == "0"),
        "the key is under another name: {printed}"
    );
    for file in ["hook-env.txt", "check-env.txt"] {
        let seen = std::fs::read_to_string(dirs.work().join(file)).unwrap();
        // The turn's environment (scrubbed), not the daemon's own.
        assert!(
            seen.contains("WEFT_TEST_TURN_VAR=from-the-turn"),
            "{file} did not run with the turn's environment: {seen}"
        );
        assert!(
            !seen.contains(KEY) && !seen.contains("GH_TOKEN"),
            "{file}: {seen}"
        );
    }
    // Never to the model, the store or the conversation file.
    for req in &reqs {
        assert!(!req.body.to_string().contains(KEY), "sent to the model");
    }
    assert!(!format!("{snap:?}").contains(KEY));
    for f in ["hook-env.txt", "check-env.txt"] {
        std::fs::remove_file(dirs.work().join(f)).unwrap();
    }
    weft_testkit::leaks::assert_none(&[dirs.state.path(), &dirs.work()], b"", &[KEY]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn write_follows_no_link_out_of_the_workspace_and_undo_neither() {
    let outside = tempfile::tempdir().unwrap();
    let target = outside.path().join("created-by-write.txt");
    let script = Script::new()
        .turn(
            Turn::new()
                .tool_use("r", "read", json!({"path": "kept.txt"}))
                .tool_use(
                    "n",
                    "write",
                    json!({"path": "notes.md", "content": "escaped"}),
                )
                .tool_use("k", "write", json!({"path": "kept.txt", "content": "new"})),
        )
        .default_reply(Turn::text_reply("done"));
    let server = AnthropicServer::start(script).await.unwrap();
    let env = super::support::endpoint_env("anthropic-messages", &server.base_url(), "auto");
    let dirs = Dirs::new();
    // A dangling link, as a repository can ship one.
    std::os::unix::fs::symlink(&target, dirs.work().join("notes.md")).unwrap();
    write(&dirs.work(), "kept.txt", "#!/bin/sh\necho planted\n");
    let (r, _, _) = run_turn(&driver(), dirs.input(&env, "save notes", Some("m2"))).await;
    assert!(r.ok, "{r:?}");
    let refused = server.messages_requests()[1].last_tool_result("n").unwrap();
    assert!(!target.exists(), "written outside the workspace: {refused}");
    assert!(refused.contains("out of the workspace"), "{refused}");
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("kept.txt")).unwrap(),
        "new"
    );
    // A command replaces the written file by a link out; /undo must not follow it.
    let victim = outside.path().join("bashrc");
    std::fs::write(&victim, "mine\n").unwrap();
    std::fs::remove_file(dirs.work().join("kept.txt")).unwrap();
    std::os::unix::fs::symlink(&victim, dirs.work().join("kept.txt")).unwrap();
    let (_, snap, _) = run_turn(&driver(), dirs.input(&env, "/undo", Some("m2"))).await;
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap(),
        "mine\n",
        "{}",
        snap.text
    );
    assert!(snap.text.contains("kept.txt"), "{}", snap.text);
}

/// The coding tools run directly, in a git repository this test rigs.
fn repo() -> ToolBench {
    let repo = ToolBench::new();
    repo.git(&["init", "-q", "."]);
    write(repo.dir.path(), "a.txt", "one\n");
    repo.git(&["add", "a.txt"]);
    repo.git(&["commit", "-q", "-m", "first"]);
    repo
}

fn planted(marker: &Path) -> String {
    format!("touch '{}'; false", marker.display())
}

#[tokio::test]
async fn the_git_tools_run_nothing_the_repository_configures() {
    let repo = repo();
    let marker = repo.path("fsmonitor-ran");
    repo.git(&["config", "core.fsmonitor", &planted(&marker)]);
    // The plant works: the user's own git status runs it.
    repo.git_output(&["status"]);
    assert!(
        marker.exists(),
        "the planted fsmonitor did not run for git itself"
    );
    std::fs::remove_file(&marker).unwrap();
    let out = repo.run("git_status", json!({})).await;
    assert!(!out.is_error, "{}", out.content);
    assert!(!marker.exists(), "git_status ran core.fsmonitor");

    // A clean filter the repository defines, and a pre-commit hook.
    let filter = repo.path("filter-ran");
    repo.git(&[
        "config",
        "filter.evil.clean",
        &format!("touch '{}'; cat", filter.display()),
    ]);
    write(repo.dir.path(), ".gitattributes", "*.txt filter=evil\n");
    let hook = repo.path("hook-ran");
    write(
        repo.dir.path(),
        ".git/hooks/pre-commit",
        &format!("#!/bin/sh\ntouch '{}'\n", hook.display()),
    );
    let mode = std::os::unix::fs::PermissionsExt::from_mode(0o755);
    std::fs::set_permissions(repo.path(".git/hooks/pre-commit"), mode).unwrap();
    write(repo.dir.path(), "a.txt", "two\n");
    let diff = repo.run("git_diff", json!({})).await;
    assert!(diff.content.contains("+two"), "{}", diff.content);
    let commit = repo.run("git_commit", json!({"message": "second"})).await;
    assert!(!commit.is_error, "{}", commit.content);
    let log = repo.run("git_log", json!({})).await;
    assert!(log.content.contains("second"), "{}", log.content);
    assert!(!filter.exists(), "a tool ran the repository's clean filter");
    assert!(!hook.exists(), "git_commit ran the pre-commit hook");
    assert!(!marker.exists());
}

#[tokio::test]
async fn the_git_tools_refuse_a_symlinked_git() {
    let repo = repo();
    let real = repo.path("real-git");
    std::fs::rename(repo.path(".git"), &real).unwrap();
    std::os::unix::fs::symlink(&real, repo.path(".git")).unwrap();
    let out = repo.run("git_status", json!({})).await;
    assert!(out.is_error, "{}", out.content);
    assert!(out.content.contains("symbolic link"), "{}", out.content);
}
