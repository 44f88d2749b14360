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
//!
//! Servers a file or the session turns off are left out; `${secret:NAME}` values are
//! filled from the secret store for the spawn only (a secret that is not kept fails
//! the turn with a message naming it). A stdio server is started through `/bin/sh`
//! sending its stderr to a private file ([`mcp::stderr_path`]), so a server the agent
//! reports as failed shows what it wrote ([`mcp::with_captured_stderr`]).

use std::collections::BTreeMap;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use serde_json::{json, Map, Value};
use weft_agent_spec::spec::McpForm;
use weft_kernel::mcp::{self, McpServer};
use weft_kernel::{Plugin, SpawnContribution, SpawnCx};

/// Reads a secret by name: `Ok(None)` when none is kept.
pub type SecretLookup = dyn Fn(&str) -> Result<Option<String>, String> + Send + Sync;

/// The plugin. Register it with `LoomBuilder::plugin`.
#[derive(Default)]
pub struct McpPlugin {
    secrets: Option<Arc<SecretLookup>>,
    /// A task whose servers could not be made ready: why (its spawn then fails).
    refused: Mutex<BTreeMap<String, String>>,
}

impl std::fmt::Debug for McpPlugin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("McpPlugin")
            .field("secrets", &self.secrets.is_some())
            .finish()
    }
}

impl McpPlugin {
    /// A plugin whose `${secret:NAME}` values come from `secrets`.
    pub fn with_secrets(secrets: Arc<SecretLookup>) -> Self {
        Self {
            secrets: Some(secrets),
            ..Default::default()
        }
    }

    /// The servers this spawn gets: enabled for the session, secrets filled in.
    fn servers(&self, cx: &SpawnCx) -> Result<Vec<McpServer>, String> {
        let state = &cx.input.state_dir;
        let cfg = mcp::load(state, Some(&cx.input.workdir), cx.input.workspace_trusted);
        for p in &cfg.problems {
            tracing::warn!(session = %cx.input.session_key, "mcp: {p}");
        }
        let overrides = mcp::session_overrides(state, &cx.input.session_key);
        let none = |name: &str| -> Result<Option<String>, String> {
            Err(format!("no secret store is available to read `{name}`"))
        };
        let mut out = Vec::new();
        for mut s in cfg.servers.into_values() {
            if !s.enabled_with(&overrides) {
                continue;
            }
            match &self.secrets {
                Some(get) => s.resolve_secrets(get.as_ref())?,
                None => s.resolve_secrets(&none)?,
            }
            out.push(s);
        }
        Ok(out)
    }
}

impl Plugin for McpPlugin {
    fn id(&self) -> &str {
        "mcp"
    }

    fn tools(&self, cx: &SpawnCx) -> Vec<McpServer> {
        match self.servers(cx) {
            Ok(s) => s,
            Err(e) => {
                if let Ok(mut r) = self.refused.lock() {
                    r.insert(cx.input.task_id.clone(), e);
                }
                Vec::new()
            }
        }
    }

    fn contribute_spawn(
        &self,
        cx: &SpawnCx,
        tools: &[McpServer],
    ) -> Result<SpawnContribution, String> {
        let refused = self
            .refused
            .lock()
            .ok()
            .and_then(|mut r| r.remove(&cx.input.task_id));
        if let Some(why) = refused {
            return Err(why);
        }
        if tools.is_empty() {
            return Ok(SpawnContribution::default());
        }
        let form = crate::built_in(cx.agent).map_or(McpForm::None, |s| s.mcp);
        let wrapped: Vec<McpServer>;
        let tools = match form {
            McpForm::ClaudeConfig | McpForm::CodexOverrides | McpForm::GeminiSettings => {
                wrapped = capture_stderr(cx, tools)?;
                &wrapped[..]
            }
            _ => tools,
        };
        match form {
            McpForm::ClaudeConfig => {
                let (tools, env) = by_reference(tools);
                let path = run_file(cx, cx.agent)?;
                let file = TempFile::write(path, &claude_config(&tools))?;
                Ok(SpawnContribution {
                    env,
                    extra_args: vec!["--mcp-config".into(), file.0.display().to_string()],
                    keep: vec![Box::new(file)],
                })
            }
            McpForm::CodexOverrides => Ok(codex_overrides(tools)),
            McpForm::GeminiSettings => {
                let base = cx
                    .input
                    .var("GEMINI_CLI_SYSTEM_DEFAULTS_PATH")
                    .map(PathBuf::from)
                    .unwrap_or_else(|| PathBuf::from("/etc/gemini-cli/system-defaults.json"));
                let existing = std::fs::read_to_string(&base)
                    .ok()
                    .and_then(|t| serde_json::from_str::<Value>(&t).ok());
                let (tools, mut env) = by_reference(tools);
                let path = run_file(cx, cx.agent)?;
                let file = TempFile::write(path, &gemini_defaults(existing, &tools))?;
                env.push((
                    "GEMINI_CLI_SYSTEM_DEFAULTS_PATH".into(),
                    file.0.display().to_string(),
                ));
                Ok(SpawnContribution {
                    env,
                    keep: vec![Box::new(file)],
                    ..Default::default()
                })
            }
            _ => Ok(SpawnContribution::default()),
        }
    }
}

