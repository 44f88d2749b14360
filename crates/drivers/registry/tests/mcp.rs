//! One MCP server configured once in Weft (`$WEFT_HOME/mcp.json`) is used by the real
//! Claude, Codex and Gemini CLIs and by Weft's own agent, each against its scripted
//! model server: the model calls the server's `record` tool and the server (a small
//! stdio one, tests/fixtures/record_mcp.py) writes down the call. A server that fails
//! to start shows as failed in the snapshot with what it wrote to stderr; a secret a
//! server's env names reaches the server and no file or argument.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use common::{agents_bin, claude_server, driver, fixture, last_text, run, run_with, Res, Setup};
use serde_json::{json, Value};
use weft_kernel::Plugins;
use weft_protocol::{McpState, UniversalSnapshot};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn one_mcp_server_configured_once_is_called_by_every_agent() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;

    // Claude: --mcp-config, a private file that is gone after the turn.
    {
        let server = claude_server("toolu_m1", "from claude").await?;
        let (r, snap) = run(
            driver("claude")?,
            s.agent_input("claude", &server.base_url())?,
        )
        .await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        let calls = s.calls();
        assert_eq!(
            last_text(&s),
            Some(json!("from claude")),
            "{calls:?} {snap:#?}"
        );
        assert_eq!(calls[0]["who"], "configured-in-weft");
        let rec = snap.mcp_servers.iter().find(|m| m.name == "rec");
        assert_eq!(
            rec.map(|m| m.status),
            Some(McpState::Connected),
            "{:?}",
            snap.mcp_servers
        );
        let left: Vec<_> = std::fs::read_dir(s.weft.join("run/mcp"))?
            .flatten()
            .filter(|e| e.path().is_file())
            .collect();
        assert!(
            left.is_empty(),
            "the --mcp-config file is removed: {left:?}"
        );
    }

    // Codex: -c mcp_servers.rec.… (its env named by env_vars, in the spawn's env).
    {
        use weft_testkit::openai::{when, Script, Turn};
        use weft_testkit::ResponsesServer;
        let script = Script::new()
            .turn_when(
                when::user_text_contains("record it"),
                Turn::new().namespaced_call(
                    "call_m1",
                    "mcp__rec",
                    "record",
                    json!({"text": "from codex"}),
                ),
            )
            .turn_when(
                when::tool_output_for("call_m1"),
                Turn::text_reply("Recorded."),
            );
        let server = ResponsesServer::start(script).await?;
        let (r, snap) = run(driver("codex")?, s.agent_input("codex", &server.v1_url())?).await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        let calls = s.calls();
        assert_eq!(
            last_text(&s),
            Some(json!("from codex")),
            "{calls:?} {snap:#?}"
        );
        assert_eq!(
            calls.last().map(|c| c["who"].clone()),
            Some(json!("configured-in-weft"))
        );
        let rec = snap.mcp_servers.iter().find(|m| m.name == "rec");
        assert_eq!(
            rec.map(|m| m.status),
            Some(McpState::Connected),
            "{:?}",
            snap.mcp_servers
        );
    }

    // Gemini: a system-defaults settings file; the user's own settings untouched.
    {
        use weft_testkit::gemini::{when, Script, Turn};
        use weft_testkit::GeminiServer;
        let gdir = s.home.path().join(".gemini");
        std::fs::create_dir_all(&gdir)?;
        let user_settings = json!({
            "security": {"auth": {"selectedType": "gemini-api-key"}},
            "privacy": {"usageStatisticsEnabled": false}
        })
        .to_string();
        std::fs::write(gdir.join("settings.json"), &user_settings)?;
        let script = Script::new()
            .rule(
                when::function_response_for(GEMINI_TOOL),
                Turn::text_reply("Recorded."),
            )
            .turn(Turn::new().function_call(GEMINI_TOOL, json!({"text": "from gemini"})));
        let server = GeminiServer::start(script).await?;
        let (r, snap) = run(
            driver("gemini")?,
            s.agent_input("gemini", &server.base_url())?,
        )
        .await?;
        let tools: Vec<Vec<String>> = server
            .generate_requests()
            .iter()
            .map(|q| q.tool_names())
            .collect();
        assert!(r.ok, "{r:?} {snap:#?} {tools:?}");
        let calls = s.calls();
        assert_eq!(
            last_text(&s),
            Some(json!("from gemini")),
            "{calls:?} {tools:?} {snap:#?}"
        );
        assert_eq!(
            calls.last().map(|c| c["who"].clone()),
            Some(json!("configured-in-weft"))
        );
        assert_eq!(
            std::fs::read_to_string(gdir.join("settings.json"))?,
            user_settings
        );
    }

    // Weft's own agent: rmcp, from AgentTurnInput::mcp_servers.
    {
        let server = claude_server("toolu_n1", "from native").await?;
        let (r, snap) = run(
            driver("native")?,
            s.agent_input("native", &server.base_url())?,
        )
        .await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        assert_eq!(
            last_text(&s),
            Some(json!("from native")),
            "{:?} {snap:#?}",
            s.calls()
        );
        let rec = snap.mcp_servers.iter().find(|m| m.name == "rec");
        assert_eq!(
            rec.map(|m| m.status),
            Some(McpState::Connected),
            "{:?}",
            snap.mcp_servers
        );
    }
    assert_eq!(s.calls().len(), 4, "{:?}", s.calls());
    Ok(())
}

