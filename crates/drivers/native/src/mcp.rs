//! MCP servers' tools, through the official Rust SDK (rmcp): servers over stdio (a
//! command) and streamable HTTP (a URL), configured in the workspace's
//! `.weft/mcp.json` or the global `<WEFT_HOME>/mcp.json` (the workspace's wins on a
//! name):
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

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct McpFile {
    servers: BTreeMap<String, ServerEntry>,
}

/// The configured servers: the workspace's over the global ones.
pub fn servers(workdir: &Path, home: &Path) -> Result<BTreeMap<String, ServerEntry>, String> {
    let mut all = BTreeMap::new();
    for path in [
        home.join("mcp.json"),
        workdir.join(".weft").join("mcp.json"),
    ] {
        let Ok(text) = std::fs::read_to_string(&path) else {
            continue;
        };
        let file: McpFile =
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        all.extend(file.servers);
    }
    Ok(all)
}

type Client = RunningService<RoleClient, ()>;

/// The servers connected for one turn.
#[derive(Default)]
pub struct Connections {
    clients: Vec<Arc<Client>>,
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
    only: Option<&[String]>,
    env: &[(String, String)],
) -> (Connections, Vec<ToolRef>, Vec<String>) {
    let mut conns = Connections::default();
    let mut tools: Vec<ToolRef> = Vec::new();
    let mut problems = Vec::new();
    let all = match servers(workdir, home) {
        Ok(s) => s,
        Err(e) => return (conns, tools, vec![e]),
    };
    for (name, entry) in all {
        if only.is_some_and(|o| !o.contains(&name)) {
            continue;
        }
        let client = match connect(&entry, workdir, env).await {
            Ok(c) => Arc::new(c),
            Err(e) => {
                problems.push(format!("MCP server {name} is not available: {e}"));
                continue;
            }
        };
        match client.list_all_tools().await {
            Ok(list) => {
                for t in list {
                    tools.push(Arc::new(McpTool {
                        full: format!("mcp__{name}__{}", t.name),
                        tool: t.name.to_string(),
                        description: t.description.as_deref().unwrap_or_default().to_string(),
                        schema: Value::Object((*t.input_schema).clone()),
                        read_only: t.annotations.as_ref().and_then(|a| a.read_only_hint)
                            == Some(true),
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
    read_only: bool,
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
        self.read_only
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Mcp
    }
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
        let Some(args) = input.as_object().filter(|_| input.get("_raw").is_none()) else {
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
