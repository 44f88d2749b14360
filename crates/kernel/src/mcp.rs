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
//!
//! A value of `env` or `headers` may name a secret kept in the OS secret store
//! (`weft mcp secret set NAME`): `"TOKEN": "${secret:NAME}"` (also inside a longer
//! value: `"Bearer ${secret:NAME}"`). The file holds only the name; the value is put
//! into the one spawn that needs it. `"disabled": true` turns a server off; a session
//! can turn one on or off for itself (`weft run --mcp NAME=off`), kept in
//! `$WEFT_HOME/mcp-sessions.json`.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::error::FilesError;

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
    /// Off unless a session turns it on.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub disabled: bool,
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
            .field("disabled", &self.disabled)
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

/// Reads the global and the workspace's configuration. The workspace's servers load
/// only when the user trusted the folder (`workspace_trusted`): a cloned repository's
/// `.weft/mcp.json` would otherwise start its programs, or send the user's secrets to
/// its URLs, on the first "hi". Untrusted, they are named in a problem line instead.
pub fn load(state_dir: &Path, workdir: Option<&Path>, workspace_trusted: bool) -> McpConfig {
    let mut out = McpConfig::default();
    let global = state_dir.join("mcp.json");
    for path in config_paths(state_dir, workdir) {
        let text =
            match weft_workspace::files::read_config(&path, weft_workspace::files::CONFIG_CAP) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
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
        let servers: Vec<(String, McpServer)> =
            file.servers.into_iter().chain(file.mcp_servers).collect();
        if path != global && !workspace_trusted {
            if !servers.is_empty() {
                let names: Vec<&str> = servers.iter().map(|(n, _)| n.as_str()).collect();
                out.problems.push(format!(
                    "{}: {} not started: this folder is not trusted (`weft trust`)",
                    path.display(),
                    names.join(", ")
                ));
            }
            continue;
        }
        for (name, mut server) in servers {
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

const SECRET_OPEN: &str = "${secret:";

impl McpServer {
    /// The secrets its `env` and `headers` name, in order, each once.
    pub fn secret_names(&self) -> Vec<String> {
        let mut out: Vec<String> = Vec::new();
        for v in self.env.values().chain(self.headers.values()) {
            let mut rest = v.as_str();
            while let Some(i) = rest.find(SECRET_OPEN) {
                let after = &rest[i + SECRET_OPEN.len()..];
                let Some(end) = after.find('}') else { break };
                let name = after[..end].to_string();
                if !out.contains(&name) {
                    out.push(name);
                }
                rest = &after[end + 1..];
            }
        }
        out
    }

    /// Replaces every `${secret:NAME}` in `env` and `headers` with the secret `get`
    /// gives; a secret that is not kept fails with a message naming it (never a value).
    pub fn resolve_secrets(
        &mut self,
        get: &dyn Fn(&str) -> Result<Option<String>, String>,
    ) -> Result<(), String> {
        if self.secret_names().is_empty() {
            return Ok(());
        }
        let mut values = BTreeMap::new();
        for name in self.secret_names() {
            match get(&name) {
                Ok(Some(v)) => {
                    values.insert(name, v);
                }
                Ok(None) => {
                    return Err(format!(
                        "MCP server `{}` needs the secret `{name}`, which is not kept; \
                         set it with `weft mcp secret set {name}`",
                        self.name
                    ))
                }
                Err(e) => {
                    return Err(format!(
                        "MCP server `{}`: cannot read the secret `{name}`: {e}",
                        self.name
                    ))
                }
            }
        }
        for v in self.env.values_mut().chain(self.headers.values_mut()) {
            for (name, value) in &values {
                *v = v.replace(&format!("{SECRET_OPEN}{name}}}"), value);
            }
        }
        Ok(())
    }

    /// True when it runs for a session with these overrides (`name → on`).
    pub fn enabled_with(&self, overrides: &BTreeMap<String, bool>) -> bool {
        overrides.get(&self.name).copied().unwrap_or(!self.disabled)
    }
}

/// The file keeping each session's own choices: `{ "<session key>": { "<server>": bool } }`.
fn sessions_file(state_dir: &Path) -> PathBuf {
    state_dir.join("mcp-sessions.json")
}

type SessionChoices = BTreeMap<String, BTreeMap<String, bool>>;

fn read_sessions(state_dir: &Path) -> SessionChoices {
    weft_workspace::files::read_config(
        &sessions_file(state_dir),
        16 * weft_workspace::files::CONFIG_CAP,
    )
    .ok()
    .flatten()
    .and_then(|t| serde_json::from_str(&t).ok())
    .unwrap_or_default()
}

/// What a session turned on (`true`) or off (`false`) for itself.
pub fn session_overrides(state_dir: &Path, session_key: &str) -> BTreeMap<String, bool> {
    read_sessions(state_dir)
        .remove(session_key)
        .unwrap_or_default()
}

/// Changes the sessions' choices under a lock and replaces the file atomically: two
/// sessions choosing at once never lose either choice.
fn update_sessions(
    state_dir: &Path,
    change: impl FnOnce(&mut SessionChoices),
) -> Result<(), FilesError> {
    let path = sessions_file(state_dir);
    let lock = state_dir.join(".mcp-sessions.lock");
    let _lock = weft_workspace::files::lock(&lock).map_err(FilesError::io("lock", &lock))?;
    let mut all = read_sessions(state_dir);
    change(&mut all);
    let text =
        serde_json::to_string_pretty(&all).map_err(|e| FilesError::io("write", &path)(e.into()))?;
    weft_workspace::files::replace(&path, text.as_bytes()).map_err(FilesError::io("write", &path))
}

/// Records that `session_key` turns these servers on or off from its next spawn on.
pub fn set_session_overrides(
    state_dir: &Path,
    session_key: &str,
    choices: &BTreeMap<String, bool>,
) -> Result<(), FilesError> {
    if choices.is_empty() {
        return Ok(());
    }
    for name in choices.keys() {
        if !good_name(name) {
            return Err(FilesError::Invalid(format!(
                "`{name}` is not an MCP server name (letters, digits, - and _)"
            )));
        }
    }
    update_sessions(state_dir, |all| {
        all.entry(session_key.to_string())
            .or_default()
            .extend(choices.iter().map(|(k, v)| (k.clone(), *v)));
    })
}

/// Forgets a deleted session's choices (and nothing else).
pub fn forget_session(state_dir: &Path, session_key: &str) -> Result<(), FilesError> {
    if !read_sessions(state_dir).contains_key(session_key) {
        return Ok(());
    }
    update_sessions(state_dir, |all| {
        all.remove(session_key);
    })
}

/// The servers as `weft mcp list` shows them: `session_key` given, its own choices
/// count for `enabled`.
pub fn list(
    state_dir: &Path,
    workdir: Option<&Path>,
    session_key: Option<&str>,
) -> weft_protocol::McpList {
    let trusted = workdir.is_some_and(|w| weft_workspace::trust::is_trusted(state_dir, w));
    let cfg = load(state_dir, workdir, trusted);
    let overrides = session_key
        .map(|k| session_overrides(state_dir, k))
        .unwrap_or_default();
    let global = state_dir.join("mcp.json");
    let servers = cfg
        .servers
        .values()
        .map(|s| weft_protocol::McpServerInfo {
            name: s.name.clone(),
            scope: if s.source == global {
                "global"
            } else {
                "workspace"
            }
            .into(),
            source: s.source.display().to_string(),
            command: s.command.clone(),
            args: s.args.clone(),
            url: s.url.clone(),
            env_names: s.env.keys().chain(s.headers.keys()).cloned().collect(),
            secrets: s.secret_names(),
            enabled: s.enabled_with(&overrides),
        })
        .collect();
    weft_protocol::McpList {
        servers,
        problems: cfg.problems,
    }
}

/// Where the stderr of a stdio server Weft configured for `session_key` is captured
/// (the agent starts it through a small `sh` that sends its stderr there).
pub fn stderr_path(state_dir: &Path, session_key: &str, server: &str) -> PathBuf {
    let key: String = session_key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    state_dir
        .join("run")
        .join("mcp")
        .join("stderr")
        .join(key)
        .join(format!("{server}.log"))
}

/// How much of a failed server's stderr its status keeps (the end, where the reason is).
pub const STDERR_TAIL: usize = 2000;

/// What the server last wrote to stderr (its end), when Weft captured any.
pub fn captured_stderr(state_dir: &Path, session_key: &str, server: &str) -> Option<String> {
    let bytes = std::fs::read(stderr_path(state_dir, session_key, server)).ok()?;
    let text = String::from_utf8_lossy(&bytes);
    let text = text.trim();
    if text.is_empty() {
        return None;
    }
    let start = text
        .char_indices()
        .rev()
        .nth(STDERR_TAIL)
        .map_or(0, |(i, _)| i);
    Some(text[start..].to_string())
}

/// A driver passes its events through this: a failed server Weft configured gets the
/// stderr Weft captured appended to its error.
pub fn with_captured_stderr(
    event: weft_protocol::DriverEvent,
    state_dir: &Path,
    session_key: &str,
) -> weft_protocol::DriverEvent {
    use weft_protocol::{DriverEvent, McpState};
    match event {
        DriverEvent::Mcp { mut server } if server.status == McpState::Failed => {
            if let Some(err) = captured_stderr(state_dir, session_key, &server.name) {
                server.error = Some(match server.error.take() {
                    Some(reason) if !reason.is_empty() => format!("{reason}\nstderr:\n{err}"),
                    _ => format!("stderr:\n{err}"),
                });
            }
            DriverEvent::Mcp { server }
        }
        other => other,
    }
}

pub(crate) fn good_name(name: &str) -> bool {
    !name.is_empty()
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

pub(crate) fn check(name: &str, s: &McpServer) -> Result<(), &'static str> {
    if !good_name(name) {
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
        let cfg = load(home.path(), Some(ws.path()), true);
        assert_eq!(cfg.servers.keys().collect::<Vec<_>>(), ["a", "b"]);
        assert_eq!(cfg.servers["a"].command.as_deref(), Some("ws-a"));
        assert_eq!(cfg.problems.len(), 2, "{:?}", cfg.problems);
        std::fs::write(ws.path().join(".weft/mcp.json"), "{ not json")?;
        let cfg = load(home.path(), Some(ws.path()), true);
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

    #[test]
    fn an_untrusted_workspace_s_servers_do_not_load_and_are_named(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let ws = tempfile::tempdir()?;
        std::fs::write(
            home.path().join("mcp.json"),
            r#"{"mcpServers": {"a": {"command": "global-a"}}}"#,
        )?;
        std::fs::create_dir_all(ws.path().join(".weft"))?;
        std::fs::write(
            ws.path().join(".weft/mcp.json"),
            r#"{"mcpServers": {"a": {"command": "ws-a"}, "leak": {"url": "https://x.example/", "headers": {"A": "${secret:gh}"}}}}"#,
        )?;
        let cfg = load(home.path(), Some(ws.path()), false);
        assert_eq!(cfg.servers.keys().collect::<Vec<_>>(), ["a"]);
        assert_eq!(cfg.servers["a"].command.as_deref(), Some("global-a"));
        assert!(
            cfg.problems
                .iter()
                .any(|p| p.contains("a, leak not started") && p.contains("not trusted")),
            "{:?}",
            cfg.problems
        );
        Ok(())
    }

    #[test]
    fn a_fifo_as_the_workspace_file_is_named_and_never_blocks(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        let ws = tempfile::tempdir()?;
        std::fs::create_dir_all(ws.path().join(".weft"))?;
        let made = std::process::Command::new("mkfifo")
            .arg(ws.path().join(".weft/mcp.json"))
            .status()?;
        assert!(made.success());
        let cfg = load(home.path(), Some(ws.path()), true);
        assert!(cfg.servers.is_empty());
        assert!(
            cfg.problems
                .iter()
                .any(|p| p.contains("not a regular file")),
            "{:?}",
            cfg.problems
        );
        Ok(())
    }

    #[test]
    fn concurrent_session_choices_are_all_kept_and_a_deleted_session_s_go(
    ) -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        std::thread::scope(|s| {
            for i in 0..12 {
                let home = home.path();
                s.spawn(move || {
                    let choice: BTreeMap<String, bool> = [("srv".to_string(), i % 2 == 0)].into();
                    set_session_overrides(home, &format!("echo:{i}"), &choice)
                });
            }
        });
        for i in 0..12 {
            assert_eq!(
                session_overrides(home.path(), &format!("echo:{i}")).get("srv"),
                Some(&(i % 2 == 0)),
                "session {i} lost its choice"
            );
        }
        forget_session(home.path(), "echo:3")?;
        assert!(session_overrides(home.path(), "echo:3").is_empty());
        assert_eq!(session_overrides(home.path(), "echo:4").len(), 1);
        Ok(())
    }

    #[test]
    fn secrets_are_named_in_the_file_and_resolved_for_the_spawn() -> Result<(), String> {
        let mut s = McpServer {
            name: "gh".into(),
            command: Some("gh-mcp".into()),
            env: [("TOKEN".to_string(), "${secret:gh-token}".to_string())].into(),
            headers: [(
                "A".to_string(),
                "Bearer ${secret:gh-token} ${secret:x}".to_string(),
            )]
            .into(),
            ..Default::default()
        };
        assert_eq!(s.secret_names(), ["gh-token", "x"]);
        let get = |n: &str| -> Result<Option<String>, String> {
            Ok((n != "missing").then(|| format!("v-{n}")))
        };
        s.resolve_secrets(&get)?;
        assert_eq!(s.env["TOKEN"], "v-gh-token");
        assert_eq!(s.headers["A"], "Bearer v-gh-token v-x");
        let mut m = McpServer {
            name: "m".into(),
            env: [("T".to_string(), "${secret:missing}".to_string())].into(),
            ..Default::default()
        };
        let err = m.resolve_secrets(&get).err().unwrap_or_default();
        assert!(
            err.contains("`missing`") && err.contains("weft mcp secret set"),
            "{err}"
        );
        Ok(())
    }

    #[test]
    fn a_session_turns_a_server_on_or_off_for_itself() -> Result<(), Box<dyn std::error::Error>> {
        let home = tempfile::tempdir()?;
        std::fs::write(
            home.path().join("mcp.json"),
            r#"{"mcpServers": {"a": {"command": "a"}, "b": {"command": "b", "disabled": true}}}"#,
        )?;
        let on = |key: Option<&str>| -> Vec<(String, bool)> {
            list(home.path(), None, key)
                .servers
                .into_iter()
                .map(|s| (s.name, s.enabled))
                .collect()
        };
        assert_eq!(on(None), [("a".into(), true), ("b".into(), false)]);
        set_session_overrides(
            home.path(),
            "claude:1",
            &[("a".to_string(), false), ("b".to_string(), true)].into(),
        )?;
        assert_eq!(
            on(Some("claude:1")),
            [("a".into(), false), ("b".into(), true)]
        );
        assert_eq!(
            on(Some("claude:2")),
            [("a".into(), true), ("b".into(), false)]
        );
        assert!(
            set_session_overrides(home.path(), "k", &[("bad name".to_string(), true)].into())
                .is_err()
        );
        Ok(())
    }
}
