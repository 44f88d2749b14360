//! Domain packs: what the agent can do, what it must guard, how it knows it is done.
//! The loop knows no domain word; every tool name it runs comes from a pack (or from
//! the loop's own domain-free tools: the plan, questions to the user).

pub mod coding;
pub mod data;
pub mod declarative;
pub mod notes;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::settings::Settings;
use crate::tools::{ToolRef, Workspace};

/// Whether mutating calls run at once or ask the user first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PermissionMode {
    /// Every call runs.
    Auto,
    /// Mutating calls ask first (read-only ones run).
    #[default]
    Ask,
}

impl PermissionMode {
    /// `auto` / `ask`.
    pub fn parse(s: &str) -> Option<Self> {
        match s.trim() {
            "auto" | "allow" | "yolo" => Some(Self::Auto),
            "ask" | "confirm" => Some(Self::Ask),
            _ => None,
        }
    }
}

/// A domain: tools, prompt, context files, verify, policy, permission defaults.
pub trait DomainPack: Send + Sync {
    /// Its name (`coding`, `notes`, …).
    fn name(&self) -> &str;
    /// What it tells the model about its domain.
    fn prompt(&self) -> String;
    /// Files looked for from the workdir upward and put in the prompt.
    fn context_files(&self) -> Vec<String> {
        vec!["AGENTS.md".into(), "CLAUDE.md".into()]
    }
    /// Its tools.
    fn tools(&self) -> Vec<ToolRef>;
    /// The pre-tool policy: `Err(reason)` refuses the call (the model is told why).
    fn policy(&self, tool: &str, input: &Value, workspace: &Workspace) -> Result<(), String> {
        let _ = (tool, input, workspace);
        Ok(())
    }
    /// The command that checks the work once the model is done, if any (run in the
    /// workspace; a failure goes back to the model, at most twice). `settings` are the
    /// workspace's (defaults in a workspace not trusted).
    fn verify_command(&self, settings: &Settings) -> Option<String> {
        let _ = settings;
        None
    }
    /// The MCP servers it offers by name; None: every configured server.
    fn mcp_servers(&self) -> Option<Vec<String>> {
        None
    }
    /// The permission mode when the session sets none.
    fn permission_default(&self) -> PermissionMode {
        PermissionMode::Ask
    }
}

/// The packs Weft ships, by name.
pub fn builtin(name: &str) -> Option<Arc<dyn DomainPack>> {
    match name {
        "coding" => Some(Arc::new(coding::Coding)),
        "notes" => Some(Arc::new(notes::Notes)),
        "data" => Some(Arc::new(data::Data)),
        _ => None,
    }
}

/// Names of the packs Weft ships.
pub const BUILTIN: &[&str] = &["coding", "notes", "data"];

/// The default pack.
pub const DEFAULT: &str = "coding";

/// The pack called `name`: a built-in one, else a declarative pack from the
/// workspace's `.weft/packs/` (`workdir`: only a workspace the user trusted) or the
/// global `<home>/packs/`.
pub fn find(
    name: &str,
    workdir: Option<&Path>,
    home: &Path,
) -> Result<Arc<dyn DomainPack>, String> {
    if let Some(p) = builtin(name) {
        return Ok(p);
    }
    if let Some(p) = declarative::find(name, workdir, home)? {
        return Ok(p);
    }
    let mut names: Vec<String> = BUILTIN.iter().map(|s| s.to_string()).collect();
    names.extend(declarative::names(workdir, home));
    Err(format!(
        "no pack named {name:?}; the packs are: {}",
        names.join(", ")
    ))
}

/// Every pack a session in `workdir` (a trusted workspace) can use: the built-in
/// ones, then declarative ones.
pub fn all_names(workdir: Option<&Path>, home: &Path) -> Vec<String> {
    let mut names: Vec<String> = BUILTIN.iter().map(|s| s.to_string()).collect();
    for n in declarative::names(workdir, home) {
        if !names.contains(&n) {
            names.push(n);
        }
    }
    names
}