/// The servers with every `env` and `headers` value replaced by a `${VAR}` reference
/// (Claude and Gemini expand them in their MCP settings), and the variables for the
/// spawn: a value, secret or not, never lands in a file Weft writes.
pub fn by_reference(tools: &[McpServer]) -> (Vec<McpServer>, Vec<(String, String)>) {
    let mut env = Vec::new();
    let tools = tools
        .iter()
        .map(|s| {
            let mut s = s.clone();
            let base = format!("WEFT_MCP_{}", s.name.to_uppercase().replace('-', "_"));
            for (i, v) in s.env.values_mut().enumerate() {
                let var = format!("{base}_ENV_{i}");
                env.push((var.clone(), std::mem::take(v)));
                *v = format!("${{{var}}}");
            }
            for (i, v) in s.headers.values_mut().enumerate() {
                let var = format!("{base}_HEADER_{i}");
                env.push((var.clone(), std::mem::take(v)));
                *v = format!("${{{var}}}");
            }
            s
        })
        .collect();
    (tools, env)
}

/// The stdio servers started through `/bin/sh`, their stderr sent to
/// [`mcp::stderr_path`] (truncated at each start, so it is the last start's).
fn capture_stderr(cx: &SpawnCx, tools: &[McpServer]) -> Result<Vec<McpServer>, String> {
    let mut out = Vec::with_capacity(tools.len());
    for s in tools {
        let mut s = s.clone();
        if let Some(cmd) = s.command.take() {
            let log = mcp::stderr_path(&cx.input.state_dir, &cx.input.session_key, &s.name);
            if let Some(dir) = log.parent() {
                create_private_dir(dir)?;
            }
            let mut args = vec![
                "-c".to_string(),
                // `$0` is the log: no path is ever quoted into the script.
                r#"umask 077; exec 2>"$0"; exec "$@""#.to_string(),
                log.display().to_string(),
                cmd,
            ];
            args.append(&mut s.args);
            s.command = Some("/bin/sh".into());
            s.args = args;
        }
        out.push(s);
    }
    Ok(out)
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
        let (tools, env) = by_reference(&servers());
        let f = TempFile::write(path.clone(), &claude_config(&tools))?;
        let meta = std::fs::metadata(&path).map_err(|e| e.to_string())?;
        assert_eq!(meta.permissions().mode() & 0o777, 0o600);
        let text = std::fs::read_to_string(&path).map_err(|e| e.to_string())?;
        let v: Value = serde_json::from_str(&text).map_err(|e| e.to_string())?;
        assert_eq!(v["mcpServers"]["rec"]["type"], "stdio");
        assert_eq!(v["mcpServers"]["docs"]["type"], "http");
        assert!(!text.contains("s3cret"), "values travel in the env: {text}");
        assert_eq!(
            v["mcpServers"]["rec"]["env"]["TOKEN"],
            "${WEFT_MCP_REC_ENV_0}"
        );
        assert!(env.contains(&("WEFT_MCP_REC_ENV_0".into(), "s3cret".into())));
        assert!(env.contains(&("WEFT_MCP_DOCS_HEADER_0".into(), "Bearer s3cret".into())));
        drop(f);
        assert!(!path.exists());
        Ok(())
    }
}
