//! The agents' own MCP files, read into Weft's [`McpServer`]: a JSON `mcpServers`
//! object (Claude's `~/.claude.json`, Gemini's `settings.json`) or TOML
//! `[mcp_servers.NAME]` tables (Codex's `config.toml`), as the agent's spec names them
//! ([`OwnMcpFormat`]). A file that does not parse is an error for the caller to name;
//! a server Weft cannot express is kept with the reason, so the report can say why it
//! was left out.
//!
//! Values are kept as the agent's file has them, except that a variable the agent
//! passes through from its own environment is written `${VAR}` (the form Claude and
//! Gemini expand themselves): [`super::secrets`] then turns every such reference, and
//! every value that looks like a secret, into a `${secret:NAME}` of Weft's.

use std::collections::BTreeMap;

use serde_json::Value as Json;
use weft_agent_spec::spec::OwnMcpFormat;

use crate::mcp::McpServer;

/// One server of an agent's file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Its name there.
    pub name: String,
    /// The server, or why Weft cannot express it.
    pub server: Result<McpServer, String>,
    /// What of it was left out (tool filters, timeouts Weft does not set).
    pub left_out: Vec<String>,
}

/// The servers of a file's `text` in `format`, by name. A file without servers gives
/// none; one that does not parse, or whose
/// servers are not a table, is an error naming what was wrong.
pub fn servers(format: OwnMcpFormat, text: &str) -> Result<Vec<Found>, String> {
    let mut found = match format {
        OwnMcpFormat::JsonMcpServers => json_servers(text, false),
        OwnMcpFormat::JsonMcpServersSseUrl => json_servers(text, true),
        OwnMcpFormat::TomlMcpServers => toml_servers(text),
    }?;
    // serde_json keeps a file's order only with a feature some builds unify in.
    found.sort_by(|a, b| a.name.cmp(&b.name));
    Ok(found)
}

fn json_servers(text: &str, bare_url_is_sse: bool) -> Result<Vec<Found>, String> {
    let doc: Json = serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})"))?;
    let Json::Object(top) = doc else {
        return Err("not a JSON object".into());
    };
    let servers = match top.get("mcpServers") {
        None | Some(Json::Null) => return Ok(Vec::new()),
        Some(Json::Object(m)) => m,
        Some(_) => return Err("`mcpServers` is not an object".into()),
    };
    Ok(servers
        .iter()
        .map(|(name, v)| {
            let mut left_out = Vec::new();
            let server = json_server(v, bare_url_is_sse, &mut left_out);
            Found {
                name: name.clone(),
                server,
                left_out,
            }
        })
        .collect())
}

fn strings(v: Option<&Json>, what: &str) -> Result<Vec<String>, String> {
    match v {
        None | Some(Json::Null) => Ok(Vec::new()),
        Some(Json::Array(a)) => a
            .iter()
            .map(|x| match x {
                Json::String(s) => Ok(s.clone()),
                Json::Number(n) => Ok(n.to_string()),
                _ => Err(format!("its `{what}` holds something other than text")),
            })
            .collect(),
        Some(_) => Err(format!("its `{what}` is not a list")),
    }
}

fn string_map(v: Option<&Json>, what: &str) -> Result<BTreeMap<String, String>, String> {
    match v {
        None | Some(Json::Null) => Ok(BTreeMap::new()),
        Some(Json::Object(m)) => m
            .iter()
            .map(|(k, x)| match x {
                Json::String(s) => Ok((k.clone(), s.clone())),
                Json::Number(n) => Ok((k.clone(), n.to_string())),
                Json::Bool(b) => Ok((k.clone(), b.to_string())),
                _ => Err(format!("its `{what}` value `{k}` is not text")),
            })
            .collect(),
        Some(_) => Err(format!("its `{what}` is not an object")),
    }
}

fn text<'a>(v: Option<&'a Json>, what: &str) -> Result<Option<&'a str>, String> {
    match v {
        None | Some(Json::Null) => Ok(None),
        Some(Json::String(s)) => Ok(Some(s)),
        Some(_) => Err(format!("its `{what}` is not text")),
    }
}

const SSE: &str = "an SSE server (Weft configures stdio and streamable HTTP servers)";

