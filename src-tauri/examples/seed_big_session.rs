//! Writes a session with one finished turn of N tool calls (default 10,000) into the
//! store at `$WEFT_HOME`, through the real kernel, for scripts/bench-app.sh.
//!
//!     WEFT_HOME=/tmp/h cargo run --release -p weft-app --example seed_big_session -- DIR [N] [SESSIONS]
//!
//! With SESSIONS, that many more small sessions (one call each) are written in DIR too,
//! for a sidebar of thousands (scripts/e2e-app.sh; scripts/bench-app.sh, which also
//! writes one to switch from in its first home).
//!
//! The seeding driver registers as `echo`, so the app opens the session with the real
//! echo agent and can stream a new turn into it. Prints the session key.

use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use serde_json::json;
use weft_kernel::{AgentDriver, AgentTurnInput, DriverContext, DriverResult, Loom};
use weft_protocol::{
    AgentInfo, Capabilities, DriverEvent, Phase, PromptRequest, ToolCall, ToolKind, ToolStatus,
    Usage,
};

/// Runs as many tool calls as the prompt's leading number says (else `.0`).
struct ManyTools(usize);

const KINDS: [(ToolKind, &str); 5] = [
    (ToolKind::Read, "Read"),
    (ToolKind::Shell, "Bash"),
    (ToolKind::Search, "Grep"),
    (ToolKind::Edit, "Edit"),
    (ToolKind::Fetch, "WebFetch"),
];

#[async_trait]
impl AgentDriver for ManyTools {
    fn id(&self) -> &str {
        "echo"
    }

    fn capabilities(&self) -> Capabilities {
        Capabilities::default()
    }

    async fn info(&self) -> AgentInfo {
        AgentInfo {
            id: "echo".into(),
            name: "seed".into(),
            installed: true,
            version: None,
            capabilities: Capabilities::default(),
            problem: None,
            facts: Default::default(),
        }
    }

    async fn run(&self, input: AgentTurnInput, ctx: DriverContext) -> DriverResult {
        let n = input
            .prompt
            .split_whitespace()
            .next()
            .and_then(|w| w.parse().ok())
            .unwrap_or(self.0);
        ctx.emit(DriverEvent::Session {
            session_id: format!("seeded-{}", input.task_id),
            model: Some("echo-1".into()),
        });
        for i in 0..n {
            let (kind, name) = KINDS[i % KINDS.len()];
            let mut call = ToolCall {
                id: format!("call-{i}"),
                name: name.into(),
                summary: format!("{name} src/module_{}/file_{i}.rs", i % 97),
                input: json!({ "file_path": format!("src/module_{}/file_{i}.rs", i % 97), "old_string": "let a = 1;", "new_string": "let a = 2;" }),
                result: None,
                status: ToolStatus::Running,
                kind,
                parent_id: None,
                changes: Vec::new(),
            };
            ctx.emit(DriverEvent::Tool { call: call.clone() });
            call.status = if i % 50 == 49 {
                ToolStatus::Failed
            } else {
                ToolStatus::Done
            };
            call.result = Some(format!("line 1 of result {i}\nline 2\nline 3"));
            ctx.emit(DriverEvent::Tool { call });
        }
        ctx.emit(DriverEvent::Text {
            delta: format!("Ran {n} tool calls."),
        });
        ctx.emit(DriverEvent::Usage {
            usage: Usage {
                input_tokens: Some(150_000),
                output_tokens: Some(40_000),
                context_percent: Some(75.0),
                ..Default::default()
            },
        });
        DriverResult::ok()
    }
}

#[tokio::main]
async fn main() -> anyhow::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let workdir = args.first().cloned().unwrap_or_else(|| ".".into());
    let n: usize = args.get(1).and_then(|s| s.parse().ok()).unwrap_or(10_000);
    let sessions: usize = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(0);
    let state_dir = weft_kernel::state::global_state_dir();
    std::fs::create_dir_all(&state_dir)?;
    let loom = Loom::builder(&state_dir)
        .driver(Arc::new(ManyTools(n)))
        .store(weft_store_port::open(&state_dir.join("weft.db"))?)
        .open()?;
    let mut small = Vec::new();
    for i in 0..sessions {
        let accepted = loom
            .prompt(PromptRequest {
                prompt: format!("1 tool call, small session {i}"),
                agent: Some("echo".into()),
                workdir: Some(workdir.clone()),
                ..Default::default()
            })
            .await?;
        small.push(accepted.session_key);
    }
    let accepted = loom
        .prompt(PromptRequest {
            prompt: format!("{n} tool calls"),
            agent: Some("echo".into()),
            workdir: Some(workdir),
            ..Default::default()
        })
        .await?;
    for key in small.iter().chain([&accepted.session_key]) {
        loop {
            let at = loom.get_snapshot(key).await?;
            if at.snapshot.phase == Phase::Done {
                break;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    }
    // The store writes on its own thread; history proves the turn is on disk.
    let history = loom.get_history(&accepted.session_key).await?;
    let calls = history.last().map_or(0, |t| t.tool_calls.len());
    anyhow::ensure!(calls == n, "stored {calls} calls, expected {n}");
    loom.shutdown().await;
    println!("{}", accepted.session_key);
    Ok(())
}