/// How Gemini names it.
const GEMINI_TOOL: &str = "mcp_rec_record";

/// ACP: the same server through `session/new.mcpServers` (claude-agent-acp).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_acp_agent_gets_the_server_in_session_new() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    let server = claude_server("toolu_a1", "from claude-acp").await?;
    let (r, snap) = run(
        driver("claude-acp")?,
        s.agent_input("claude-acp", &server.base_url())?,
    )
    .await?;
    assert!(r.ok, "{r:?} {snap:#?}");
    assert_eq!(
        last_text(&s),
        Some(json!("from claude-acp")),
        "{:?} {snap:#?}",
        s.calls()
    );
    Ok(())
}

/// A server that fails to start: the turn still runs, and the snapshot shows the
/// server failed with what it wrote to stderr — for Claude and for Codex.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_server_that_fails_to_start_shows_failed_with_its_stderr() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    s.configure(json!({"bad": {"command": "python3", "args": [fixture(), "--fail"]}}))?;
    let failed = |snap: &UniversalSnapshot| {
        let bad = snap.mcp_servers.iter().find(|m| m.name == "bad");
        assert_eq!(
            bad.map(|m| m.status),
            Some(McpState::Failed),
            "{:?}",
            snap.mcp_servers
        );
        let error = bad.and_then(|m| m.error.clone()).unwrap_or_default();
        assert!(
            error.contains("record_mcp: refusing to start (--fail)"),
            "the server's stderr is in its status: {error}"
        );
        // And the session says what it runs without, for as long as that holds.
        let lasting = snap.degraded.iter().find(|d| d.capability == "mcp:bad");
        assert!(
            lasting.is_some_and(|d| d.reason.contains("refusing to start (--fail)")),
            "{:?}",
            snap.degraded
        );
    };
    {
        use weft_testkit::{AnthropicServer, Script, Turn};
        let server = AnthropicServer::start(Script::new().turn(Turn::text_reply("Fine."))).await?;
        let (r, snap) = run(
            driver("claude")?,
            s.agent_input("claude", &server.base_url())?,
        )
        .await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        assert_eq!(snap.text, "Fine.");
        assert!(
            snap.notices.iter().any(|n| n == "MCP server bad: failed"),
            "{:?}",
            snap.notices
        );
        failed(&snap);
    }
    {
        use weft_testkit::openai::{Script, Turn};
        let server =
            weft_testkit::ResponsesServer::start(Script::new().turn(Turn::text_reply("Fine.")))
                .await?;
        let (r, snap) = run(driver("codex")?, s.agent_input("codex", &server.v1_url())?).await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        failed(&snap);
    }
    // Weft's own agent connects it itself: failed, with rmcp's reason.
    {
        use weft_testkit::{AnthropicServer, Script, Turn};
        let server = AnthropicServer::start(Script::new().turn(Turn::text_reply("Fine."))).await?;
        let (r, snap) = run(
            driver("native")?,
            s.agent_input("native", &server.base_url())?,
        )
        .await?;
        assert!(r.ok, "{r:?} {snap:#?}");
        let bad = snap.mcp_servers.iter().find(|m| m.name == "bad");
        assert_eq!(
            bad.map(|m| m.status),
            Some(McpState::Failed),
            "{:?}",
            snap.mcp_servers
        );
        assert!(bad
            .and_then(|m| m.error.as_deref())
            .is_some_and(|e| !e.is_empty()));
    }
    Ok(())
}

/// Every file under `dir` whose bytes contain `needle` (but `skip`).
fn files_containing(dir: &Path, needle: &[u8], skip: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return out;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p == skip {
            continue;
        }
        if p.is_dir() && !p.is_symlink() {
            out.extend(files_containing(&p, needle, skip));
        } else if std::fs::read(&p).is_ok_and(|b| b.windows(needle.len()).any(|w| w == needle)) {
            out.push(p);
        }
    }
    out
}

