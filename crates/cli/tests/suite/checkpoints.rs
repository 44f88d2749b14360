//! A checkpoint before and after every turn, through the daemon: the turn's diff in its
//! snapshot and history (a file a shell command wrote included), `weft restore` of a
//! turn and of one file, the refusal over newer edits and its undo, a folder outside git
//! (a shadow git dir), the guard against shadowing a huge folder, and the user's index,
//! stash and HEAD untouched. Real repositories made with the real `git`; the echo agent
//! changes the files with `shell: COMMAND` (its shell tool, `WEFT_ECHO_SHELL=1`).

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use super::support::{
    agent_bin, bounded, claude_env, claude_home, codex_env, gemini_env, gemini_home, ok_json,
    ok_stdout, stdout_json, string, Env,
};

/// `git ARGS` in `dir` with a fixed identity; its trimmed output.
fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@example.com")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@example.com")
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The workspace as a repository with `a.txt` and `b.txt` committed.
fn repo(env: &Env) {
    let dir = env.work.path();
    std::fs::write(dir.join("a.txt"), "a1\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(dir.join("b.txt"), "b1\n").unwrap_or_else(|e| panic!("{e}"));
    git(dir, &["init", "-q"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-qm", "start"]);
}

/// One echo turn running `command` in the workspace (a new session, or `session`'s):
/// `weft run --json`'s result.
fn shell_turn(env: &Env, session: Option<&str>, command: &str, extra: &[(&str, &str)]) -> Value {
    let prompt = format!("shell: {command}");
    let mut args = vec!["run", "--json"];
    match session {
        Some(key) => args.extend(["--session", key]),
        None => args.extend(["--agent", "echo"]),
    }
    args.push(&prompt);
    let mut cmd = env.cmd(&args);
    cmd.env("WEFT_ECHO_SHELL", "1");
    for (k, v) in extra {
        cmd.env(k, v);
    }
    let out = bounded(cmd, &args);
    env.keep_output(&out);
    ok_json(&out)
}

fn read(env: &Env, name: &str) -> String {
    std::fs::read_to_string(env.work.path().join(name)).unwrap_or_else(|e| panic!("{name}: {e}"))
}

fn write(env: &Env, name: &str, text: &str) {
    std::fs::write(env.work.path().join(name), text).unwrap_or_else(|e| panic!("{name}: {e}"));
}

/// The paths and change kinds of a `turnDiff`.
fn changed(diff: &Value) -> Vec<(String, String)> {
    diff["files"]
        .as_array()
        .unwrap_or_else(|| panic!("no files in {diff}"))
        .iter()
        .map(|f| (string(&f["path"]), string(&f["change"])))
        .collect()
}

#[test]
fn a_turn_is_checkpointed_and_its_diff_shows_what_a_shell_command_changed() {
    let env = Env::new();
    repo(&env);
    let dir = env.work.path();
    // Something in the user's index and stash, to prove neither is touched.
    write(&env, "b.txt", "stashed\n");
    git(dir, &["stash", "-q"]);
    write(&env, "staged.txt", "staged\n");
    git(dir, &["add", "staged.txt"]);
    let index = std::fs::read(dir.join(".git/index")).unwrap_or_else(|e| panic!("{e}"));
    let stash = git(dir, &["stash", "list", "--format=%H %s"]);
    let head = (git(dir, &["rev-parse", "HEAD"]), read(&env, ".git/HEAD"));

    let run = shell_turn(
        &env,
        None,
        "printf 'a2\\n' > a.txt && echo new > new.txt",
        &[],
    );
    let key = string(&run["sessionKey"]);
    let diff = &run["snapshot"]["turnDiff"];
    assert_eq!(diff["turn"], 1, "{diff}");
    assert_eq!(
        changed(diff),
        [
            ("a.txt".into(), "modified".into()),
            ("new.txt".into(), "added".into())
        ],
        "{diff}"
    );
    let a = &diff["files"][0];
    assert_eq!(
        (a["added"].as_u64(), a["removed"].as_u64()),
        (Some(1), Some(1))
    );
    assert!(string(&a["hunks"]).contains("-a1\n+a2"), "{a}");

    // The pair of checkpoints is on the session's private ref, each naming its turn.
    let (agent, id) = key.split_once(':').unwrap_or_else(|| panic!("{key}"));
    let refname = format!("refs/weft/checkpoints/{agent}/{id}");
    let log = git(dir, &["log", "--format=%s", &refname]);
    assert_eq!(log, "weft turn 1 after\nweft turn 1 before", "{log}");
    assert_eq!(string(&diff["after"]), git(dir, &["rev-parse", &refname]));

    // The history carries the same diff.
    let history = stdout_json(&env.weft(&["history", &key, "--json"]));
    assert_eq!(history[0]["turnDiff"], *diff, "{history}");

    // The user's index, stash and HEAD are byte for byte as they were.
    assert_eq!(
        std::fs::read(dir.join(".git/index")).unwrap_or_else(|e| panic!("{e}")),
        index,
        "the user's index changed"
    );
    assert_eq!(git(dir, &["stash", "list", "--format=%H %s"]), stash);
    assert_eq!(
        (git(dir, &["rev-parse", "HEAD"]), read(&env, ".git/HEAD")),
        head
    );
    assert_eq!(git(dir, &["diff", "--cached", "--name-only"]), "staged.txt");
}

/// A turn that wrote ignored files (`.env`, a new package in `node_modules`) names them
/// in its diff (`ignored`), which says they are outside checkpoints, and a restore to
/// before the turn leaves them as the turn left them.
#[test]
fn the_ignored_files_a_turn_changed_are_named_and_not_restored() {
    let env = Env::new();
    let dir = env.work.path();
    std::fs::write(dir.join(".gitignore"), ".env\nnode_modules/\n")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(dir.join("node_modules/old")).unwrap_or_else(|e| panic!("{e}"));
    repo(&env);
    let first = shell_turn(&env, None, "echo one > a.txt", &[]);
    let key = string(&first["sessionKey"]);
    assert_eq!(
        first["snapshot"]["turnDiff"]["ignored"],
        serde_json::json!([])
    );
    let run = shell_turn(
        &env,
        Some(&key),
        "echo two > a.txt && echo SECRET=1 > .env && mkdir node_modules/left-pad",
        &[],
    );
    let diff = &run["snapshot"]["turnDiff"];
    assert_eq!(
        changed(diff),
        [("a.txt".into(), "modified".into())],
        "{diff}"
    );
    assert_eq!(
        diff["ignored"],
        serde_json::json!([".env", "node_modules/"]),
        "{diff}"
    );
    ok_stdout(&env.weft(&["restore", &key, "--turn", "2", "--yes"]));
    assert_eq!(read(&env, "a.txt"), "one\n");
    assert_eq!(read(&env, ".env"), "SECRET=1\n");
    assert!(dir.join("node_modules/left-pad").is_dir());
}

#[test]
fn weft_diff_shows_the_whole_session_or_what_changed_since_a_checkpoint_and_reads_no_other_commit()
{
    let env = Env::new();
    repo(&env);
    let first = shell_turn(&env, None, "printf 'a2\\n' > a.txt", &[]);
    let key = string(&first["sessionKey"]);
    let second = shell_turn(&env, Some(&key), "printf 'b2\\n' > b.txt", &[]);
    let reviewed = string(&second["snapshot"]["turnDiff"]["before"]);

    // The whole session: both turns' files, from before the first to after the last.
    let whole = stdout_json(&env.weft(&["diff", &key, "--json"]));
    assert_eq!(
        changed(&whole),
        [
            ("a.txt".into(), "modified".into()),
            ("b.txt".into(), "modified".into())
        ],
        "{whole}"
    );
    assert_eq!(whole["before"], first["snapshot"]["turnDiff"]["before"]);
    assert_eq!(whole["after"], second["snapshot"]["turnDiff"]["after"]);
    // Since a checkpoint (what the user reviewed up to): only what came after.
    let since = stdout_json(&env.weft(&["diff", &key, "--from", &reviewed, "--json"]));
    assert_eq!(
        changed(&since),
        [("b.txt".into(), "modified".into())],
        "{since}"
    );
    let text = ok_stdout(&env.weft(&["diff", &key, "--from", &reviewed]));
    assert!(
        text.contains("modified b.txt (+1 -1)") && text.contains("+b2"),
        "{text}"
    );

    // The repository's own commit is not one of the session's checkpoints.
    let head = git(env.work.path(), &["rev-parse", "HEAD"]);
    let out = env.weft(&["diff", &key, "--from", &head]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("not one of this session's checkpoints"),
        "{err}"
    );
}

#[test]
fn a_big_turns_hunks_are_cut_from_the_snapshot_but_the_reviews_diff_has_them_all() {
    let env = Env::new();
    repo(&env);
    // 20,000 ordinary lines (about 1.4 MB of hunks): past the snapshot's 256 KiB.
    let run = shell_turn(
        &env,
        None,
        "seq -f 'line %05g of a generated file, as long as a line of code is' 20000 > big.txt",
        &[],
    );
    let key = string(&run["sessionKey"]);
    let in_snapshot = &run["snapshot"]["turnDiff"];
    assert_eq!(in_snapshot["files"][0]["added"], 20000, "{in_snapshot}");
    assert!(in_snapshot["files"][0]["hunks"].is_null(), "{in_snapshot}");
    assert!(
        in_snapshot["cut"].to_string().contains("left out"),
        "{in_snapshot}"
    );
    // The Review asks for the diff itself (`sessionDiff`, as `weft diff` does): whole.
    let whole = stdout_json(&env.weft(&["diff", &key, "--json"]));
    let hunks = whole["files"][0]["hunks"].as_str().unwrap_or_default();
    assert_eq!(
        hunks.lines().filter(|l| l.starts_with("+line ")).count(),
        20000
    );
    assert!(
        hunks.contains("+line 20000 of a generated file"),
        "{}",
        &hunks[..200]
    );
    assert!(whole["cut"].is_null(), "{}", whole["cut"]);
}

#[test]
fn restore_one_hunk_of_a_turn_from_the_session_diff_and_undo_it() {
    let env = Env::new();
    let lines: String = (1..=30).map(|i| format!("line {i}\n")).collect();
    write(&env, "p.txt", &lines);
    git(env.work.path(), &["init", "-q"]);
    git(env.work.path(), &["add", "."]);
    git(env.work.path(), &["commit", "-qm", "start"]);
    let run = shell_turn(
        &env,
        None,
        "sed -i -e 's/^line 2$/line two/' -e 's/^line 28$/line twenty-eight/' p.txt",
        &[],
    );
    let key = string(&run["sessionKey"]);
    let diff = stdout_json(&env.weft(&["diff", &key, "--json"]));
    let unified = string(&diff["files"][0]["hunks"]);
    let second = &unified[unified.rfind("@@ -").unwrap_or_else(|| panic!("{unified}"))..];
    let hunk = env.home.path().join("hunk.diff");
    std::fs::write(&hunk, second).unwrap_or_else(|e| panic!("{e}"));
    let hunk = hunk.to_string_lossy().into_owned();

    let out = ok_stdout(&env.weft(&["restore", &key, "--hunk", &hunk, "--", "p.txt"]));
    assert!(out.contains("restored p.txt"), "{out}");
    let now = read(&env, "p.txt");
    assert!(
        now.contains("line two\n") && now.contains("line 28\n"),
        "{now}"
    );
    // Undone like any restore.
    ok_stdout(&env.weft(&["restore", &key, "--undo", "--yes"]));
    assert!(read(&env, "p.txt").contains("line twenty-eight\n"));
    // A hunk whose lines are no longer there is refused, saying so.
    write(&env, "p.txt", &lines);
    let out = env.weft(&["restore", &key, "--hunk", &hunk, "--", "p.txt"]);
    assert!(!out.status.success(), "{out:?}");
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("changed where the hunk was"), "{err}");
}

#[test]
fn restore_a_turn_before_and_after_and_one_file_of_it() {
    let env = Env::new();
    repo(&env);
    let run = shell_turn(
        &env,
        None,
        "echo a2 > a.txt && echo b2 > b.txt && rm README.md",
        &[],
    );
    let key = string(&run["sessionKey"]);
    let second = shell_turn(&env, Some(&key), "echo a3 > a.txt", &[]);
    assert_eq!(second["snapshot"]["turnDiff"]["turn"], 2);

    // One file of turn 1, before it: only that file moves.
    ok_stdout(&env.weft(&["restore", &key, "--turn", "1", "--before", "--", "b.txt"]));
    assert_eq!(
        (read(&env, "a.txt"), read(&env, "b.txt")),
        ("a3\n".into(), "b1\n".into())
    );
    // The whole of turn 1, before it.
    ok_stdout(&env.weft(&["restore", &key, "--turn", "1"]));
    assert_eq!(
        (read(&env, "a.txt"), read(&env, "b.txt")),
        ("a1\n".into(), "b1\n".into())
    );
    assert_eq!(read(&env, "README.md"), "hello");
    // After it.
    ok_stdout(&env.weft(&["restore", &key, "--turn", "1", "--after"]));
    assert_eq!(
        (read(&env, "a.txt"), read(&env, "b.txt")),
        ("a2\n".into(), "b2\n".into())
    );
    assert!(!env.work.path().join("README.md").exists());
    // `weft undo`: the last turn, before it.
    ok_stdout(&env.weft(&["restore", &key, "--turn", "2", "--after"]));
    ok_stdout(&env.weft(&["undo", &key]));
    assert_eq!(read(&env, "a.txt"), "a2\n");
    // No such turn is a usage error.
    let out = env.weft(&["restore", &key, "--turn", "9"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
}

#[test]
fn a_restore_over_newer_edits_refuses_without_yes_and_can_be_undone() {
    let env = Env::new();
    repo(&env);
    let run = shell_turn(&env, None, "echo a2 > a.txt", &[]);
    let key = string(&run["sessionKey"]);
    write(&env, "a.txt", "my own edit\n");

    let out = env.weft(&["restore", &key, "--turn", "1"]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let printed = String::from_utf8_lossy(&out.stdout);
    assert!(
        printed.contains("+my own edit"),
        "the diff is not shown: {printed}"
    );
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("--yes"),
        "{out:?}"
    );
    assert_eq!(
        read(&env, "a.txt"),
        "my own edit\n",
        "a refused restore wrote"
    );

    ok_stdout(&env.weft(&["restore", &key, "--turn", "1", "--yes"]));
    assert_eq!(read(&env, "a.txt"), "a1\n");
    ok_stdout(&env.weft(&["restore", &key, "--undo"]));
    assert_eq!(
        read(&env, "a.txt"),
        "my own edit\n",
        "the undo lost the edit"
    );
}

#[test]
fn a_folder_outside_git_is_checkpointed_in_a_shadow_and_a_huge_one_or_home_is_not() {
    let env = Env::new();
    write(&env, "notes.txt", "n1\n");
    let run = shell_turn(&env, None, "echo n2 > notes.txt", &[]);
    let key = string(&run["sessionKey"]);
    let diff = &run["snapshot"]["turnDiff"];
    assert_eq!(
        changed(diff),
        [("notes.txt".into(), "modified".into())],
        "{diff}"
    );
    assert!(
        !env.work.path().join(".git").exists(),
        "the folder got a .git"
    );
    let shadows = std::fs::read_dir(env.home.path().join("checkpoints"))
        .unwrap_or_else(|e| panic!("no shadow: {e}"))
        .count();
    assert_eq!(shadows, 1);
    ok_stdout(&env.weft(&["restore", &key, "--turn", "1"]));
    assert_eq!(read(&env, "notes.txt"), "n1\n");

    // Over the limit of files, the session runs without checkpoints and says so.
    let big = Env::new();
    for i in 0..5 {
        write(&big, &format!("f{i}.txt"), "x\n");
    }
    let run = shell_turn(
        &big,
        None,
        "echo y > f0.txt",
        &[("WEFT_CHECKPOINT_MAX_FILES", "3")],
    );
    let snapshot = &run["snapshot"];
    assert!(snapshot.get("turnDiff").is_none(), "{snapshot}");
    let degraded = &snapshot["degraded"][0];
    assert_eq!(degraded["capability"], "checkpoints", "{snapshot}");
    assert!(
        string(&degraded["reason"]).contains("more than 3 files"),
        "{degraded}"
    );
    assert!(!big.home.path().join("checkpoints").exists());

    // A repository that is the home folder (dotfiles in git) is counted the same way.
    let dotfiles = Env::new();
    repo(&dotfiles);
    write(&dotfiles, "c.txt", "c1\n");
    let home = dotfiles.real_work().display().to_string();
    let limits = [("WEFT_CHECKPOINT_MAX_FILES", "3"), ("HOME", home.as_str())];
    let run = shell_turn(&dotfiles, None, "echo a2 > a.txt", &limits);
    let degraded = &run["snapshot"]["degraded"][0];
    assert_eq!(degraded["capability"], "checkpoints", "{run}");
    assert!(
        string(&degraded["reason"]).contains("home folder"),
        "{degraded}"
    );
    let refs = git(dotfiles.work.path(), &["for-each-ref", "refs/weft"]);
    assert_eq!(refs, "", "the home repository got checkpoints");
}

/// The real Claude Code against the scripted server: its turn writes through its Bash
/// tool (no edit tool says so), and the turn's diff shows the change; the turn restores
/// to before and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_claude_turn_that_writes_through_bash_shows_in_its_diff_and_restores() {
    use weft_testkit::anthropic::when;
    use weft_testkit::{AnthropicServer, Script, Turn};
    let Some(claude) = agent_bin("claude", "WEFT_CLAUDE_BIN") else {
        return;
    };
    let command = "printf 'a2\\n' > a.txt && echo c > c.txt";
    let script = Script::new()
        .rule(when::no_tools(), Turn::text_reply("a title"))
        .rule(when::tool_result_for("bash-1"), Turn::text_reply("written"))
        .rule(
            when::user_text_contains("change the files"),
            Turn::new().tool_use(
                "bash-1",
                "Bash",
                serde_json::json!({ "command": command, "description": "Change the files" }),
            ),
        )
        .default_reply(Turn::text_reply("ok"));
    let server = AnthropicServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = claude_home();
    let env = Env::new();
    repo(&env);
    let base = server.base_url();
    let weft = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        claude_env(&mut cmd, home.path(), &claude, &base);
        // Claude runs its Bash without asking (the turn has no one to answer).
        cmd.env("WEFT_CLAUDE_PERMISSION_MODE", "bypassPermissions");
        let out = bounded(cmd, args);
        env.keep_output(&out);
        out
    };
    let run = tokio::task::block_in_place(|| {
        ok_json(&weft(&[
            "run",
            "--agent",
            "claude",
            "--json",
            "change the files",
        ]))
    });
    let key = string(&run["sessionKey"]);
    let diff = &run["snapshot"]["turnDiff"];
    assert_eq!(
        changed(diff),
        [
            ("a.txt".into(), "modified".into()),
            ("c.txt".into(), "added".into())
        ],
        "{run}"
    );
    assert_eq!(read(&env, "a.txt"), "a2\n");

    tokio::task::block_in_place(|| {
        ok_stdout(&weft(&["restore", &key, "--turn", "1"]));
        assert_eq!(read(&env, "a.txt"), "a1\n");
        assert!(!env.work.path().join("c.txt").exists());
        ok_stdout(&weft(&["restore", &key, "--turn", "1", "--after"]));
        assert_eq!(
            (read(&env, "a.txt"), read(&env, "c.txt")),
            ("a2\n".into(), "c\n".into())
        );
    });
}

/// The real codex against the scripted Responses server: its turn writes through its
/// shell tool, the diff shows it, and the turn restores to before and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_codex_turn_that_writes_through_its_shell_shows_in_its_diff_and_restores() {
    use weft_testkit::openai::{when, Script, Turn};
    let Some(codex) = agent_bin("codex", "WEFT_CODEX_BIN") else {
        return;
    };
    let script = Script::new()
        .turn_when(
            when::user_text_contains("change the files"),
            Turn::new().shell("call_w", "printf 'a2\\n' > a.txt && echo c > c.txt"),
        )
        .turn_when(when::tool_output_for("call_w"), Turn::text_reply("written"))
        .default_reply(Turn::text_reply("ok"));
    let server = weft_testkit::ResponsesServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    repo(&env);
    let url = server.v1_url();
    let weft = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        codex_env(&mut cmd, home.path(), &codex, &url, "sk-test");
        let out = bounded(cmd, args);
        env.keep_output(&out);
        out
    };
    let run = tokio::task::block_in_place(|| {
        ok_json(&weft(&[
            "run",
            "--agent",
            "codex",
            "--json",
            "change the files",
        ]))
    });
    let key = string(&run["sessionKey"]);
    let diff = &run["snapshot"]["turnDiff"];
    assert_eq!(
        changed(diff),
        [
            ("a.txt".into(), "modified".into()),
            ("c.txt".into(), "added".into())
        ],
        "{run}"
    );
    tokio::task::block_in_place(|| {
        ok_stdout(&weft(&["restore", &key, "--turn", "1"]));
        assert_eq!(read(&env, "a.txt"), "a1\n");
        assert!(!env.work.path().join("c.txt").exists());
        ok_stdout(&weft(&["restore", &key, "--turn", "1", "--after"]));
        assert_eq!(
            (read(&env, "a.txt"), read(&env, "c.txt")),
            ("a2\n".into(), "c\n".into())
        );
    });
}

