//! Skills placed once in Weft reach every agent through the kernel's plugins: the real
//! Claude loads one (its init lists it, its request offers it) without Weft writing
//! into the user's Claude folders, Weft's own agent offers it, Codex and Gemini get a
//! link in `.agents/skills` and offer it, and a user's own skill of the same name
//! keeps the name.
//! And on the PTY rail: the agent's own terminal is spawned with what the plugins gave
//! (the `--mcp-config` file, the skills folder, the server's variables).

mod common;

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use common::{agents_bin, fixture, Res};
use serde_json::json;
use weft_kernel::{Caller, Loom};
use weft_protocol::{ClientEnv, OpenTerminalRequest, Phase, PromptRequest, SnapshotAt};

fn skill(root: &Path, name: &str, description: &str) -> Res {
    let dir = root.join(name);
    std::fs::create_dir_all(&dir)?;
    std::fs::write(
        dir.join("SKILL.md"),
        format!("---\nname: {name}\ndescription: {description}\n---\nSay the word.\n"),
    )?;
    Ok(())
}

async fn done(loom: &Loom, key: &str, task: &str) -> Res<SnapshotAt> {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(120);
    loop {
        let at = loom.get_snapshot(key).await?;
        if at.snapshot.task_id.as_deref() == Some(task) && at.snapshot.phase == Phase::Done {
            return Ok(at);
        }
        if tokio::time::Instant::now() > deadline {
            return Err(format!("turn {task} did not end: {:#?}", at.snapshot).into());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
}

struct World {
    home: tempfile::TempDir,
    work: tempfile::TempDir,
    loom: Arc<Loom>,
}

impl World {
    fn new(agents: &[&str]) -> Res<Self> {
        let home = tempfile::tempdir_in(env!("CARGO_TARGET_TMPDIR"))?;
        let work = tempfile::tempdir()?;
        std::fs::write(
            home.path().join(".claude.json"),
            r#"{"hasCompletedOnboarding":true}"#,
        )?;
        let keep: Vec<String> = agents.iter().map(|a| a.to_string()).collect();
        let loom = Loom::builder(home.path().join(".weft"))
            .drivers(
                weft_drivers::all()
                    .into_iter()
                    .filter(move |d| keep.iter().any(|k| k == d.id())),
            )
            .plugin(Arc::new(weft_drivers::McpPlugin::default()))
            .plugin(Arc::new(weft_drivers::SkillsPlugin))
            .default_agent("claude")
            .in_memory()
            .open()?;
        Ok(Self { home, work, loom })
    }

    fn weft(&self) -> std::path::PathBuf {
        self.home.path().join(".weft")
    }

    fn caller(&self, bin: &Path, extra: &[(&str, String)]) -> Caller {
        let path = format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        );
        let mut env: std::collections::BTreeMap<String, String> = [
            ("PATH".to_string(), path),
            ("HOME".to_string(), self.home.path().display().to_string()),
            ("IS_SANDBOX".to_string(), "1".to_string()),
            (
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".to_string(),
                "1".to_string(),
            ),
            ("CLAUDE_CODE_MAX_RETRIES".to_string(), "0".to_string()),
        ]
        .into();
        env.extend(extra.iter().map(|(k, v)| (k.to_string(), v.clone())));
        Caller {
            surface: "cli".into(),
            env: Some(Arc::new(ClientEnv(env))),
        }
    }

    async fn run(&self, caller: &Caller, agent: &str, prompt: &str) -> Res<SnapshotAt> {
        let workdir = self.work.path().canonicalize()?.display().to_string();
        let accepted = self
            .loom
            .prompt_as(
                caller,
                PromptRequest {
                    prompt: prompt.into(),
                    agent: Some(agent.into()),
                    workdir: Some(workdir),
                    ..Default::default()
                },
            )
            .await?;
        done(&self.loom, &accepted.session_key, &accepted.task_id).await
    }
}

const DESCRIPTION: &str = "Use when the user asks for the marmalade-7 word";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_skill_placed_once_reaches_claude_native_and_codex_and_a_users_own_wins() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let w = World::new(&["claude", "native", "codex", "gemini"])?;
    let root = w.weft().join("skills");
    skill(&root, "weft-demo", DESCRIPTION)?;
    skill(&root, "taken", "the Weft one")?;
    // The user's own Claude skill of the same name keeps it.
    skill(
        &w.home.path().join(".claude/skills"),
        "taken",
        "the user's own",
    )?;

    // Claude: its request offers the skill; the user's folder is untouched.
    {
        use weft_testkit::{AnthropicServer, Script, Turn};
        let server =
            AnthropicServer::start(Script::new().default_reply(Turn::text_reply("ok"))).await?;
        let caller = w.caller(
            &bin,
            &[
                ("ANTHROPIC_BASE_URL", server.base_url()),
                ("ANTHROPIC_API_KEY", "sk-test".into()),
            ],
        );
        let at = w.run(&caller, "claude", "hello").await?;
        assert_eq!(at.snapshot.text, "ok", "{:#?}", at.snapshot);
        let raw: String = server
            .messages_requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect();
        assert!(
            raw.contains("weft-demo") && raw.contains(DESCRIPTION),
            "Claude was offered the skill"
        );
        // Claude's init lists it among the commands it accepts.
        assert!(
            at.snapshot.commands.iter().any(|c| c.name == "weft-demo"),
            "{:?}",
            at.snapshot.commands
        );
        let linked = weft_drivers::skills_dir_for_claude(&w.weft(), &at.session_key);
        assert!(linked.join(".claude/skills/weft-demo/SKILL.md").exists());
        assert!(
            std::fs::symlink_metadata(linked.join(".claude/skills/taken")).is_err(),
            "a name the user's own skill has is not linked"
        );
        assert!(
            std::fs::read_to_string(w.home.path().join(".claude/skills/taken/SKILL.md"))?
                .contains("the user's own")
        );
        assert!(!w.home.path().join(".claude/skills/weft-demo").exists());
    }

    // Weft's own agent offers it in its prompt.
    {
        use weft_testkit::{AnthropicServer, Script, Turn};
        let server =
            AnthropicServer::start(Script::new().default_reply(Turn::text_reply("ok"))).await?;
        let caller = w.caller(
            &bin,
            &[
                ("WEFT_NATIVE_PROTOCOL", "anthropic-messages".into()),
                ("WEFT_NATIVE_BASE_URL", server.base_url()),
                ("WEFT_NATIVE_API_KEY", "sk-test".into()),
                ("WEFT_NATIVE_MODEL", "scripted-model".into()),
            ],
        );
        let at = w.run(&caller, "native", "hello").await?;
        assert_eq!(at.snapshot.text, "ok", "{:#?}", at.snapshot);
        let body = server
            .messages_requests()
            .first()
            .map(|r| r.body.to_string())
            .unwrap_or_default();
        assert!(
            body.contains("weft-demo") && body.contains(DESCRIPTION),
            "{body}"
        );
    }

    // Codex: a link in the home's .agents/skills, and its request lists the skill.
    {
        use weft_testkit::openai::{Script, Turn};
        let server =
            weft_testkit::ResponsesServer::start(Script::new().turn(Turn::text_reply("ok")))
                .await?;
        let codex_home = w.home.path().join("codex");
        std::fs::create_dir_all(&codex_home)?;
        let caller = w.caller(
            &bin,
            &[
                ("CODEX_HOME", codex_home.display().to_string()),
                ("WEFT_CODEX_BASE_URL", server.v1_url()),
                ("WEFT_CODEX_API_KEY_ENV", "WEFT_TEST_OPENAI_KEY".into()),
                ("WEFT_TEST_OPENAI_KEY", "sk-test".into()),
                ("WEFT_CODEX_MAX_RETRIES", "0".into()),
                ("WEFT_CODEX_CONFIG", "model=\"mock-model\"".into()),
            ],
        );
        let at = w.run(&caller, "codex", "hello").await?;
        assert_eq!(at.snapshot.text, "ok", "{:#?}", at.snapshot);
        let link = w.home.path().join(".agents/skills/weft-demo");
        assert_eq!(std::fs::read_link(&link)?, root.join("weft-demo"));
        let raw: String = server
            .responses_requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect();
        assert!(raw.contains(DESCRIPTION), "Codex was offered the skill");
    }

    // Gemini reads the same .agents/skills link.
    {
        use weft_testkit::gemini::{Script, Turn};
        let gdir = w.home.path().join(".gemini");
        std::fs::create_dir_all(&gdir)?;
        std::fs::write(
            gdir.join("settings.json"),
            r#"{"security":{"auth":{"selectedType":"gemini-api-key"}},"privacy":{"usageStatisticsEnabled":false}}"#,
        )?;
        let server =
            weft_testkit::GeminiServer::start(Script::new().turn(Turn::text_reply("ok"))).await?;
        let caller = w.caller(
            &bin,
            &[
                ("GEMINI_API_KEY", "test-key".into()),
                ("GOOGLE_GEMINI_BASE_URL", server.base_url()),
                ("GEMINI_CLI_NO_RELAUNCH", "true".into()),
            ],
        );
        let at = w.run(&caller, "gemini", "hello").await?;
        assert_eq!(at.snapshot.text, "ok", "{:#?}", at.snapshot);
        let raw: String = server
            .generate_requests()
            .iter()
            .map(|r| r.body.to_string())
            .collect();
        assert!(raw.contains(DESCRIPTION), "Gemini was offered the skill");
    }

    // Turned off: the next spawn takes Weft's link away.
    weft_kernel::skills::set_enabled(&w.weft(), "weft-demo", false)?;
    {
        use weft_testkit::openai::{Script, Turn};
        let server =
            weft_testkit::ResponsesServer::start(Script::new().turn(Turn::text_reply("ok")))
                .await?;
        let codex_home = w.home.path().join("codex");
        let caller = w.caller(
            &bin,
            &[
                ("CODEX_HOME", codex_home.display().to_string()),
                ("WEFT_CODEX_BASE_URL", server.v1_url()),
                ("WEFT_CODEX_API_KEY_ENV", "WEFT_TEST_OPENAI_KEY".into()),
                ("WEFT_TEST_OPENAI_KEY", "sk-test".into()),
                ("WEFT_CODEX_MAX_RETRIES", "0".into()),
                ("WEFT_CODEX_CONFIG", "model=\"mock-model\"".into()),
            ],
        );
        w.run(&caller, "codex", "hello again").await?;
        assert!(std::fs::symlink_metadata(w.home.path().join(".agents/skills/weft-demo")).is_err());
    }
    w.loom.shutdown().await;
    Ok(())
}