/// A server's env names a secret: the server gets the value; no file Weft or the agent
/// wrote, and no argument, holds it. A server the session turns off is not offered.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_secret_reaches_the_server_and_no_file_and_a_disabled_server_is_left_out() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    const VALUE: &str = "sekrit-7f3a9c-value";
    s.configure(json!({
        "rec": {"command": "python3", "args": [fixture(), s.record],
                "env": {"WEFT_MCP_WHO": "${secret:who}"}},
        "off": {"command": "python3", "args": [fixture(), "--fail"]}
    }))?;
    weft_kernel::mcp::set_session_overrides(
        &s.weft,
        "claude:mcp-e2e",
        &BTreeMap::from([("off".to_string(), false)]),
    )?;
    let secrets: Arc<weft_drivers::SecretLookup> =
        Arc::new(|name: &str| Ok((name == "who").then(|| VALUE.to_string())));
    let server = claude_server("toolu_s1", "with a secret").await?;
    let mut input = s.agent_input("claude", &server.base_url())?;
    let plugins = Plugins::new(vec![Arc::new(weft_drivers::McpPlugin::with_secrets(
        secrets.clone(),
    ))]);
    {
        // What the agent is started with: the argv holds no value.
        let mut probe = input.clone();
        let held = plugins.apply("claude", &mut probe, true)?;
        assert!(
            !probe.extra_args.join(" ").contains(VALUE),
            "{:?}",
            probe.extra_args
        );
        let config = probe
            .extra_args
            .iter()
            .skip_while(|a| *a != "--mcp-config")
            .nth(1)
            .cloned()
            .unwrap_or_default();
        let text = std::fs::read_to_string(&config)?;
        assert!(
            !text.contains(VALUE) && text.contains("rec") && !text.contains("\"off\""),
            "{text}"
        );
        drop(held);
    }
    input.session_key = "claude:mcp-e2e".into();
    let (r, snap) = run_with(
        vec![Arc::new(weft_drivers::McpPlugin::with_secrets(secrets))],
        driver("claude")?,
        input,
    )
    .await?;
    assert!(r.ok, "{r:?} {snap:#?}");
    assert_eq!(
        s.calls().last().map(|c| c["who"].clone()),
        Some(json!(VALUE)),
        "{:?}",
        s.calls()
    );
    assert!(
        snap.mcp_servers.iter().all(|m| m.name != "off"),
        "{:?}",
        snap.mcp_servers
    );
    let found = files_containing(s.home.path(), VALUE.as_bytes(), &s.record);
    assert!(found.is_empty(), "the secret is in {found:?}");
    Ok(())
}

/// Codex's script: call `record` once, then say so whatever the call got.
async fn codex_record_server(text: &str) -> Res<weft_testkit::ResponsesServer> {
    use weft_testkit::openai::{when, Script, Turn};
    let script = Script::new()
        .turn_when(
            when::user_text_contains("record it"),
            Turn::new().namespaced_call("call_a1", "mcp__rec", "record", json!({ "text": text })),
        )
        .turn_when(when::tool_output_for("call_a1"), Turn::text_reply("Done."));
    Ok(weft_testkit::ResponsesServer::start(script).await?)
}

/// Codex asks before an MCP tool runs (its default approval policy): the request is a
/// Weft permission for `mcp__rec__record` with the call's arguments, and the answer
/// decides: allowed, the server records the call; denied, it never runs.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_asks_before_an_mcp_tool_runs_and_the_answer_decides() -> Res {
    use std::sync::Mutex;
    use weft_kernel::TurnCallbacks;
    use weft_protocol::{permission, InteractionKind, InteractionResponse};
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    for (answer, text) in [(permission::DENY, "denied"), (permission::ALLOW, "allowed")] {
        let server = codex_record_server(text).await?;
        let mut input = s.agent_input("codex", &server.v1_url())?;
        input.env.retain(|(k, _)| k != "WEFT_CODEX_APPROVAL_POLICY");
        let driver = driver("codex")?;
        let plugins = Plugins::new(vec![Arc::new(weft_drivers::McpPlugin::default())]);
        let held = plugins.apply(driver.id(), &mut input, true)?;
        let asked = Arc::new(Mutex::new(Vec::new()));
        let seen = asked.clone();
        let callbacks = TurnCallbacks {
            on_interaction: Box::new(move |i| {
                if let Ok(mut v) = seen.lock() {
                    v.push(i.clone());
                }
                InteractionResponse::select(answer)
            }),
            ..Default::default()
        };
        let (r, snap) = tokio::time::timeout(
            std::time::Duration::from_secs(120),
            weft_kernel::run_turn(driver.clone(), input, callbacks),
        )
        .await?;
        drop(held);
        driver.shutdown().await;
        let asked = asked.lock().map(|v| v.clone()).unwrap_or_default();
        assert!(r.ok, "{r:?} {snap:#?}");
        let [one] = asked.as_slice() else {
            panic!("one permission asked, got {asked:#?} {snap:#?}");
        };
        assert_eq!(one.kind, InteractionKind::Permission, "{one:#?}");
        assert_eq!(
            one.tool_name.as_deref(),
            Some("mcp__rec__record"),
            "{one:#?}"
        );
        assert_eq!(
            one.tool_input.as_ref().map(|i| i["text"].clone()),
            Some(json!(text)),
            "{one:#?}"
        );
        let values: Vec<&str> = one.questions[0]
            .choices
            .iter()
            .map(|c| c.value.as_str())
            .collect();
        assert!(
            values.contains(&permission::ALLOW) && values.contains(&permission::DENY),
            "{values:?}"
        );
        let recorded: Vec<Value> = s
            .calls()
            .into_iter()
            .filter(|c| c["text"] == text)
            .collect();
        assert_eq!(
            recorded.len(),
            usize::from(answer == permission::ALLOW),
            "{recorded:?} {snap:#?}"
        );
    }
    Ok(())
}

