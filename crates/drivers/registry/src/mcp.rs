//! MCP servers configured once in Weft (`$WEFT_HOME/mcp.json`, `<ws>/.weft/mcp.json`;
//! see [`weft_kernel::mcp`]), handed to every agent in its own form:
//!
//! - Claude: `--mcp-config <file>`, a file written 0600 for the spawn and removed when
//!   its turn (or its terminal) ends;
//! - Codex: `-c mcp_servers.<name>.…` overrides; values that may be secret (a server's
//!   environment, its headers) never reach argv: they travel in the spawn's environment
//!   and the overrides name them (`env_vars`, `env_http_headers`);
//! - Gemini: a system-defaults settings file (0600, the same lifetime) named by
//!   `GEMINI_CLI_SYSTEM_DEFAULTS_PATH`, which carries over what a defaults file the
//!   system already has says; the user's own settings (and their servers, which win on
//!   a name) are not touched;
//! - ACP agents and Weft's own agent: `AgentTurnInput::mcp_servers` (ACP
//!   `session/new.mcpServers`, rmcp).
//!
//! The agent's own configured servers are left alone everywhere.

use std::io::Write;
use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use weft_kernel::mcp::{self, McpServer};
use weft_kernel::{Plugin, SpawnContribution, SpawnCx};

/// The plugin. Register it with `LoomBuilder::plugin`.
#[derive(Debug, Default, Clone, Copy)]
pub struct McpPlugin;

impl Plugin for McpPlugin {
    fn id(&self) -> &str {
        "mcp"
    }

    fn tools(&self, cx: &SpawnCx) -> Vec<McpServer> {
        let cfg = mcp::load(&cx.input.state_dir, Some(&cx.input.workdir));
        for p in &cfg.problems {
            tracing::warn!(session = %cx.input.session_key, "mcp: {p}");
        }
        cfg.servers.into_values().collect()
    }

    fn contribute_spawn(
        &self,
        cx: &SpawnCx,
        tools: &[McpServer],
    ) -> Result<SpawnContribution, String> {
        if tools.is_empty() {
            return Ok(SpawnContribution::default());
        }
        match cx.agent {
            "claude" => {
                let path = run_file(cx, "claude")?;
                let file = TempFile::write(path, &claude_config(tools))?;
                Ok(SpawnContribution {
                    extra_args: vec!["--mcp-config".into(), file.0.display().to_string()],
                    keep: vec![Box::new(file)],
                    ..Default::default()
                })
            }
            "codex" => Ok(codex_overrides(tools)),
            "gemini" => {
                let base = cx
                    .input
                    .var("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/system-defaults.json"));
                let existing = std::fs::read_to_string(&base)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Value>(&t).ok());
                let path = run_file(cx, "gemini")?;
                let file = TempFile::write(path, &gemini_defaults(existing, tools))?;
                Ok(SpawnContribution {
                    env: vec![(
                        "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".into(),
                        file.0.display().to_string(),
                    )],
                    keep: vec![Box::new(file)],
                    ..Default::default()
                })
            }
            _ => Ok(SpawnContribution::default()),
        }
    }
}

/// `<state>/run/mcp/<agent>-<session>.json`: one per session, the same path every
/// spawn (so a driver keeping a process per session sees the same arguments).
fn run_file(cx: &SpawnCx, agent: &str) -> Result<PathBuf, String> {
    let dir = cx.input.state_dir.join("run").join("mcp");
    create_private_dir(&dir)?;
    let key: String = cx
        .input
        .session_key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    Ok(dir.join(format!("{agent}-{key}.json")))
}

fn create_private_dir(dir: &Path) -> Result<(), String> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
        .map_err(|e| format!("cannot create {}: {e}", dir.display()))
}

/// A file only its owner reads, removed when dropped.
#[derive(Debug)]
pub struct TempFile(pub PathBuf);

