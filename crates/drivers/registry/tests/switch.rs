//! A session moves from the real Claude to the real Codex between turns: one Weft
//! session (one key, one history), and Codex's first request carries the handover
//! with the words of the turn Claude answered.

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use weft_kernel::{Caller, Loom};
use weft_protocol::{ClientEnv, Phase, PromptRequest, SnapshotAt};

type Res<T = ()> = Result<T, Box<dyn std::error::Error>>;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_session_switched_from_claude_to_codex_keeps_one_history() -> Res {
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.tools/agents/node_modules/.bin");
    let Ok(bin) = bin.canonicalize() else {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("CI=true and the agent CLIs are not installed in .tools/agents");
        }
        eprintln!("SKIPPED: the agent CLIs are not installed in .tools/agents");
        return Ok(());
    };
    let claude = {
        use weft_testkit::{AnthropicServer, Script, Turn};
        AnthropicServer::start(
            Script::new().turn(Turn::text_reply("Noted: the word is marmalade.")),
        )
        .await?
    };
    let codex = {
        use weft_testkit::openai::{Script, Turn};
        weft_testkit::ResponsesServer::start(
            Script::new().turn(Turn::text_reply("Codex here, carrying on.")),
        )
        .await?
    };
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    std::fs::write(
        home.path().join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )?;
    let codex_home = home.path().join("codex");
    std::fs::create_dir_all(&codex_home)?;
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let env: std::collections::BTreeMap<String, String> = [
        ("PATH", path.as_str()),
        ("HOME", &home.path().display().to_string()),
        ("IS_SANDBOX", "1"),
        ("ANTHROPIC_BASE_URL", &claude.base_url()),
        ("ANTHROPIC_API_KEY", "sk-test"),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
        ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ("CODEX_HOME", &codex_home.display().to_string()),
        ("WEFT_CODEX_BASE_URL", &codex.v1_url()),
        ("WEFT_CODEX_API_KEY_ENV", "WEFT_TEST_OPENAI_KEY"),
        ("WEFT_TEST_OPENAI_KEY", "sk-test"),
        ("WEFT_CODEX_MAX_RETRIES", "0"),
        ("WEFT_CODEX_SANDBOX", "danger-full-access"),
        ("WEFT_CODEX_APPROVAL_POLICY", "never"),
        ("WEFT_CODEX_CONFIG", "model=\"mock-model\""),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let caller = Caller {
        surface: "cli".into(),
        env: Some(Arc::new(ClientEnv(env))),
    };
    let loom = Loom::builder(home.path().join(".weft"))
        .drivers(
            weft_drivers::all()
                .into_iter()
                .filter(|d| d.id() == "claude" || d.id() == "codex"),
        )
        .default_agent("claude")
        .in_memory()
        .open()?;
    let workdir = work.path().canonicalize()?.display().to_string();
    let first = loom
        .prompt_as(
            &caller,
            PromptRequest {
                prompt: "remember the word marmalade".into(),
                agent: Some("claude".into()),
                workdir: Some(workdir.clone()),
                ..Default::default()
            },
        )
        .await?;
    let key = first.session_key.clone();
    let at = done(&loom, &key, &first.task_id).await?;
    assert_eq!(
        at.snapshot.text, "Noted: the word is marmalade.",
        "{:#?}",
        at.snapshot
    );

    let second = loom
        .prompt_as(
            &caller,
            PromptRequest {
                prompt: "what was the word?".into(),
                agent: Some("codex".into()),
                session_key: Some(key.clone()),
                ..Default::default()
            },
        )
        .await?;
    assert_eq!(second.session_key, key, "the same Weft session");
    let at = done(&loom, &key, &second.task_id).await?;
    assert_eq!(at.snapshot.agent, "codex");
    assert!(
        at.snapshot.text.contains("Codex here"),
        "{:#?}",
        at.snapshot
    );
    let requests = codex.responses_requests();
    let first_request = requests
        .iter()
        .find(|r| r.all_text().contains("what was the word?"))
        .ok_or("codex never got the prompt")?;
    let body = first_request.body.to_string();
    assert!(body.contains("remember the word marmalade"), "{body}");
    assert!(body.contains("Noted: the word is marmalade."), "{body}");

    let history = loom.get_history(&key).await?;
    let agents: Vec<&str> = history.iter().map(|s| s.agent.as_str()).collect();
    assert_eq!(agents, ["claude", "codex"]);
    let sessions = loom.list_sessions(None).await?;
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].agent, "codex");
    loom.shutdown().await;
    Ok(())
}