/// "Allow for this session" on codex's MCP approval: codex remembers it, so the next
/// call of the same tool in the session runs without asking again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_remembers_an_mcp_tool_allowed_for_the_session() -> Res {
    use std::sync::Mutex;
    use weft_kernel::TurnCallbacks;
    use weft_protocol::{permission, InteractionResponse};
    use weft_testkit::openai::{when, Script, Turn};
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    let call = |id: &str, text: &str| {
        Turn::new().namespaced_call(id, "mcp__rec", "record", json!({ "text": text }))
    };
    let script = Script::new()
        .turn_when(
            when::user_text_contains("record twice"),
            call("call_s1", "first"),
        )
        .turn_when(when::tool_output_for("call_s1"), call("call_s2", "second"))
        .turn_when(when::tool_output_for("call_s2"), Turn::text_reply("Both."));
    let server = weft_testkit::ResponsesServer::start(script).await?;
    let mut input = s.agent_input("codex", &server.v1_url())?;
    input.prompt = "record twice".into();
    input.env.retain(|(k, _)| k != "WEFT_CODEX_APPROVAL_POLICY");
    let driver = driver("codex")?;
    let plugins = Plugins::new(vec![Arc::new(weft_drivers::McpPlugin::default())]);
    let held = plugins.apply(driver.id(), &mut input, true)?;
    let asked = Arc::new(Mutex::new(0usize));
    let seen = asked.clone();
    let callbacks = TurnCallbacks {
        on_interaction: Box::new(move |_| {
            if let Ok(mut n) = seen.lock() {
                *n += 1;
            }
            InteractionResponse::select(permission::ALLOW_SESSION)
        }),
        ..Default::default()
    };
    let (r, snap) = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        weft_kernel::run_turn(driver.clone(), input, callbacks),
    )
    .await?;
    drop(held);
    driver.shutdown().await;
    assert!(r.ok, "{r:?} {snap:#?}");
    let texts: Vec<Value> = s.calls().into_iter().map(|c| c["text"].clone()).collect();
    assert_eq!(texts, [json!("first"), json!("second")], "{snap:#?}");
    assert_eq!(*asked.lock().map_err(|e| e.to_string())?, 1, "asked once");
    Ok(())
}

