//! Sessions in git worktrees end to end (issue 35, "Worktrees" and "The merge"): real
//! repositories made here, the real `git`, the echo agent writing files through its
//! `write-file` line. Each test has its own home, worktrees root and daemon.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use super::support::{bounded, git, script, wait_for, Env};

fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A test's home and repository (the workspace, made a git repository with one
/// commit), its worktrees root, and extra environment for every `weft` it runs.
struct Repo {
    env: Env,
    roots: tempfile::TempDir,
    vars: Vec<(String, String)>,
}

impl Repo {
    fn new(files: &[(&str, &str)]) -> Self {
        let env = Env::new();
        let work = env.work.path();
        for (name, text) in files {
            write(&work.join(name), text);
        }
        git(work, &["init", "-q", "-b", "main"]);
        git(work, &["add", "."]);
        git(work, &["commit", "-q", "-m", "first"]);
        let roots = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        // A base of its own per test, so tests running at once do not share ports.
        let base = 20000 + (std::process::id() % 2000) * 10 + 7000;
        let vars = vec![
            (
                "WEFT_WORKTREES".to_string(),
                roots.path().join("wt").display().to_string(),
            ),
            ("WEFT_PORT_BASE".to_string(), base.to_string()),
        ];
        Self { env, roots, vars }
    }

    fn work(&self) -> PathBuf {
        self.env.real_work()
    }

    fn weft(&self, args: &[&str]) -> Output {
        let mut cmd = self.env.cmd(args);
        cmd.envs(self.vars.iter().map(|(k, v)| (k, v)));
        let out = bounded(cmd, args);
        self.env.keep_output(&out);
        out
    }

