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

/// The live processes this test started (its descendants) whose environment carries
/// `mark` and whose command line names `agent`.
fn agent_pids(mark: &str, agent: &str) -> Vec<u32> {
    let needle = format!("WEFT_TEST_MARK={mark}");
    weft_proctree::descendants(std::process::id())
        .into_iter()
        .filter(|pid| {
            let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap_or_default();
            let zombie = stat
                .rsplit_once(')')
                .is_some_and(|(_, rest)| rest.trim_start().starts_with('Z'));
            let env = std::fs::read(format!("/proc/{pid}/environ")).unwrap_or_default();
            let cmd = String::from_utf8_lossy(
                &std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default(),
            )
            .replace('\0', " ");
            !zombie
                && env.split(|b| *b == 0).any(|kv| kv == needle.as_bytes())
                && cmd.contains(agent)
        })
        .collect()
}

fn cmdline(pid: u32) -> String {
    String::from_utf8_lossy(&std::fs::read(format!("/proc/{pid}/cmdline")).unwrap_or_default())
        .replace('\0', " ")
}

async fn eventually(mut check: impl FnMut() -> bool) -> bool {
    let deadline = tokio::time::Instant::now() + Duration::from_secs(20);
    while tokio::time::Instant::now() < deadline {
        if check() {
            return true;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    check()
}

/// A switch closes the process of the agent left (nothing else would: its idle close
/// goes through the new agent's driver), and a pending switch taken back leaves the
/// session exactly as it was: the next turn resumes claude's own session, on its
/// account. The real claude, on a Weft account whose key comes from a command.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_switch_closes_the_old_agent_and_taking_it_back_resumes_its_session_on_its_account() -> Res
{
    use weft_testkit::{AnthropicServer, Script, Turn};
    let bin =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../../.tools/agents/node_modules/.bin");
    let Ok(bin) = bin.canonicalize() else {
        if std::env::var("CI").is_ok_and(|v| v == "true" || v == "1") {
            panic!("CI=true and the agent CLIs are not installed in .tools/agents");
        }
        eprintln!("SKIPPED: the agent CLIs are not installed in .tools/agents");
        return Ok(());
    };
    let server = AnthropicServer::start(
        Script::new()
            .turn(Turn::text_reply("Noted: the word is quince."))
            .turn(Turn::text_reply("The word was quince.")),
    )
    .await?;
    let home = tempfile::tempdir()?;
    let work = tempfile::tempdir()?;
    std::fs::write(
        home.path().join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )?;
    let state = home.path().join(".weft");
    std::fs::create_dir_all(&state)?;
    let accounts = weft_accounts::Accounts::open(
        &state,
        &state.join("accounts.db"),
        Arc::new(weft_accounts::SecretServiceStore),
        weft_drivers::specs_in(&state),
    )?;
    let account = accounts.add(weft_protocol::AddAccountRequest {
        agent: "claude".into(),
        kind: "api-key".into(),
        label: "work".into(),
        base_url: Some(server.base_url()),
        secret: Some(weft_protocol::SecretInput::Command {
            command: "printf sk-work-account".into(),
        }),
        env: [
            ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1"),
            ("CLAUDE_CODE_MAX_RETRIES", "0"),
            ("IS_SANDBOX", "1"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect(),
        ..Default::default()
    })?;
    let mark = format!("switch-back-{}", std::process::id());
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // The agent's own login points nowhere: a turn that lost the account fails.
    let env: std::collections::BTreeMap<String, String> = [
        ("PATH", path.as_str()),
        ("HOME", &home.path().display().to_string()),
        ("ANTHROPIC_BASE_URL", "http://127.0.0.1:9"),
        ("ANTHROPIC_API_KEY", "sk-ambient"),
        ("CLAUDE_CODE_MAX_RETRIES", "0"),
        ("WEFT_TEST_MARK", &mark),
    ]
    .into_iter()
    .map(|(k, v)| (k.to_string(), v.to_string()))
    .collect();
    let caller = Caller {
        surface: "cli".into(),
        env: Some(Arc::new(ClientEnv(env))),
    };
    let loom = Loom::builder(&state)
        .drivers(
            weft_drivers::all()
                .into_iter()
                .filter(|d| d.id() == "claude" || d.id() == "codex"),
        )
        .accounts(Arc::new(accounts))
        .default_agent("claude")
        .in_memory()
        .open()?;
    let workdir = work.path().canonicalize()?.display().to_string();
    let first = loom
        .prompt_as(
            &caller,
            PromptRequest {
                prompt: "remember the word quince".into(),
                agent: Some("claude".into()),
                account: Some(account.id.clone()),
                workdir: Some(workdir),
                ..Default::default()
            },
        )
        .await?;
    let key = first.session_key.clone();
    let at = done(&loom, &key, &first.task_id).await?;
    assert_eq!(
        at.snapshot.text, "Noted: the word is quince.",
        "{:#?}",
        at.snapshot
    );
    let claude_session = at.snapshot.session_id.clone().ok_or("no claude session")?;
    // Claude's process stays for the session's next turn — past the ten seconds after
    // which tokio ends an idle blocking thread: the account's secret command once ran
    // under `block_in_place`, which left the spawning worker to end as one, and the
    // parent-death signal killed claude with it.
    let alive = agent_pids(&mark, "claude");
    assert!(!alive.is_empty(), "no claude process");
    tokio::time::sleep(Duration::from_secs(12)).await;
    assert_eq!(
        agent_pids(&mark, "claude"),
        alive,
        "claude died while its session was idle"
    );

    loom.switch_agent_as(&caller, &key, "codex").await?;
    assert!(
        eventually(|| agent_pids(&mark, "claude").is_empty()).await,
        "claude still runs after the switch: {:?}",
        agent_pids(&mark, "claude")
            .iter()
            .map(|p| cmdline(*p))
            .collect::<Vec<_>>()
    );
    let at = loom.get_snapshot(&key).await?;
    assert_eq!(at.snapshot.recorded_agent.as_deref(), Some("codex"));

    // Taken back before any turn ran on codex.
    loom.switch_agent_as(&caller, &key, "claude").await?;
    let at = loom.get_snapshot(&key).await?;
    assert_eq!(at.snapshot.recorded_agent, None);
    let sessions = loom.list_sessions(None).await?;
    assert_eq!(sessions[0].agent, "claude");

    let second = loom
        .prompt_as(
            &caller,
            PromptRequest {
                prompt: "what was the word?".into(),
                session_key: Some(key.clone()),
                ..Default::default()
            },
        )
        .await?;
    let at = done(&loom, &key, &second.task_id).await?;
    assert_eq!(
        at.snapshot.text, "The word was quince.",
        "{:#?}",
        at.snapshot
    );
    assert_eq!(at.snapshot.agent, "claude");
    assert_eq!(
        at.snapshot.session_id.as_deref(),
        Some(claude_session.as_str()),
        "claude's own session, resumed"
    );
    let live = agent_pids(&mark, "claude");
    let resumed = format!("--resume {claude_session}");
    assert!(
        live.iter().any(|p| cmdline(*p).contains(&resumed)),
        "no claude started with {resumed}: {:?}",
        live.iter().map(|p| cmdline(*p)).collect::<Vec<_>>()
    );
    let requests = server.recorder().requests();
    let last = requests
        .iter()
        .rev()
        .find(|r| r.body.to_string().contains("what was the word?"))
        .ok_or("the second prompt never reached the account's server")?;
    assert_eq!(last.header("x-api-key"), Some("sk-work-account"));
    assert!(
        last.body.to_string().contains("remember the word quince"),
        "the resumed conversation: {}",
        last.body
    );
    loom.shutdown().await;
    Ok(())
}
