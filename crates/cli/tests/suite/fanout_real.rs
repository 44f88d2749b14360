//! Three real agents at once on one repository, each in a worktree of its own (issue 35,
//! "One prompt, several agents"): the real claude, codex and gemini, each against its
//! scripted model server, each editing the same tracked file through its shell tool.
//! Each worktree holds only its own change, each session's `turnDiff` shows exactly it,
//! restoring one session's turn undoes only that session's change, the worktrees' port
//! ranges differ, and one session's branch merges into the base.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::Value;

use super::support::{
    agent_bin, bounded, claude_env, claude_home, codex_env, gemini_env, gemini_home, git, ok_json,
    ok_stdout, string, Env,
};

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// How a `weft` command reaches one agent: its binary, home and scripted server.
#[derive(Clone)]
enum Agent {
    Claude {
        bin: PathBuf,
        home: PathBuf,
        base: String,
    },
    Codex {
        bin: PathBuf,
        home: PathBuf,
        url: String,
    },
    Gemini {
        bin: PathBuf,
        home: PathBuf,
        base: String,
    },
}

impl Agent {
    fn name(&self) -> &'static str {
        match self {
            Agent::Claude { .. } => "claude",
            Agent::Codex { .. } => "codex",
            Agent::Gemini { .. } => "gemini",
        }
    }

    fn apply(&self, cmd: &mut Command) {
        match self {
            Agent::Claude { bin, home, base } => {
                claude_env(cmd, home, bin, base);
                cmd.env("WEFT_CLAUDE_PERMISSION_MODE", "bypassPermissions");
            }
            Agent::Codex { bin, home, url } => codex_env(cmd, home, bin, url, "sk-test"),
            Agent::Gemini { bin, home, base } => {
                gemini_env(cmd, home, bin, base);
                cmd.env("WEFT_GEMINI_MODE", "yolo");
            }
        }
    }
}