/// The real gemini against the scripted Gemini server: its turn writes through
/// `run_shell_command` (in mode `yolo`, so no one is asked), the diff shows it, and the
/// turn restores to before and after.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_gemini_turn_that_writes_through_its_shell_shows_in_its_diff_and_restores() {
    use weft_testkit::gemini::{when, Script, Turn};
    let Some(gemini) = agent_bin("gemini", "WEFT_GEMINI_BIN") else {
        return;
    };
    let script = Script::new()
        .rule(
            when::function_response_for("run_shell_command"),
            Turn::text_reply("written"),
        )
        .turn_when(
            when::user_text_contains("change the files"),
            Turn::new().function_call(
                "run_shell_command",
                serde_json::json!({ "command": "printf 'a2\\n' > a.txt && echo c > c.txt" }),
            ),
        )
        .default_reply(Turn::text_reply("ok"));
    let server = weft_testkit::GeminiServer::start(script)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let home = gemini_home();
    let env = Env::new();
    repo(&env);
    let base = server.base_url();
    let weft = |args: &[&str]| {
        let mut cmd = env.cmd(args);
        gemini_env(&mut cmd, home.path(), &gemini, &base);
        cmd.env("WEFT_GEMINI_MODE", "yolo");
        let out = bounded(cmd, args);
        env.keep_output(&out);
        out
    };
    let run = tokio::task::block_in_place(|| {
        ok_json(&weft(&[
            "run",
            "--agent",
            "gemini",
            "--json",
            "change the files",
        ]))
    });
    let key = string(&run["sessionKey"]);
    let diff = &run["snapshot"]["turnDiff"];
    assert_eq!(
        changed(diff),
        [
            ("a.txt".into(), "modified".into()),
            ("c.txt".into(), "added".into())
        ],
        "{run}"
    );
    tokio::task::block_in_place(|| {
        ok_stdout(&weft(&["restore", &key, "--turn", "1"]));
        assert_eq!(read(&env, "a.txt"), "a1\n");
        assert!(!env.work.path().join("c.txt").exists());
        ok_stdout(&weft(&["restore", &key, "--turn", "1", "--after"]));
        assert_eq!(
            (read(&env, "a.txt"), read(&env, "c.txt")),
            ("a2\n".into(), "c\n".into())
        );
    });
}
