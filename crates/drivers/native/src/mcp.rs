//! MCP servers' tools, through the official Rust SDK (rmcp): servers over stdio (a
//! command) and streamable HTTP (a URL), configured in the workspace's
//! `.weft/mcp.json` or the global `<WEFT_HOME>/mcp.json` (the workspace's wins on a
//! name; `mcpServers` or `servers`), and those Weft's MCP plugin hands the turn:
//!
//! ```json
//! { "servers": {
//!     "github": { "command": "github-mcp", "args": ["stdio"], "env": {"GITHUB_TOKEN_FILE": "…"} },
//!     "docs":   { "url": "http://127.0.0.1:8931/mcp" } } }
//! ```
//!
//! Each tool becomes `mcp__<server>__<tool>`, mutating unless the server marks it
//! read-only, and goes through the same guard chain as every other call. Servers are
//! connected for a turn and closed when it ends, so none outlives its turn.

use std::collections::BTreeMap;
use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use rmcp::model::{CallToolRequestParams, ContentBlock};
use rmcp::service::{RoleClient, RunningService};
use rmcp::ServiceExt;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use crate::tools::{Tool, ToolCx, ToolOutput, ToolRef};

/// One server's settings.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct ServerEntry {
    /// The program of a stdio server.
    pub command: Option<String>,
    /// Its arguments.
    pub args: Vec<String>,
    /// Extra environment for it.
    pub env: BTreeMap<String, String>,
    /// The URL of a streamable HTTP server.
    pub url: Option<String>,
}

/// The configured servers (Weft's one parser, [`weft_kernel::mcp`]: the workspace's
/// over the global ones), then those the turn's plugins add; and one line per file or
/// server skipped.
pub fn servers(
    workdir: &Path,
    home: &Path,
    workspace_trusted: bool,
    extra: &[weft_kernel::mcp::McpServer],
) -> (BTreeMap<String, ServerEntry>, Vec<String>) {
    let cfg = weft_kernel::mcp::load(home, Some(workdir), workspace_trusted);
    let entry = |s: &weft_kernel::mcp::McpServer| ServerEntry {
        command: s.command.clone(),
        args: s.args.clone(),
        env: s.env.clone(),
        url: s.url.clone(),
    };
    let mut all: BTreeMap<String, ServerEntry> = cfg
        .servers
        .iter()
        .map(|(k, s)| (k.clone(), entry(s)))
        .collect();
    for s in extra {
        all.entry(s.name.clone()).or_insert_with(|| entry(s));
    }
    (all, cfg.problems)
}

type Client = RunningService<RoleClient, ()>;

/// The servers connected for one turn.
#[derive(Default)]
pub struct Connections {
    clients: Vec<Arc<Client>>,
    /// How each server's connection went, for the snapshot's `mcpServers`.
    pub statuses: Vec<weft_protocol::McpServerStatus>,
}

impl Connections {
    /// Closes every server (stdio children end with their connection).
    pub async fn close(self) {
        for c in self.clients {
            if let Ok(c) = Arc::try_unwrap(c) {
                let _ = c.cancel().await;
            }
        }
    }
}

async fn connect(
    entry: &ServerEntry,
    workdir: &Path,
    env: &[(String, String)],
) -> Result<Client, String> {
    if let Some(url) = &entry.url {
        // reqwest's client needs the process's crypto provider installed first.
        crate::model::http().map_err(|e| e.to_string())?;
        let transport = rmcp::transport::StreamableHttpClientTransport::from_uri(url.clone());
        return ().serve(transport).await.map_err(|e| format!("cannot reach {url}: {e}"));
    }
    let Some(command) = &entry.command else {
        return Err("it names neither a command nor a url".into());
    };
    let mut cmd = tokio::process::Command::new(command);
    cmd.args(&entry.args)
        .current_dir(workdir)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .envs(&entry.env)
        .stderr(std::process::Stdio::null());
    let transport = rmcp::transport::TokioChildProcess::new(cmd)
        .map_err(|e| format!("cannot start {command}: {e}"))?;
    ().serve(transport)
        .await
        .map_err(|e| format!("{command} did not start as an MCP server: {e}"))
}

/// Connects the servers `only` names (all when None) and returns their tools, and one
/// problem line per server that could not be used.
pub async fn tools(
    workdir: &Path,
    home: &Path,
    workspace_trusted: bool,
    only: Option<&[String]>,
    env: &[(String, String)],
    extra: &[weft_kernel::mcp::McpServer],
) -> (Connections, Vec<ToolRef>, Vec<String>) {
    let mut conns = Connections::default();
    let mut tools: Vec<ToolRef> = Vec::new();
    let (all, mut problems) = servers(workdir, home, workspace_trusted, extra);
    for (name, entry) in all {
        if only.is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let client = match connect(&entry, workdir, env).await {
            Ok(c) => Arc::new(c),
            Err(e) => {
                problems.push(format!("MCP server {name} is not available: {e}"));
                conns.statuses.push(weft_protocol::McpServerStatus {
                    name: name.clone(),
                    status: weft_protocol::McpState::Failed,
                    error: Some(e.to_string()),
                });
                continue;
            }
        };
        conns.statuses.push(weft_protocol::McpServerStatus {
            name: name.clone(),
            status: weft_protocol::McpState::Connected,
            error: None,
        });
        match client.list_all_tools().await {
            Ok(list) => {
                for t in list {
                    tools.push(Arc::new(McpTool {
                        full: format!("mcp__{name}__{}", t.name),
                        tool: t.name.to_string(),
                        description: t.description.as_deref().unwrap_or_default().to_string(),
                        schema: Value::Object((*t.input_schema).clone()),
                        client: client.clone(),
                    }));
                }
            }
            Err(e) => problems.push(format!("MCP server {name} listed no tools: {e}")),
        }
        conns.clients.push(client);
    }
    (conns, tools, problems)
}

struct McpTool {
    full: String,
    tool: String,
    description: String,
    schema: Value,
    client: Arc<Client>,
}

#[async_trait]
impl Tool for McpTool {
    fn name(&self) -> &str {
        &self.full
    }
    fn description(&self) -> &str {
        &self.description
    }
    fn schema(&self) -> Value {
        self.schema.clone()
    }
    fn read_only(&self) -> bool {
        // A server's `readOnlyHint` is its own claim about itself: only Weft marks a
        // tool read-only, so every MCP tool passes plan mode and the permission step as
        // one that changes things.
        false
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
        if let Some(refusal) = crate::tools::unusable_args(&self.full, input) {
            return refusal;
        }
        let Some(args) = input.as_object() else {
            return ToolOutput::error(format!(
                "the arguments of {} are not a JSON object",
                self.full
            ));
        };
        let call = self
            .client
            .call_tool(CallToolRequestParams::new(self.tool.clone()).with_arguments(args.clone()));
        let result = tokio::select! {
            r = call => r,
            _ = cx.cancel.cancelled() => return ToolOutput::error("stopped"),
        };
        match result {
            Ok(r) => {
                let mut text: Vec<String> = r
                    .content
                    .iter()
                    .map(|c| match c {
                        ContentBlock::Text(t) => t.text.clone(),
                        other => serde_json::to_string(other).unwrap_or_default(),
                    })
                    .collect();
                if text.is_empty() {
                    if let Some(s) = &r.structured_content {
                        text.push(s.to_string());
                    }
                }
                let content = text.join("\n");
                if r.is_error == Some(true) {
                    ToolOutput::error(content)
                } else {
                    ToolOutput::ok(content)
                }
            }
            Err(e) => ToolOutput::error(format!("{} failed: {e}", self.full)),
        }
    }
}
