//! The tools a Codex session in a folder would have, as codex's app-server lists
//! them: `mcpServerStatus/list` starts the MCP servers the session would get (Weft's
//! and codex's own configuration) and reports each server's tools. Codex's protocol
//! lists no built-in tools (its shell, patch and plan tools), so those are not here.

use std::path::Path;

use serde_json::{json, Value};
use weft_kernel::driver::AgentTurnInput;
use weft_protocol::ToolInfo;

use crate::config::{Config, TurnKnobs};
use crate::session::CodexSession;
use crate::turn::CLOSE_GRACE;

/// Pages asked for at most: a server that keeps answering with a cursor is cut off.
const MAX_PAGES: usize = 50;

/// Starts a codex app-server for `input` (no thread, so nothing joins codex's own
/// history), lists its MCP servers' tools, and closes it.
pub async fn list(
    program: &Path,
    input: &AgentTurnInput,
    cfg: &Config,
) -> Result<Vec<ToolInfo>, String> {
    let mut s = CodexSession::start(program, input, TurnKnobs::of(input), cfg).await?;
    let listed = mcp_tools(&mut s, cfg).await;
    s.close(CLOSE_GRACE).await;
    listed
}

async fn mcp_tools(s: &mut CodexSession, cfg: &Config) -> Result<Vec<ToolInfo>, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for _ in 0..MAX_PAGES {
        let mut params = json!({ "detail": "toolsAndAuthOnly" });
        if let Some(c) = &cursor {
            params["cursor"] = json!(c);
        }
        let page = s
            .call("mcpServerStatus/list", params, cfg.rpc_timeout)
            .await
            .map_err(|e| format!("codex could not list its MCP servers' tools: {e}"))?;
        tools.extend(parse_page(&page));
        cursor = page["nextCursor"].as_str().map(String::from);
        if cursor.is_none() {
            break;
        }
    }
    tools.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(tools)
}

/// One page's tools, named as codex's approvals and Weft's rules name them
/// (`mcp__SERVER__TOOL`). A server that could not list its tools is logged.
fn parse_page(page: &Value) -> Vec<ToolInfo> {
    let mut out = Vec::new();
    for server in page["data"].as_array().into_iter().flatten() {
        let Some(name) = server["name"].as_str() else {
            continue;
        };
        if let Some(e) = server["toolsError"]
            .as_str()
            .or(server["toolsError"]["message"].as_str())
        {
            tracing::warn!("codex: MCP server {name} listed no tools: {e}");
        }
        for (key, tool) in server["tools"].as_object().into_iter().flatten() {
            let tool_name = tool["name"].as_str().unwrap_or(key);
            out.push(ToolInfo {
                name: format!("mcp__{name}__{tool_name}"),
                description: tool["description"]
                    .as_str()
                    .or(tool["title"].as_str())
                    .unwrap_or_default()
                    .to_string(),
                server: Some(name.to_string()),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_names_each_servers_tools_as_approvals_do() {
        let page = json!({"data": [
            {"name": "rec", "tools": {
                "record": {"name": "record", "description": "Writes it down", "inputSchema": {}},
                "peek": {"name": "peek", "title": "Peek", "inputSchema": {}}}},
            {"name": "down", "tools": {}, "toolsError": "could not start"}
        ]});
        let mut got = parse_page(&page);
        got.sort_by(|a, b| a.name.cmp(&b.name));
        let names: Vec<&str> = got.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["mcp__rec__peek", "mcp__rec__record"]);
        assert_eq!(got[1].description, "Writes it down");
        assert_eq!(got[0].description, "Peek");
        assert_eq!(got[0].server.as_deref(), Some("rec"));
    }
}