fn json_server(
    v: &Json,
    bare_url_is_sse: bool,
    left_out: &mut Vec<String>,
) -> Result<McpServer, String> {
    let Json::Object(o) = v else {
        return Err("not an object".into());
    };
    if text(o.get("cwd"), "cwd")?.is_some() {
        return Err("it runs in a folder of its own (`cwd`), which Weft does not set".into());
    }
    let kind = text(o.get("type"), "type")?;
    let http_url = text(o.get("httpUrl"), "httpUrl")?;
    let url = text(o.get("url"), "url")?;
    if let Some(k) = kind {
        if !matches!(
            k,
            "stdio" | "http" | "sse" | "streamable-http" | "streamableHttp"
        ) {
            return Err(format!("its transport `{k}` is not one Weft configures"));
        }
    }
    let url = match (http_url, url) {
        (Some(h), _) => Some(h),
        (None, Some(_)) if kind == Some("sse") || (kind.is_none() && bare_url_is_sse) => {
            return Err(SSE.into())
        }
        (None, u) => u,
    };
    for key in [
        "includeTools",
        "excludeTools",
        "timeout",
        "trust",
        "oauth",
        "authProviderType",
    ] {
        if o.get(key).is_some_and(|x| !x.is_null()) {
            left_out.push(format!("`{key}`"));
        }
    }
    Ok(McpServer {
        command: text(o.get("command"), "command")?.map(str::to_string),
        args: strings(o.get("args"), "args")?,
        env: string_map(o.get("env"), "env")?,
        url: url.map(str::to_string),
        headers: string_map(o.get("headers"), "headers")?,
        disabled: o.get("disabled").and_then(Json::as_bool).unwrap_or(false),
        ..McpServer::default()
    })
}

fn toml_servers(text: &str) -> Result<Vec<Found>, String> {
    let doc: toml::Table = text
        .parse()
        .map_err(|e: toml::de::Error| format!("not valid TOML ({})", e.message()))?;
    let servers = match doc.get("mcp_servers") {
        None => return Ok(Vec::new()),
        Some(toml::Value::Table(t)) => t,
        Some(_) => return Err("`mcp_servers` is not a table".into()),
    };
    Ok(servers
        .iter()
        .map(|(name, v)| {
            let mut left_out = Vec::new();
            let server = toml_server(v, &mut left_out);
            Found {
                name: name.clone(),
                server,
                left_out,
            }
        })
        .collect())
}

fn toml_text(v: &toml::Value) -> Option<String> {
    match v {
        toml::Value::String(s) => Some(s.clone()),
        toml::Value::Integer(i) => Some(i.to_string()),
        toml::Value::Float(f) => Some(f.to_string()),
        toml::Value::Boolean(b) => Some(b.to_string()),
        _ => None,
    }
}

fn toml_map(t: &toml::Table, key: &str) -> Result<BTreeMap<String, String>, String> {
    match t.get(key) {
        None => Ok(BTreeMap::new()),
        Some(toml::Value::Table(m)) => m
            .iter()
            .map(|(k, v)| {
                toml_text(v)
                    .map(|s| (k.clone(), s))
                    .ok_or_else(|| format!("its `{key}` value `{k}` is not text"))
            })
            .collect(),
        Some(_) => Err(format!("its `{key}` is not a table")),
    }
}

fn toml_str(t: &toml::Table, key: &str) -> Result<Option<String>, String> {
    match t.get(key) {
        None => Ok(None),
        Some(toml::Value::String(s)) => Ok(Some(s.clone())),
        Some(_) => Err(format!("its `{key}` is not text")),
    }
}

fn toml_list(t: &toml::Table, key: &str) -> Result<Vec<String>, String> {
    match t.get(key) {
        None => Ok(Vec::new()),
        Some(toml::Value::Array(a)) => a
            .iter()
            .map(|v| toml_text(v).ok_or_else(|| format!("its `{key}` holds a non-text item")))
            .collect(),
        Some(_) => Err(format!("its `{key}` is not a list")),
    }
}

/// An environment variable's reference, in the form [`super::secrets`] turns into a
/// secret of Weft's.
fn env_ref(var: &str) -> String {
    format!("${{{var}}}")
}