/// An MCP server's own form through codex (`elicitation/create` from the server,
/// `mcpServer/elicitation/request` from codex): each field a question (the array one
/// taking several choices, the string one free text), the answers the form's content.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_mcp_servers_form_through_codex_is_answered_as_asked() -> Res {
    use std::sync::Mutex;
    use weft_kernel::TurnCallbacks;
    use weft_protocol::{permission, InteractionKind, InteractionResponse};
    use weft_testkit::openai::{when, Script, Turn};
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    let script = Script::new()
        .turn_when(
            when::user_text_contains("order"),
            Turn::new().namespaced_call("call_o", "mcp__rec", "order", json!({})),
        )
        .turn_when(
            when::tool_output_for("call_o"),
            Turn::text_reply("Ordered."),
        );
    let server = weft_testkit::ResponsesServer::start(script).await?;
    let mut input = s.agent_input("codex", &server.v1_url())?;
    input.prompt = "order a pizza".into();
    input.env.retain(|(k, _)| k != "WEFT_CODEX_APPROVAL_POLICY");
    let driver = driver("codex")?;
    let plugins = Plugins::new(vec![Arc::new(weft_drivers::McpPlugin::default())]);
    let held = plugins.apply(driver.id(), &mut input, true)?;
    let asked = Arc::new(Mutex::new(Vec::new()));
    let seen = asked.clone();
    let callbacks = TurnCallbacks {
        on_interaction: Box::new(move |i| {
            if let Ok(mut v) = seen.lock() {
                v.push(i.clone());
            }
            if i.kind == InteractionKind::Permission {
                return InteractionResponse::select(permission::ALLOW);
            }
            let mut r = InteractionResponse::select("small");
            r.value = None;
            r.selected
                .insert("toppings".into(), vec!["cheese".into(), "basil".into()]);
            r.answers.insert("size".into(), "large".into());
            r.answers.insert("note".into(), "thin crust".into());
            r
        }),
        ..Default::default()
    };
    let (r, snap) = tokio::time::timeout(
        std::time::Duration::from_secs(120),
        weft_kernel::run_turn(driver.clone(), input, callbacks),
    )
    .await?;
    drop(held);
    driver.shutdown().await;
    let asked = asked.lock().map(|v| v.clone()).unwrap_or_default();
    assert!(r.ok, "{r:?} {snap:#?}");
    let form = asked
        .iter()
        .find(|i| i.kind == InteractionKind::UserInput)
        .ok_or_else(|| format!("no form asked: {asked:#?} {snap:#?}"))?;
    let top = form.questions.iter().find(|q| q.id == "toppings");
    assert!(top.is_some_and(|q| q.multiple), "{form:#?}");
    let note = form.questions.iter().find(|q| q.id == "note");
    assert!(note.is_some_and(|q| q.free_text), "{form:#?}");
    let got = s
        .calls()
        .into_iter()
        .find_map(|c| c.get("elicited").cloned())
        .ok_or_else(|| format!("the server got no answer: {:?}", s.calls()))?;
    assert_eq!(got["action"], "accept", "{got}");
    assert_eq!(
        got["content"],
        json!({"toppings": ["cheese", "basil"], "size": "large", "note": "thin crust"}),
        "{got}"
    );
    Ok(())
}

/// `listTools` for Codex: the real codex app-server, given Weft's MCP server as a
/// turn's spawn gives it, lists that server's tools, named as its approvals and Weft's
/// rules name them; asking makes no thread (nothing joins codex's own history).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn codex_lists_the_tools_of_the_mcp_servers_weft_gives_it() -> Res {
    let Some(bin) = agents_bin() else {
        return Ok(());
    };
    let s = Setup::new(&bin)?;
    // Nothing is asked of a model: the address only has to be well formed.
    let mut input = s.agent_input("codex", "http://127.0.0.1:9/v1")?;
    let plugins = Plugins::new(vec![Arc::new(weft_drivers::McpPlugin::default())]);
    let held = plugins.apply("codex", &mut input, true)?;
    let driver = driver("codex")?;
    let listed =
        tokio::time::timeout(std::time::Duration::from_secs(120), driver.tools(&input)).await?;
    drop(held);
    let tools = listed?;
    let record = tools
        .iter()
        .find(|t| t.name == "mcp__rec__record")
        .unwrap_or_else(|| panic!("no mcp__rec__record in {tools:#?}"));
    assert_eq!(record.server.as_deref(), Some("rec"));
    assert_eq!(record.description, "Record a line of text");
    assert!(
        tools.iter().any(|t| t.name == "mcp__rec__order"),
        "{tools:#?}"
    );
    let sessions = s.home.path().join("codex/sessions");
    let rollouts = walk(&sessions);
    assert!(rollouts.is_empty(), "listing made a thread: {rollouts:?}");
    Ok(())
}

fn walk(dir: &Path) -> Vec<PathBuf> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    entries
        .flatten()
        .flat_map(|e| {
            let p = e.path();
            if p.is_dir() {
                walk(&p)
            } else {
                vec![p]
            }
        })
        .collect()
}

/// An ACP agent's tools cannot be listed (the protocol has no message for it): the
/// listing says so instead of reading as "no tools".
#[tokio::test]
async fn an_acp_agents_tools_listing_says_why_there_is_none() -> Res {
    for id in ["gemini", "claude-acp"] {
        let input = weft_kernel::AgentTurnInput::default();
        let Err(why) = driver(id)?.tools(&input).await else {
            panic!("{id} listed tools");
        };
        assert!(
            why.contains("ACP") && why.contains("weft mcp list"),
            "{why}"
        );
    }
    Ok(())
}