/// The PTY rail: the agent's own terminal is spawned with the plugins' contributions.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_agents_terminal_is_spawned_with_the_plugins_contributions() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let w = World::new(&["claude"])?;
    skill(&w.weft().join("skills"), "weft-demo", DESCRIPTION)?;
    std::fs::write(
        w.weft().join("mcp.json"),
        json!({"mcpServers": {"rec": {
            "command": "python3",
            "args": [fixture(), w.home.path().join("calls.jsonl")],
            "env": {"WEFT_MCP_WHO": "in-the-terminal"}
        }}})
        .to_string(),
    )?;
    let caller = w.caller(
        &bin,
        &[
            ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9".into()),
            ("ANTHROPIC_API_KEY", "sk-test".into()),
        ],
    );
    let (key, bridge) = w
        .loom
        .terminal_open(
            &caller,
            OpenTerminalRequest {
                agent: Some("claude".into()),
                workdir: Some(w.work.path().canonicalize()?.display().to_string()),
                ..Default::default()
            },
        )
        .await?;
    let pid = bridge.pid().ok_or("the terminal has no pid")?;
    // Until the forked child has exec'd claude, /proc shows this test's own command
    // line, in the middle of execve none or a part of it, then `env`'s before node's:
    // it is read until it names the flag (or the time is up and the assert shows it).
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    let cmdline = loop {
        let now = std::fs::read(format!("/proc/{pid}/cmdline"))?;
        let named = now.split(|b| *b == 0).any(|a| a == b"--mcp-config");
        if named || tokio::time::Instant::now() > deadline {
            break now;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    let argv: Vec<String> = cmdline
        .split(|b| *b == 0)
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    let after = |flag: &str| {
        argv.iter()
            .skip_while(|a| *a != flag)
            .nth(1)
            .cloned()
            .unwrap_or_default()
    };
    let config = after("--mcp-config");
    assert!(!config.is_empty(), "{argv:?}");
    let text = std::fs::read_to_string(&config)?;
    assert!(
        text.contains("\"rec\"") && !text.contains("in-the-terminal"),
        "{text}"
    );
    let added = after("--add-dir");
    assert!(
        Path::new(&added)
            .join(".claude/skills/weft-demo/SKILL.md")
            .exists(),
        "{argv:?}"
    );
    let environ = std::fs::read(format!("/proc/{pid}/environ"))?;
    let environ = String::from_utf8_lossy(&environ);
    assert!(
        environ
            .split('\0')
            .any(|kv| kv == "WEFT_MCP_REC_ENV_0=in-the-terminal"),
        "the server's variable is in the terminal's environment"
    );
    w.loom.terminal_close(&key).await?;
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    while Path::new(&config).exists() && tokio::time::Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        !Path::new(&config).exists(),
        "the file goes with the terminal"
    );
    w.loom.shutdown().await;
    Ok(())
}