    fn ok(&self, args: &[&str]) -> String {
        let out = self.weft(args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "weft {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    fn json(&self, args: &[&str]) -> Value {
        let text = self.ok(args);
        serde_json::from_str(&text).unwrap_or_else(|e| panic!("{e}: {text}"))
    }

    /// `weft run --worktree NAME --yes --json PROMPT`: its session key and reply.
    fn run_in(&self, name: &str, prompt: &str) -> (String, String) {
        let v = self.json(&["run", "--worktree", name, "--yes", "--json", prompt]);
        let key = v["sessionKey"].as_str().unwrap_or_default().to_string();
        let text = v["snapshot"]["text"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        (key, text)
    }

    /// The worktree of `weft worktrees --json` named `name`.
    fn worktree(&self, name: &str) -> Value {
        let all = self.json(&["worktrees", "--json"]);
        all.as_array()
            .and_then(|a| a.iter().find(|w| w["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no worktree {name} in {all}"))
    }
}

fn path_of(w: &Value) -> PathBuf {
    PathBuf::from(w["path"].as_str().unwrap_or_default())
}

#[test]
fn two_sessions_in_two_worktrees_edit_one_file_apart_each_with_its_own_ports() {
    let r = Repo::new(&[("a.txt", "original\n")]);
    let (k1, t1) = r.run_in("one", "ports\nwrite-file a.txt from one");
    let (k2, t2) = r.run_in("two", "ports\nwrite-file a.txt from two");
    let (w1, w2) = (r.worktree("one"), r.worktree("two"));
    let (p1, p2) = (path_of(&w1), path_of(&w2));
    assert!(p1.starts_with(r.roots.path()), "{w1}");
    assert_eq!(read(&p1.join("a.txt")), "from one\n");
    assert_eq!(read(&p2.join("a.txt")), "from two\n");
    assert_eq!(read(&r.work().join("a.txt")), "original\n");
    assert_eq!(w1["branch"], "weft/one");
    assert_eq!(w1["sessions"][0], k1.as_str());
    assert_eq!(w2["sessions"][0], k2.as_str());
    assert_eq!(
        (w1["dirty"].clone(), w1["ahead"].clone()),
        (true.into(), 0.into())
    );
    // Each session's spawn got its worktree's ports, and the two ranges differ.
    let ports = |w: &Value| w["ports"].as_str().unwrap_or_default().to_string();
    assert_ne!(ports(&w1), ports(&w2));
    let first = |w: &Value| ports(w).split('-').next().unwrap_or_default().to_string();
    assert!(
        t1.contains(&format!(
            "My WEFT_PORT is {} (WEFT_PORT_RANGE {})",
            first(&w1),
            ports(&w1)
        )),
        "{t1}"
    );
    assert!(
        t2.contains(&format!("My WEFT_PORT is {}", first(&w2))),
        "{t2}"
    );
    // The sidebar's list (the library) names each session's worktree and branch.
    let listed = wait_for("the library to list the session", 20, || {
        let all = r.json(&["sessions", "--all", "--json"]);
        all.as_array()
            .and_then(|a| a.iter().find(|s| s["sessionKey"] == k1.as_str()).cloned())
    });
    assert_eq!(listed["worktree"]["name"], "one", "{listed}");
    assert_eq!(listed["worktree"]["branch"], "weft/one", "{listed}");
    assert_eq!(listed["worktree"]["base"], "main", "{listed}");
    // A session outside a worktree gets none.
    let v = r.json(&["run", "--json", "ports"]);
    assert!(
        v["snapshot"]["text"]
            .to_string()
            .contains("I have no WEFT_PORT"),
        "{v}"
    );
}

const TOML: &str = r#"include = [".env*"]
setup = "echo set up > setup-ran; cat .env > env-seen; echo port $WEFT_PORT"
run = "python3 serve.py"
"#;

const SERVE: &str = r#"import os, socket, time
s = socket.socket()
s.bind(("127.0.0.1", int(os.environ["WEFT_PORT"])))
s.listen()
open("bound", "w").write(os.environ["WEFT_PORT_RANGE"])
time.sleep(60)
"#;

fn repo_with_config() -> Repo {
    let r = Repo::new(&[
        (".gitignore", ".env*\nbound\nsetup-ran\nenv-seen\n"),
        (".weft/worktree.toml", TOML),
        ("serve.py", SERVE),
    ]);
    write(&r.work().join(".env"), "NAME=value\n");
    r
}

#[test]
fn a_trusted_worktree_gets_the_env_file_and_runs_setup_an_untrusted_one_neither() {
    let r = repo_with_config();
    r.run_in("before", "hi");
    let before = path_of(&r.worktree("before"));
    assert!(!before.join(".env").exists() && !before.join("setup-ran").exists());
    r.ok(&["trust", "--yes"]);
    let (key, _) = r.run_in("auto", "hi");
    let all = r.json(&["worktrees", "--json"]);
    let w = all
        .as_array()
        .and_then(|a| a.iter().find(|w| w["sessions"][0] == key.as_str()).cloned())
        .unwrap_or_else(|| panic!("no worktree for {key}: {all}"));
    assert!(
        w["name"] != "auto"
            && w["branch"]
                .as_str()
                .unwrap_or_default()
                .starts_with("weft/"),
        "{w}"
    );
    let p = path_of(&w);
    assert_eq!(read(&p.join(".env")), "NAME=value\n");
    assert_eq!(read(&p.join("env-seen")), "NAME=value\n");
    assert_eq!(read(&p.join("setup-ran")), "set up\n");
    let log = read(Path::new(w["setupLog"].as_str().unwrap_or_default()));
    let port = w["ports"]
        .as_str()
        .unwrap_or_default()
        .split('-')
        .next()
        .unwrap_or_default()
        .to_string();
    assert!(log.contains(&format!("port {port}")), "{log}");
    // The copied, ignored files are not changes.
    assert_eq!(w["dirty"], false, "{w}");
}

#[test]
fn two_worktrees_run_commands_bind_different_ports() {
    let r = repo_with_config();
    r.ok(&["trust", "--yes"]);
    r.run_in("a", "hi");
    r.run_in("b", "hi");
    let key_a = r.ok(&["worktrees", "run", "a"]);
    r.ok(&["worktrees", "run", "b"]);
    assert!(
        key_a.starts_with("run:") && key_a.ends_with("/a"),
        "{key_a}"
    );
    let bound = |name: &str| {
        let p = path_of(&r.worktree(name)).join("bound");
        wait_for(&format!("{name}'s server"), 20, || {
            std::fs::read_to_string(&p).ok().filter(|s| !s.is_empty())
        })
    };
    let (a, b) = (bound("a"), bound("b"));
    assert_ne!(a, b);
    for range in [&a, &b] {
        let port: u16 = range
            .split('-')
            .next()
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        std::net::TcpStream::connect(("127.0.0.1", port))
            .unwrap_or_else(|e| panic!("nothing listens on {port}: {e}"));
    }
}

#[test]
fn archiving_refuses_a_dirty_worktree_or_a_running_turn_there_then_removes_it_and_keeps_the_branch()
{
    let r = Repo::new(&[("a.txt", "original\n")]);
    let (key, _) = r.run_in("w", "write-file a.txt changed");
    let p = path_of(&r.worktree("w"));
    let out = r.weft(&["sessions", "archive", &key]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_ne!(out.status.code(), Some(0), "{err}");
    assert!(
        err.contains("uncommitted changes") && err.contains("a.txt"),
        "{err}"
    );
    assert!(err.contains("commit") && err.contains("stash"), "{err}");
    assert!(p.join("a.txt").is_file());
    // A second session in the worktree, its turn running: the first's archive waits.
    let dir = p.display().to_string();
    let v = r.json(&["run", "--workdir", &dir, "--detach", "slow"]);
    let other = v["sessionKey"].as_str().unwrap_or_default().to_string();
    let out = r.weft(&["sessions", "archive", &key]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("in use by") && err.contains(&other), "{err}");
    r.ok(&["stop", &other]);
    // Exit 1: the turn ended stopped.
    r.weft(&["wait", &other]);
    // Idle now: the first is archived and the worktree stays for the second.
    r.ok(&["sessions", "archive", &key]);
    assert!(p.join("a.txt").is_file());
    git(&p, &["commit", "-qam", "the session's work"]);
    r.ok(&["sessions", "archive", &other]);
    assert!(!p.exists());
    assert_eq!(
        git(&r.work(), &["log", "-1", "--format=%s", "weft/w"]),
        "the session's work"
    );
    assert_eq!(r.json(&["worktrees", "--json"]), serde_json::json!([]));
}

fn merge(r: &Repo, args: &[&str]) -> (i32, Value) {
    let mut all = vec!["merge"];
    all.extend_from_slice(args);
    all.push("--json");
    let out = r.weft(&all);
    let v: Value = serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("{e}: {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code().unwrap_or(-1), v)
}

#[test]
fn merge_squash_and_a_conflict_reported_with_exit_1_and_the_base_left_clean() {
    let r = Repo::new(&[("a.txt", "one\ntwo\nthree\n")]);
    let work = r.work();
    let (k1, _) = r.run_in(
        "m",
        "write-file a.txt one\nwrite-file a.txt one\nTWO\nthree",
    );
    let (k2, _) = r.run_in("s", "write-file b.txt bee");
    let (k3, _) = r.run_in("c", "write-file a.txt conflicting");
    let (code, v) = merge(&r, &[&k1, "--message", "Edit a"]);
    assert_eq!(code, 0, "{v}");
    let keys: Vec<&String> = v
        .as_object()
        .map(|o| o.keys().collect())
        .unwrap_or_default();
    assert_eq!(keys, ["base", "branch", "commit", "conflicts"]);
    assert_eq!(
        (v["base"].clone(), v["branch"].clone()),
        ("main".into(), "weft/m".into())
    );
    assert_eq!(v["commit"], git(&work, &["rev-parse", "HEAD"]));
    assert_eq!(
        git(&work, &["log", "-1", "--format=%P"]).split(' ').count(),
        2
    );
    assert_eq!(
        git(&work, &["log", "-1", "--format=%s", "weft/m"]),
        "Edit a"
    );
    assert_eq!(read(&work.join("a.txt")), "one\n");
    // Squash, with the message proposed from the session's prompt.
    let (code, v) = merge(&r, &[&k2, "--squash"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        git(&work, &["log", "-1", "--format=%P"]).split(' ').count(),
        1
    );
    assert_eq!(
        git(&work, &["log", "-1", "--format=%s"]),
        "write-file b.txt bee"
    );
    assert_eq!(read(&work.join("b.txt")), "bee\n");
    // A conflict: reported, exit 1, the base as it was.
    let head = git(&work, &["rev-parse", "HEAD"]);
    let (code, v) = merge(&r, &[&k3, "--message", "c"]);
    assert_eq!(code, 1, "{v}");
    assert_eq!(v["commit"], Value::Null);
    assert_eq!(v["conflicts"][0]["path"], "a.txt", "{v}");
    let hunk = v["conflicts"][0]["hunks"][0].as_str().unwrap_or_default();
    assert!(
        hunk.starts_with("<<<<<<<") && hunk.contains("conflicting"),
        "{hunk}"
    );
    assert_eq!(git(&work, &["rev-parse", "HEAD"]), head);
    assert_eq!(git(&work, &["status", "--porcelain"]), "");
}

#[test]
fn push_goes_to_a_bare_repository_and_pr_runs_gh() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    let bare = r.roots.path().join("origin.git");
    git(
        r.roots.path(),
        &["init", "-q", "--bare", bare.to_str().unwrap_or("")],
    );
    git(
        &r.work(),
        &["remote", "add", "origin", bare.to_str().unwrap_or("")],
    );
    // A stand-in `gh` that records its arguments, first on the daemon's PATH.
    let bin = r.roots.path().join("bin");
    let argv = r.roots.path().join("gh-argv");
    script(
        &bin,
        "gh",
        &format!(
            "#!/bin/sh\nif [ \"$2\" = checks ]; then\n  for a in \"$@\"; do printf '%s\\n' \"$a\"; done > {}.checks\n  echo '[{{\"name\":\"build\",\"state\":\"PENDING\",\"bucket\":\"pending\",\"link\":\"https://example.invalid/run/7\"}}]'\n  exit 8\nfi\nfor a in \"$@\"; do printf '%s\\n' \"$a\"; done > {}\necho https://example.invalid/pr/1\n",
            argv.display(),
            argv.display()
        ),
    );
    let mut r = r;
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    r.vars.push(("PATH".into(), path));
    let (key, _) = r.run_in("p", "write-file p.txt pushed");
    let (code, v) = merge(&r, &[&key, "--push", "--message", "Push it"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(v["commit"], git(&bare, &["rev-parse", "weft/p"]));
    assert_eq!(git(&r.work(), &["log", "-1", "--format=%s"]), "first");
    let (code, v) = merge(&r, &[&key, "--pr", "--message", "Title\n\nBody text"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(
        read(&argv),
        "pr\ncreate\n--base\nmain\n--head\nweft/p\n--title\nTitle\n--body\nBody text\n"
    );
    // Then its checks, as gh lists them (exit 8: some pending, the list printed).
    assert_eq!(
        read(&bin.parent().unwrap_or(&bin).join("gh-argv.checks")),
        "pr\nchecks\nweft/p\n--json\nname,state,bucket,link\n"
    );
    assert_eq!(v["pr"], "https://example.invalid/pr/1", "{v}");
    assert_eq!(v["checks"][0]["name"], "build", "{v}");
    assert_eq!(v["checks"][0]["bucket"], "pending", "{v}");
    let out = r.weft(&["merge", &key, "--pr", "--message", "Again"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(
        text.contains("https://example.invalid/pr/1")
            && text.contains("pending  build  https://example.invalid/run/7"),
        "{text}"
    );
}

#[test]
fn fan_out_runs_one_prompt_in_a_worktree_per_target_from_one_commit_and_one_is_kept() {
    let r = Repo::new(&[("a.txt", "original\n")]);
    let work = r.work();
    let head = git(&work, &["rev-parse", "HEAD"]);
    let prompt = "ports\nwrite-file answer.txt mine";
    let all = r.json(&[
        "run",
        "--fanout",
        "echo,echo:echo-2,echo:echo-1",
        "--yes",
        "--json",
        prompt,
    ]);
    let runs = all.as_array().unwrap_or_else(|| panic!("{all}"));
    assert_eq!(runs.len(), 3, "{all}");
    let models: Vec<&Value> = runs.iter().map(|r| &r["model"]).collect();
    assert_eq!(models, [&Value::Null, &"echo-2".into(), &"echo-1".into()]);
    let listed = r.json(&["worktrees", "--json"]);
    let mut ports = Vec::new();
    for run in runs {
        // Each its own session, worktree and branch, made from the commit HEAD was at.
        let name = run["worktree"].as_str().unwrap_or_default();
        assert!(name.starts_with("fan-"), "{run}");
        let w = r.worktree(name);
        assert_eq!(w["sessions"][0], run["sessionKey"], "{listed}");
        assert_eq!(w["branch"], run["branch"]);
        assert_eq!(read(&path_of(&w).join("answer.txt")), "mine\n");
        assert_eq!(git(&path_of(&w), &["rev-parse", "HEAD"]), head);
        assert_eq!(run["snapshot"]["phase"], "done", "{run}");
        ports.push(w["ports"].clone());
    }
    ports.dedup();
    assert_eq!(ports.len(), 3, "{ports:?}");
    assert!(!work.join("answer.txt").exists());
    // Keep the second: merged into main; the others stay on their branches.
    let kept = runs[1]["sessionKey"].as_str().unwrap_or_default();
    let (code, v) = merge(&r, &[kept, "--message", "Keep echo-2's"]);
    assert_eq!(code, 0, "{v}");
    assert_eq!(read(&work.join("answer.txt")), "mine\n");
    // Bad targets are refused before anything starts.
    let out = r.weft(&["run", "--fanout", "echo", "x"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    let out = r.weft(&["run", "--fanout", "echo,:m", "x"]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        r.json(&["worktrees", "--json"]).as_array().map(Vec::len),
        Some(3)
    );
}

/// While a new worktree's `setup` runs, the session's agent starts ahead there through
/// the warm pool (the real claude against the scripted server): the setup sees it
/// running in the worktree, and the turn runs on that very process.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_new_worktrees_agent_starts_ahead_while_its_setup_runs() {
    use super::support::{agent_bin, claude_env, claude_home};
    use weft_testkit::anthropic::{Script, Turn};
    let Some(claude) = agent_bin("claude", "WEFT_CLAUDE_BIN") else {
        return;
    };
    let server = weft_testkit::AnthropicServer::start(
        Script::new().default_reply(Turn::text_reply("set-up-and-warm")),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    // The setup waits until an agent's process runs in the worktree (at most 60 s),
    // then writes down every process's arguments.
    let setup =
        "for i in $(seq 120); do pgrep -f 'stream-[j]son' >/dev/null && break; sleep 0.5; done; \
                 ps -eo pid=,args= > agents-during-setup";
    let r = Repo::new(&[
        (".gitignore", "agents-during-setup\n"),
        (".weft/worktree.toml", &format!("setup = \"{setup}\"\n")),
    ]);
    let home = claude_home();
    let weft = |args: &[&str]| -> Value {
        let mut cmd = r.env.cmd(args);
        cmd.envs(r.vars.iter().map(|(k, v)| (k, v)));
        claude_env(&mut cmd, home.path(), &claude, &server.base_url());
        cmd.env("WEFT_WARM_POOL_SECS", "120");
        let out = bounded(cmd, args);
        r.env.keep_output(&out);
        assert_eq!(out.status.code(), Some(0), "weft {args:?}: {out:?}");
        serde_json::from_slice(&out.stdout).unwrap_or(Value::Null)
    };
    weft(&["trust", "--yes"]);
    let ran = weft(&[
        "run",
        "--worktree",
        "auto",
        "--agent",
        "claude",
        "--json",
        "hello",
    ]);
    assert!(ran.to_string().contains("set-up-and-warm"), "{ran}");
    let key = ran["sessionKey"].as_str().unwrap_or_default();
    let all = weft(&["worktrees", "--json"]);
    let w = all
        .as_array()
        .and_then(|a| a.iter().find(|w| w["sessions"][0] == key).cloned())
        .unwrap_or_else(|| panic!("no worktree for {key}: {all}"));
    let seen = read(&path_of(&w).join("agents-during-setup"));
    let agent = seen
        .lines()
        .find(|l| l.contains("stream-json") && l.contains("--session-id"))
        .unwrap_or_else(|| panic!("no claude ran while the setup ran:\n{seen}"));
    // The turn ran on the process the setup saw.
    let id = ran["snapshot"]["sessionId"].as_str().unwrap_or_default();
    assert!(!id.is_empty() && agent.contains(id), "{agent}\n{ran}");
}

#[test]
fn forward_on_this_machine_prints_the_worktrees_own_url() {
    let r = Repo::new(&[("a.txt", "a\n")]);
    let (key, _) = r.run_in("here", "ports");
    let w = r.worktree("here");
    let first = w["ports"]
        .as_str()
        .and_then(|p| p.split('-').next())
        .unwrap_or_default()
        .to_string();
    let v = r.json(&["forward", &key, "--json"]);
    assert_eq!(v["host"], "local", "{v}");
    assert_eq!(v["remotePort"].to_string(), first, "{v}");
    assert_eq!(v["localPort"], v["remotePort"], "{v}");
    assert_eq!(
        v["url"],
        format!("http://127.0.0.1:{first}/").as_str(),
        "{v}"
    );
    assert_eq!(
        r.ok(&["forward", &key]),
        format!("http://127.0.0.1:{first}/")
    );
}
