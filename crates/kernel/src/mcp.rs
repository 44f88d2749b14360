//! MCP servers as Weft configures them, once for every agent: `$WEFT_HOME/mcp.json`
//! (global) and `<workspace>/.weft/mcp.json`, the workspace's winning on a name. The
//! shape is the common `mcpServers` one (a `servers` key is read too):
//!
//! ```json
//! { "mcpServers": {
//!     "github": { "command": "github-mcp", "args": ["stdio"], "env": {"LOG": "1"} },
//!     "docs":   { "url": "http://127.0.0.1:8931/mcp", "headers": {"X-Team": "a"} } } }
//! ```
//!
//! A file that does not parse is named in a problem line and skipped; the other file
//! and every well-formed server still load. Each driver hands the list to its agent in
//! the agent's own form.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One configured MCP server. `env` and `headers` are shown by name only in `Debug`.
#[derive(Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default, rename_all = "camelCase")]
pub struct McpServer {
    /// Its name (the key in `mcpServers`).
    #[serde(skip)]
    pub name: String,
    /// The program of a stdio server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub args: Vec<String>,
    /// Extra environment for it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub env: BTreeMap<String, String>,
    /// The URL of a streamable HTTP server.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// HTTP headers for it.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub headers: BTreeMap<String, String>,
    /// Where it was configured.
    #[serde(skip)]
    pub source: PathBuf,
}

impl std::fmt::Debug for McpServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpServer")
            .field("name", &self.name)
            .field("command", &self.command)
            .field("args", &self.args)
            .field("env", &self.env.keys().collect::<Vec<_>>())
            .field("url", &self.url)
            .field("headers", &self.headers.keys().collect::<Vec<_>>())
            .field("source", &self.source)
            .finish()
    }
}

#[derive(Deserialize)]
#[serde(default, rename_all = "camelCase")]
#[derive(Default)]
struct McpFile {
    mcp_servers: BTreeMap<String, McpServer>,
    servers: BTreeMap<String, McpServer>,
}

/// What the configuration files give: the servers by name, and one line per file or
/// server that could not be used.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct McpConfig {
    /// The usable servers, by name.
    pub servers: BTreeMap<String, McpServer>,
    /// Why a file or a server was skipped (the file named).
    pub problems: Vec<String>,
}

/// The files read, global first: `<state_dir>/mcp.json`, `<workdir>/.weft/mcp.json`.
pub fn config_paths(state_dir: &Path, workdir: Option<&Path>) -> Vec<PathBuf> {
    let mut paths = vec![state_dir.join("mcp.json")];
    if let Some(w) = workdir {
        paths.push(w.join(".weft").join("mcp.json"));
    }
    paths
}

/// Reads the global and the workspace's configuration.
pub fn load(state_dir: &Path, workdir: Option<&Path>) -> McpConfig {
    let mut out = McpConfig::default();
    for path in config_paths(state_dir, workdir) {
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) => {
                out.problems
                    .push(format!("{}: cannot read it ({e}); skipped", path.display()));
                continue;
            }
        };
        let file: McpFile = match serde_json::from_str(&text) {
            Ok(f) => f,
            Err(e) => {
                out.problems.push(format!(
                    "{}: not a valid mcp.json ({e}); skipped",
                    path.display()
                ));
                continue;
            }
        };
        for (name, mut server) in file.servers.into_iter().chain(file.mcp_servers) {
            if let Err(why) = check(&name, &server) {
                out.problems.push(format!(
                    "{}: server `{name}` {why}; skipped",
                    path.display()
                ));
                continue;
            }
            server.name = name.clone();
            server.source = path.clone();
            out.servers.insert(name, server);
        }
    }
    out
}

fn check(name: &str, s: &McpServer) -> Result<(), &'static str> {
    let good_name = !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_');
    if !good_name {
        return Err("has a name other than letters, digits, - and _");
    }
    match (&s.command, &s.url) {
        (Some(c), None) if !c.is_empty() => Ok(()),
        (None, Some(u)) if u.starts_with("http://") || u.starts_with("https://") => Ok(()),
        (Some(_), Some(_)) => Err("names both a command and a url"),
        (None, Some(_)) => Err("has a url that is not http(s)"),
        _ => Err("names neither a command nor a url"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_workspace_wins_and_a_broken_file_is_named_and_skipped(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let ws = tempfile::tempdir()?;
        std::fs::write(
            home.path().join("mcp.json"),
            r#"{"mcpServers": {"a": {"command": "global-a"}, "b": {"url": "http://x/mcp"},
                "bad name": {"command": "x"}, "c": {}}}"#,
        )?;
        std::fs::create_dir_all(ws.path().join(".weft"))?;
        std::fs::write(
            ws.path().join(".weft/mcp.json"),
            r#"{"mcpServers": {"a": {"command": "ws-a", "args": ["1"]}}}"#,
        )?;
        let cfg = load(home.path(), Some(ws.path()));
        assert_eq!(cfg.servers.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(cfg.servers["a"].command.as_deref(), Some("ws-a"));
        assert_eq!(cfg.problems.len(), 2, "{:?}", cfg.problems);
        std::fs::write(ws.path().join(".weft/mcp.json"), "{ not json")?;
        let cfg = load(home.path(), Some(ws.path()));
        assert_eq!(cfg.servers["a"].command.as_deref(), Some("global-a"));
        assert!(
            cfg.problems
                .iter()
                .any(|p| p.contains(".weft/mcp.json") && p.contains("not a valid mcp.json")),
            "{:?}",
            cfg.problems
        );
        Ok(())
    }
}