/// The shell command each agent's model asks for: its own line in the shared file.
fn edit(agent: &str) -> String {
    format!("printf 'by {agent}\\n' > a.txt")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn claude_codex_and_gemini_at_once_each_in_its_own_worktree_apart_restored_and_merged() {
    let (Some(claude), Some(codex), Some(gemini)) = (
        agent_bin("claude", "WEFT_CLAUDE_BIN"),
        agent_bin("codex", "WEFT_CODEX_BIN"),
        agent_bin("gemini", "WEFT_GEMINI_BIN"),
    ) else {
        return;
    };

    let anthropic = {
        use weft_testkit::anthropic::when;
        use weft_testkit::{AnthropicServer, Script, Turn};
        let script = Script::new()
            .rule(when::no_tools(), Turn::text_reply("a title"))
            .rule(
                when::tool_result_for("bash-1"),
                Turn::text_reply("claude done"),
            )
            .rule(
                when::user_text_contains("edit the file"),
                Turn::new().tool_use(
                    "bash-1",
                    "Bash",
                    serde_json::json!({ "command": edit("claude"), "description": "Edit" }),
                ),
            )
            .default_reply(Turn::text_reply("ok"));
        AnthropicServer::start(script)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let responses = {
        use weft_testkit::openai::{when, Script, Turn};
        let script = Script::new()
            .turn_when(
                when::user_text_contains("edit the file"),
                Turn::new().shell("call_w", &edit("codex")),
            )
            .turn_when(
                when::tool_output_for("call_w"),
                Turn::text_reply("codex done"),
            )
            .default_reply(Turn::text_reply("ok"));
        weft_testkit::ResponsesServer::start(script)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let gemini_server = {
        use weft_testkit::gemini::{when, Script, Turn};
        let script = Script::new()
            .rule(
                when::function_response_for("run_shell_command"),
                Turn::text_reply("gemini done"),
            )
            .turn_when(
                when::user_text_contains("edit the file"),
                Turn::new().function_call(
                    "run_shell_command",
                    serde_json::json!({ "command": edit("gemini") }),
                ),
            )
            .default_reply(Turn::text_reply("ok"));
        weft_testkit::GeminiServer::start(script)
            .await
            .unwrap_or_else(|e| panic!("{e}"))
    };

    let (claude_home, codex_home, gemini_home) = (
        claude_home(),
        tempfile::tempdir().unwrap_or_else(|e| panic!("{e}")),
        gemini_home(),
    );
    let agents = [
        Agent::Claude {
            bin: claude,
            home: claude_home.path().to_path_buf(),
            base: anthropic.base_url(),
        },
        Agent::Codex {
            bin: codex,
            home: codex_home.path().to_path_buf(),
            url: responses.v1_url(),
        },
        Agent::Gemini {
            bin: gemini,
            home: gemini_home.path().to_path_buf(),
            base: gemini_server.base_url(),
        },
    ];

    let env = Env::new();
    let work = env.real_work();
    std::fs::write(work.join("a.txt"), "original\n").unwrap_or_else(|e| panic!("{e}"));
    git(&work, &["init", "-q", "-b", "main"]);
    git(&work, &["add", "."]);
    git(&work, &["commit", "-q", "-m", "first"]);
    let roots = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let worktrees = roots.path().join("wt").display().to_string();
    // A port base of this test's own, so tests running at once do not share ports.
    let port_base = (20000 + (std::process::id() % 2000) * 10 + 3000).to_string();
    let command = |agent: Option<&Agent>, args: &[&str]| {
        let mut cmd = env.cmd(args);
        cmd.env("WEFT_WORKTREES", &worktrees)
            .env("WEFT_PORT_BASE", &port_base);
        if let Some(agent) = agent {
            agent.apply(&mut cmd);
        }
        cmd
    };
    let weft = |agent: Option<&Agent>, args: &[&str]| {
        let out = bounded(command(agent, args), args);
        env.keep_output(&out);
        out
    };

    // The daemon starts (and the workspace is trusted) once, before the three at once.
    tokio::task::block_in_place(|| ok_stdout(&weft(None, &["trust", "--yes"])));
    let outs: Vec<_> = tokio::task::block_in_place(|| {
        let started: Vec<_> = agents
            .iter()
            .map(|agent| {
                let name = agent.name();
                let args = [
                    "run",
                    "--worktree",
                    name,
                    "--agent",
                    name,
                    "--json",
                    "edit the file",
                ];
                let cmd = command(Some(agent), &args);
                std::thread::spawn(move || bounded(cmd, &args))
            })
            .collect();
        started
            .into_iter()
            .map(|h| h.join().unwrap_or_else(|_| panic!("a run panicked")))
            .collect()
    });
    let runs: Vec<Value> = outs
        .iter()
        .map(|out| {
            env.keep_output(out);
            ok_json(out)
        })
        .collect();

    let listed = ok_json(&tokio::task::block_in_place(|| {
        weft(None, &["worktrees", "--json"])
    }));
    let worktree = |name: &str| -> Value {
        listed
            .as_array()
            .and_then(|a| a.iter().find(|w| w["name"] == name).cloned())
            .unwrap_or_else(|| panic!("no worktree {name} in {listed}"))
    };
    let path_of = |name: &str| PathBuf::from(string(&worktree(name)["path"]));
    let mut keys = Vec::new();
    let mut ports = Vec::new();
    for (agent, run) in agents.iter().zip(&runs) {
        let name = agent.name();
        let key = string(&run["sessionKey"]);
        assert!(key.starts_with(&format!("{name}:")), "{run}");
        assert_eq!(run["snapshot"]["phase"], "done", "{run}");
        let w = worktree(name);
        assert_eq!(w["sessions"][0], key.as_str(), "{listed}");
        assert_eq!(w["branch"], format!("weft/{name}"), "{listed}");
        ports.push(string(&w["ports"]));
        // The worktree holds its own change and nothing else.
        let dir = path_of(name);
        assert_eq!(read(&dir.join("a.txt")), format!("by {name}\n"));
        assert_eq!(git(&dir, &["status", "--porcelain"]), "M a.txt", "{name}");
        // The turn's diff is exactly that change.
        let files = run["snapshot"]["turnDiff"]["files"]
            .as_array()
            .cloned()
            .unwrap_or_else(|| panic!("no turnDiff in {run}"));
        assert_eq!(files.len(), 1, "{run}");
        assert_eq!(
            (string(&files[0]["path"]), string(&files[0]["change"])),
            ("a.txt".into(), "modified".into()),
            "{run}"
        );
        let text = files[0].to_string();
        for other in agents.iter().map(Agent::name) {
            assert_eq!(
                text.contains(&format!("by {other}")),
                other == name,
                "{name}'s diff and {other}'s line: {text}"
            );
        }
        keys.push(key);
    }
    // The base's files are untouched, and the three port ranges differ.
    assert_eq!(read(&work.join("a.txt")), "original\n");
    assert!(ports.iter().all(|p| !p.is_empty()), "{ports:?}");
    let mut distinct = ports.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(distinct.len(), 3, "{ports:?}");

    tokio::task::block_in_place(|| {
        // Restoring claude's turn to before undoes its change only.
        ok_stdout(&weft(
            Some(&agents[0]),
            &["restore", &keys[0], "--turn", "1"],
        ));
        assert_eq!(read(&path_of("claude").join("a.txt")), "original\n");
        assert_eq!(read(&path_of("codex").join("a.txt")), "by codex\n");
        assert_eq!(read(&path_of("gemini").join("a.txt")), "by gemini\n");
        assert_eq!(read(&work.join("a.txt")), "original\n");

        // Codex's branch merges into main.
        let out = weft(
            Some(&agents[1]),
            &["merge", &keys[1], "--message", "Keep codex's", "--json"],
        );
        let merged = ok_json(&out);
        assert!(
            merged["conflicts"].as_array().is_none_or(Vec::is_empty),
            "{merged}"
        );
        assert_eq!(read(&work.join("a.txt")), "by codex\n");
        assert_eq!(git(&work, &["status", "--porcelain"]), "");
        assert_eq!(read(&path_of("gemini").join("a.txt")), "by gemini\n");
    });
}