fn toml_server(v: &toml::Value, left_out: &mut Vec<String>) -> Result<McpServer, String> {
    let toml::Value::Table(t) = v else {
        return Err("not a table".into());
    };
    if toml_str(t, "cwd")?.is_some() {
        return Err("it runs in a folder of its own (`cwd`), which Weft does not set".into());
    }
    let mut env = toml_map(t, "env")?;
    // Variables Codex passes through from its own environment: Weft's servers get only
    // what their entry gives, so each becomes a reference to a secret to set.
    for var in toml_list(t, "env_vars")? {
        env.entry(var.clone()).or_insert_with(|| env_ref(&var));
    }
    let mut headers = toml_map(t, "http_headers")?;
    for (header, var) in toml_map(t, "env_http_headers")? {
        headers.insert(header, env_ref(&var));
    }
    if let Some(var) = toml_str(t, "bearer_token_env_var")? {
        headers.insert("Authorization".into(), format!("Bearer {}", env_ref(&var)));
    }
    for key in [
        "enabled_tools",
        "disabled_tools",
        "startup_timeout_sec",
        "startup_timeout_ms",
        "tool_timeout_sec",
    ] {
        if t.contains_key(key) {
            left_out.push(format!("`{key}`"));
        }
    }
    let disabled = match t.get("enabled") {
        None => false,
        Some(toml::Value::Boolean(on)) => !on,
        Some(_) => return Err("its `enabled` is not true or false".into()),
    };
    Ok(McpServer {
        command: toml_str(t, "command")?,
        args: toml_list(t, "args")?,
        env,
        url: toml_str(t, "url")?,
        headers,
        disabled,
        ..McpServer::default()
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn ok(found: &[Found], name: &str) -> McpServer {
        found
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.server.clone().ok())
            .unwrap_or_else(|| panic!("{name} not parsed: {found:?}"))
    }

    fn why(found: &[Found], name: &str) -> String {
        found
            .iter()
            .find(|f| f.name == name)
            .and_then(|f| f.server.clone().err())
            .unwrap_or_else(|| panic!("{name} parsed: {found:?}"))
    }

    /// A `~/.claude.json` as `claude mcp add` leaves it: global state around the
    /// servers, one per transport, and a project's own servers (not imported).
    const CLAUDE: &str = r#"{
      "numStartups": 42,
      "hasCompletedOnboarding": true,
      "projects": {"/home/u/p": {"mcpServers": {"local": {"type": "stdio", "command": "x"}}}},
      "mcpServers": {
        "github": {"type": "stdio", "command": "npx",
                   "args": ["-y", "@modelcontextprotocol/server-github"],
                   "env": {"GITHUB_PERSONAL_ACCESS_TOKEN": "ghp_abc123", "LOG": "1"}},
        "docs": {"type": "http", "url": "https://mcp.example.com/mcp",
                 "headers": {"Authorization": "Bearer ${DOCS_TOKEN}"}},
        "events": {"type": "sse", "url": "https://sse.example.com/sse"},
        "plain": {"command": "uvx", "args": ["mcp-server-time"]}
      }
    }"#;

    #[test]
    fn claude_s_servers_by_transport() {
        let found = servers(OwnMcpFormat::JsonMcpServers, CLAUDE).unwrap();
        assert_eq!(found.len(), 4, "the project's server is not a global one");
        let gh = ok(&found, "github");
        assert_eq!(gh.command.as_deref(), Some("npx"));
        assert_eq!(gh.args, ["-y", "@modelcontextprotocol/server-github"]);
        assert_eq!(gh.env["LOG"], "1");
        let docs = ok(&found, "docs");
        assert_eq!(docs.url.as_deref(), Some("https://mcp.example.com/mcp"));
        assert_eq!(docs.headers["Authorization"], "Bearer ${DOCS_TOKEN}");
        assert!(why(&found, "events").contains("SSE"));
        assert_eq!(ok(&found, "plain").command.as_deref(), Some("uvx"));
    }

    #[test]
    fn gemini_s_bare_url_is_sse_and_http_url_is_http() {
        let text = r#"{
          "security": {"auth": {"selectedType": "gemini-api-key"}},
          "mcpServers": {
            "fs": {"command": "node", "args": ["server.js"], "env": {"ROOT": "/srv"},
                   "timeout": 30000, "trust": false, "includeTools": ["read"]},
            "remote": {"httpUrl": "https://h.example/mcp", "headers": {"X-Team": "a"}},
            "old": {"url": "https://s.example/sse"},
            "here": {"command": "python", "args": ["-m", "srv"], "cwd": "./srv"}
          }
        }"#;
        let found = servers(OwnMcpFormat::JsonMcpServersSseUrl, text).unwrap();
        let fs = ok(&found, "fs");
        assert_eq!(fs.env["ROOT"], "/srv");
        let fs_found = found.iter().find(|f| f.name == "fs").unwrap();
        assert_eq!(
            fs_found.left_out,
            ["`includeTools`", "`timeout`", "`trust`"]
        );
        assert_eq!(
            ok(&found, "remote").url.as_deref(),
            Some("https://h.example/mcp")
        );
        assert!(why(&found, "old").contains("SSE"));
        assert!(why(&found, "here").contains("cwd"));
    }

    #[test]
    fn codex_s_tables_with_pass_through_variables_as_references() {
        let text = r#"
model = "gpt-5"
[mcp_servers.github]
command = "npx"
args = ["-y", "@modelcontextprotocol/server-github"]
env = { GITHUB_PERSONAL_ACCESS_TOKEN = "ghp_abc123" }
env_vars = ["HTTPS_PROXY"]
startup_timeout_sec = 20

[mcp_servers.figma]
url = "https://mcp.figma.com/mcp"
bearer_token_env_var = "FIGMA_TOKEN"
http_headers = { "X-Region" = "eu" }

[mcp_servers.off]
command = "off-mcp"
enabled = false

[mcp_servers.boxed]
command = "srv"
cwd = "/opt/srv"
"#;
        let found = servers(OwnMcpFormat::TomlMcpServers, text).unwrap();
        let gh = ok(&found, "github");
        assert_eq!(gh.env["HTTPS_PROXY"], "${HTTPS_PROXY}");
        assert_eq!(gh.env["GITHUB_PERSONAL_ACCESS_TOKEN"], "ghp_abc123");
        let figma = ok(&found, "figma");
        assert_eq!(figma.headers["Authorization"], "Bearer ${FIGMA_TOKEN}");
        assert_eq!(figma.headers["X-Region"], "eu");
        assert!(ok(&found, "off").disabled);
        assert!(why(&found, "boxed").contains("cwd"));
        assert_eq!(
            found.iter().find(|f| f.name == "github").unwrap().left_out,
            ["`startup_timeout_sec`"]
        );
    }

    #[test]
    fn malformed_files_are_errors_and_odd_servers_are_reasons() {
        for (format, text, want) in [
            (OwnMcpFormat::JsonMcpServers, "{ not json", "not valid JSON"),
            (OwnMcpFormat::JsonMcpServers, "[1, 2]", "not a JSON object"),
            (
                OwnMcpFormat::JsonMcpServersSseUrl,
                r#"{"mcpServers": [1]}"#,
                "`mcpServers` is not an object",
            ),
            (
                OwnMcpFormat::TomlMcpServers,
                "[mcp_servers.x\n",
                "not valid TOML",
            ),
            (
                OwnMcpFormat::TomlMcpServers,
                "mcp_servers = 3",
                "`mcp_servers` is not a table",
            ),
        ] {
            let err = servers(format, text).unwrap_err();
            assert!(err.contains(want), "{text}: {err}");
        }
        assert!(
            servers(OwnMcpFormat::JsonMcpServers, r#"{"numStartups": 1}"#)
                .unwrap()
                .is_empty()
        );
        assert!(servers(OwnMcpFormat::TomlMcpServers, "model = 'x'")
            .unwrap()
            .is_empty());
        let found = servers(
            OwnMcpFormat::JsonMcpServers,
            r#"{"mcpServers": {"a": 3, "b": {"command": "b", "args": "x"},
                "c": {"command": "c", "env": {"K": {"nested": 1}}},
                "d": {"type": "websocket", "url": "ws://x"}}}"#,
        )
        .unwrap();
        assert!(why(&found, "a").contains("not an object"));
        assert!(why(&found, "b").contains("`args` is not a list"));
        assert!(why(&found, "c").contains("`env` value `K`"));
        assert!(why(&found, "d").contains("`websocket`"));
    }
}