/// codex-acp (Codex over ACP) reads the same `.agents/skills` as Codex: Weft's skill is
/// linked in the home's folder and the real codex-acp offers it to the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_acp_is_offered_weft_s_skills() -> Res {
    use weft_testkit::openai::{Script, Turn};
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let w = World::new(&["codex-acp"])?;
    let root = w.weft().join("skills");
    skill(&root, "weft-demo", DESCRIPTION)?;
    let server =
        weft_testkit::ResponsesServer::start(Script::new().turn(Turn::text_reply("ok"))).await?;
    let codex_home = w.home.path().join("codex");
    std::fs::create_dir_all(&codex_home)?;
    std::fs::write(
        codex_home.join("config.toml"),
        format!(
            "model = \"mock-model\"\nmodel_provider = \"weft\"\napproval_policy = \"never\"\n\
             sandbox_mode = \"danger-full-access\"\n\
             [model_providers.weft]\nname = \"weft\"\nbase_url = \"{}\"\n\
             env_key = \"WEFT_TEST_OPENAI_KEY\"\nwire_api = \"responses\"\n\
             request_max_retries = 0\nstream_max_retries = 0\n",
            server.v1_url()
        ),
    )?;
    let caller = w.caller(
        &bin,
        &[
            ("CODEX_HOME", codex_home.display().to_string()),
            ("WEFT_TEST_OPENAI_KEY", "sk-test".into()),
        ],
    );
    let at = w.run(&caller, "codex-acp", "hello").await?;
    // codex-acp writes codex's warning about the scripted model into the reply.
    assert!(at.snapshot.text.ends_with("ok"), "{:#?}", at.snapshot);
    let link = w.home.path().join(".agents/skills/weft-demo");
    assert_eq!(std::fs::read_link(&link)?, root.join("weft-demo"));
    let raw: String = server
        .responses_requests()
        .iter()
        .map(|r| r.body.to_string())
        .collect();
    assert!(
        raw.contains(DESCRIPTION),
        "codex-acp was not offered the skill"
    );
    w.loom.shutdown().await;
    Ok(())
}