impl TempFile {
    fn write(path: PathBuf, value: &Value) -> Result<Self, String> {
        use std::os::unix::fs::{OpenOptionsExt, PermissionsExt};
        let fail = |e: std::io::Error| format!("cannot write {}: {e}", path.display());
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .mode(0o600)
            .open(&path)
            .map_err(fail)?;
        // An older file of the same name may have other permissions.
        f.set_permissions(std::fs::Permissions::from_mode(0o600))
            .map_err(fail)?;
        f.write_all(value.to_string().as_bytes()).map_err(fail)?;
        Ok(Self(path))
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

fn map<'a>(m: impl IntoIterator<Item = (&'a String, &'a String)>) -> Value {
    Value::Object(
        m.into_iter()
            .map(|(k, v)| (k.clone(), Value::String(v.clone())))
            .collect(),
    )
}

/// Claude's `--mcp-config` file.
pub fn claude_config(tools: &[McpServer]) -> Value {
    let mut servers = Map::new();
    for s in tools {
        let entry = match (&s.command, &s.url) {
            (Some(cmd), _) => {
                json!({"type": "stdio", "command": cmd, "args": s.args, "env": map(&s.env)})
            }
            (None, Some(url)) => json!({"type": "http", "url": url, "headers": map(&s.headers)}),
            (None, None) => continue,
        };
        servers.insert(s.name.clone(), entry);
    }
    json!({ "mcpServers": servers })
}

/// A TOML string (JSON's quoting is TOML's basic string for everything we write).
fn toml_str(s: &str) -> String {
    Value::String(s.to_string()).to_string()
}

/// Codex's `-c` overrides, and the environment they name.
pub fn codex_overrides(tools: &[McpServer]) -> SpawnContribution {
    let mut c = SpawnContribution::default();
    let mut set = |key: String| c.extra_args.extend(["-c".to_string(), key]);
    let mut env = Vec::new();
    for s in tools {
        let at = format!("mcp_servers.{}", s.name);
        if let Some(cmd) = &s.command {
            set(format!("{at}.command={}", toml_str(cmd)));
            let args: Vec<String> = s.args.iter().map(|a| toml_str(a)).collect();
            set(format!("{at}.args=[{}]", args.join(",")));
            if !s.env.is_empty() {
                let names: Vec<String> = s.env.keys().map(|k| toml_str(k)).collect();
                set(format!("{at}.env_vars=[{}]", names.join(",")));
                env.extend(s.env.iter().map(|(k, v)| (k.clone(), v.clone())));
            }
        } else if let Some(url) = &s.url {
            set(format!("{at}.url={}", toml_str(url)));
            if !s.headers.is_empty() {
                let mut named = Vec::new();
                for (i, (h, v)) in s.headers.iter().enumerate() {
                    let var = format!(
                        "WEFT_MCP_{}_HEADER_{i}",
                        s.name.to_uppercase().replace('-', "_")
                    );
                    named.push(format!("{}={}", toml_str(h), toml_str(&var)));
                    env.push((var, v.clone()));
                }
                set(format!("{at}.env_http_headers={{{}}}", named.join(",")));
            }
        }
    }
    c.env = env;
    c
}

/// Gemini's system-defaults settings: `existing` (the system's own, when any) with
/// Weft's servers added beside its own.
pub fn gemini_defaults(existing: Option<Value>, tools: &[McpServer]) -> Value {
    let mut root = match existing {
        Some(Value::Object(m)) => m,
        _ => Map::new(),
    };
    let servers = root
        .entry("mcpServers")
        .or_insert_with(|| Value::Object(Map::new()));
    if !servers.is_object() {
        *servers = Value::Object(Map::new());
    }
    if let Some(servers) = servers.as_object_mut() {
        for s in tools {
            let entry = match (&s.command, &s.url) {
                (Some(cmd), _) => json!({"command": cmd, "args": s.args, "env": map(&s.env)}),
                (None, Some(url)) => json!({"httpUrl": url, "headers": map(&s.headers)}),
                (None, None) => continue,
            };
            servers.entry(s.name.clone()).or_insert(entry);
        }
    }
    Value::Object(root)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn servers() -> Vec<McpServer> {
        vec![
            McpServer {
                name: "rec".into(),
                command: Some("python3".into()),
                args: vec!["srv.py".into(), "a \"b\"".into()],
                env: [("TOKEN".to_string(), "s3cret".to_string())].into(),
                ..Default::default()
            },
            McpServer {
                name: "docs".into(),
                url: Some("http://127.0.0.1:9/mcp".into()),
                headers: [("Authorization".to_string(), "Bearer s3cret".to_string())].into(),
                ..Default::default()
            },
        ]
    }

    #[test]
    fn codex_gets_overrides_and_never_a_secret_in_argv() {
        let c = codex_overrides(&servers());
        let argv = c.extra_args.join(" ");
        assert!(!argv.contains("s3cret"), "{argv}");
        assert!(
            argv.contains(r#"mcp_servers.rec.command="python3""#),
            "{argv}"
        );
        assert!(
            argv.contains(r#"mcp_servers.rec.args=["srv.py","a \"b\""]"#),
            "{argv}"
        );
        assert!(
            argv.contains(r#"mcp_servers.rec.env_vars=["TOKEN"]"#),
            "{argv}"
        );
        assert!(
            argv.contains(r#"mcp_servers.docs.url="http://127.0.0.1:9/mcp""#),
            "{argv}"
        );
        assert!(
            argv.contains(
                r#"mcp_servers.docs.env_http_headers={"Authorization"="WEFT_MCP_DOCS_HEADER_0"}"#
            ),
            "{argv}"
        );
        assert!(c.env.contains(&("TOKEN".into(), "s3cret".into())));
        assert!(c
            .env
            .contains(&("WEFT_MCP_DOCS_HEADER_0".into(), "Bearer s3cret".into())));
    }

    #[test]
    fn gemini_keeps_the_systems_defaults_and_its_servers() {
        let existing = json!({"ui": {"theme": "x"}, "mcpServers": {"rec": {"command": "theirs"}}});
        let v = gemini_defaults(Some(existing), &servers());
        assert_eq!(v["ui"]["theme"], "x");
        assert_eq!(v["mcpServers"]["rec"]["command"], "theirs");
        assert_eq!(v["mcpServers"]["docs"]["httpUrl"], "http://127.0.0.1:9/mcp");
    }

    #[test]
    fn the_claude_file_is_private_and_goes_with_its_guard() -> Result<(), String> {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().map_err(|e| e.to_string())?;
        let path = dir.path().join("c.json");
        let f = TempFile::write(path.clone(), &claude_config(&servers()))?;
        let meta = std::fs::metadata(&path).map_err(|e| e.to_string())?;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        assert_eq!(v["mcpServers"]["rec"]["type"], "stdio");
        assert_eq!(v["mcpServers"]["docs"]["type"], "http");
        drop(f);
        assert!(!path.exists());
        Ok(())
    }
}
