//! MCP tools from a real stdio MCP server (the rmcp fixture binary) and one over
//! streamable HTTP, named mcp__<server>__<tool>; each one counts as changing things,
//! whatever its server says of it.

use serde_json::json;
use weft_protocol::{ToolKind, ToolStatus};
use weft_testkit::anthropic::when;
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{anthropic, assert_notice, driver, run_turn, Dirs};

#[path = "../../src/bin/mcp_fixture/server.rs"]
#[allow(dead_code)]
mod fixture;

fn script() -> Script {
    Script::new()
        .turn_when(
            when::user_text_contains("use the server"),
            Turn::new()
                .tool_use("e", "mcp__fx__echo", json!({"text": "weft-mcp-hello"}))
                .tool_use(
                    "w",
                    "mcp__fx__write_file",
                    json!({"name": "from-mcp.txt", "text": "written by mcp"}),
                ),
        )
        .default_reply(Turn::text_reply("used it"))
}

/// Dirs whose workspace names the stdio fixture server `fx`.
fn with_stdio_fixture() -> Dirs {
    let bin = env!("CARGO_BIN_EXE_weft-native-mcp-fixture");
    Dirs::with_file(
        ".weft/mcp.json",
        &json!({"servers": {"fx": {"command": bin}}}).to_string(),
    )
}

async fn check(dirs: &Dirs, server: &AnthropicServer, env: &[(String, String)]) {
    let (r, snap, _) = run_turn(&driver(), dirs.trusted_input(env, "use the server")).await;
    assert!(r.ok, "{r:?} {:?}", snap.notices);
    let reqs = server.messages_requests();
    let tools = reqs[0].tool_names();
    assert!(
        tools.contains(&"mcp__fx__echo".to_string())
            && tools.contains(&"mcp__fx__write_file".to_string()),
        "{tools:?}"
    );
    assert_eq!(
        reqs[1].last_tool_result("e").unwrap(),
        "fixture echo: weft-mcp-hello"
    );
    assert_eq!(reqs[1].last_tool_result("w").unwrap(), "wrote from-mcp.txt");
    let echo = snap.tool_calls.iter().find(|c| c.id == "e").unwrap();
    assert_eq!((echo.kind, echo.status), (ToolKind::Mcp, ToolStatus::Done));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_of_a_stdio_mcp_server() {
    let (server, env) = anthropic(script(), "auto").await;
    let dirs = with_stdio_fixture();
    check(&dirs, &server, &env).await;
    // The stdio server ran in the workspace.
    assert_eq!(
        std::fs::read_to_string(dirs.work().join("from-mcp.txt")).unwrap(),
        "written by mcp"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn every_mcp_tool_asks_even_one_its_server_calls_read_only() {
    let (_server, env) = anthropic(script(), "ask").await;
    let dirs = with_stdio_fixture();
    let sink = weft_testkit::sink::TestSink::new();
    sink.answer_with(|_| {
        Some(weft_protocol::InteractionResponse::select(
            weft_protocol::permission::DENY,
        ))
    });
    let (r, _) =
        weft_testkit::sink::run(&driver(), dirs.trusted_input(&env, "use the server"), &sink).await;
    assert!(r.ok);
    let asked: Vec<String> = sink
        .asked
        .lock()
        .iter()
        .filter_map(|i| i.tool_name.clone())
        .collect();
    // `echo` carries the server's readOnlyHint: a claim Weft does not take.
    assert_eq!(asked, ["mcp__fx__echo", "mcp__fx__write_file"]);
    assert!(!dirs.work().join("from-mcp.txt").exists());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tools_of_a_streamable_http_mcp_server() {
    use rmcp::transport::streamable_http_server::{
        session::local::LocalSessionManager, tower::StreamableHttpService,
    };
    use rmcp::transport::StreamableHttpServerConfig;
    let ct = tokio_util::sync::CancellationToken::new();
    let service: StreamableHttpService<fixture::Fixture, LocalSessionManager> =
        StreamableHttpService::new(
            || Ok(fixture::Fixture::default()),
            Default::default(),
            StreamableHttpServerConfig::default()
                .with_sse_keep_alive(None)
                .with_cancellation_token(ct.child_token()),
        );
    let router = axum::Router::new().nest_service("/mcp", service);
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let http = tokio::spawn({
        let ct = ct.clone();
        async move {
            let _ = axum::serve(listener, router)
                .with_graceful_shutdown(async move { ct.cancelled_owned().await })
                .await;
        }
    });
    let (server, env) = anthropic(script(), "auto").await;
    let dirs = Dirs::with_file(
        ".weft/mcp.json",
        &json!({"servers": {"fx": {"url": format!("http://{addr}/mcp")}}}).to_string(),
    );
    check(&dirs, &server, &env).await;
    ct.cancel();
    let _ = http.await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_broken_mcp_server_is_a_notice_not_a_failed_turn() {
    let (_server, env) = anthropic(
        Script::new().default_reply(Turn::text_reply("fine")),
        "auto",
    )
    .await;
    let dirs = Dirs::with_file(
        ".weft/mcp.json",
        r#"{"servers": {"gone": {"command": "/nonexistent/weft-mcp"}}}"#,
    );
    let (r, snap, _) = run_turn(&driver(), dirs.trusted_input(&env, "hi")).await;
    assert!(r.ok);
    assert_notice(&snap, "MCP server gone is not available");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_long_mcp_result_is_capped_like_every_other() {
    let long = "z".repeat(100_000);
    let script = Script::new()
        .turn(Turn::new().tool_use("e", "mcp__fx__echo", json!({ "text": long })))
        .default_reply(Turn::text_reply("read it"));
    let (server, env) = anthropic(script, "auto").await;
    let dirs = with_stdio_fixture();
    let (r, snap, _) = run_turn(&driver(), dirs.trusted_input(&env, "echo it")).await;
    assert!(r.ok, "{r:?}");
    let sent = server.messages_requests()[1].last_tool_result("e").unwrap();
    assert!(
        sent.len() <= weft_native::tools::OUTPUT_CAP
            && sent.starts_with("fixture echo: zzz")
            && sent.contains("output capped"),
        "{} bytes",
        sent.len()
    );
    let shown = snap.tool_calls.iter().find(|c| c.id == "e").unwrap();
    assert_eq!(shown.result.as_deref(), Some(sent.as_str()));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn listed_tools_are_the_ones_a_turn_offers_the_model() {
    use weft_kernel::AgentDriver;
    let (s, env) = anthropic(script(), "auto").await;
    let dirs = with_stdio_fixture();
    let d = driver();
    let listed = d.tools(&dirs.trusted_input(&env, "")).await.unwrap();
    let (r, _, _) = run_turn(&d, dirs.trusted_input(&env, "hello")).await;
    assert!(r.ok, "{r:?}");
    let mut offered = s.messages_requests()[0].tool_names();
    let mut names: Vec<String> = listed.iter().map(|t| t.name.clone()).collect();
    offered.sort();
    names.sort();
    assert_eq!(names, offered);
    assert!(names.contains(&"bash".to_string()), "{names:?}");
    let echo = listed.iter().find(|t| t.name == "mcp__fx__echo").unwrap();
    assert_eq!(echo.server.as_deref(), Some("fx"));
    assert!(listed
        .iter()
        .all(|t| t.name == "bash" || !t.description.is_empty() || t.server.is_some()));
}
