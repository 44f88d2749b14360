//! Packs a user writes with no Rust: a TOML file in the workspace's `.weft/packs/` (a
//! workspace the user trusted only: a pack names a verify command and a permission
//! default) or the global `<WEFT_HOME>/packs/` (the workspace's wins), naming its prompt, context
//! files, which built-in tools it offers, which shipped policies apply, its verify
//! command and its permission default.
//!
//! ```toml
//! # .weft/packs/docs.toml
//! description = "Keeps the documentation in docs/ true"
//! prompt = "You maintain the documentation in docs/. Check every claim against the code."
//! context_files = ["AGENTS.md", "docs/STYLE.md"]
//! tools = ["read", "ls", "glob", "grep", "edit", "write"]
//! policies = ["read-before-edit"]
//! verify = "npx markdownlint docs"
//! permission = "auto"
//! mcp_servers = ["docs-search"]   # from mcp.json; absent: every server
//! ```

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde::Deserialize;
use serde_json::Value;

use super::{builtin, DomainPack, PermissionMode, BUILTIN};
use crate::tools::{ToolRef, Workspace};

/// What a pack file says.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct PackFile {
    /// Its name (default: the file's name).
    pub name: Option<String>,
    /// One line about it.
    pub description: Option<String>,
    /// Its prompt.
    pub prompt: String,
    /// Context files (default: AGENTS.md, CLAUDE.md).
    pub context_files: Option<Vec<String>>,
    /// Built-in tools it offers, by name.
    pub tools: Vec<String>,
    /// Shipped policies that apply: `read-before-edit`, `search-before-add`,
    /// `schema-before-query`.
    pub policies: Vec<String>,
    /// The verify command.
    pub verify: Option<String>,
    /// `ask` or `auto`.
    pub permission: Option<String>,
    /// MCP servers it offers (names in mcp.json); absent: every configured one.
    pub mcp_servers: Option<Vec<String>>,
}

/// A pack loaded from TOML.
pub struct Declarative {
    name: String,
    file: PackFile,
    tools: Vec<ToolRef>,
    policies: Vec<Arc<dyn DomainPack>>,
    permission: PermissionMode,
}

const POLICIES: &[(&str, &str)] = &[
    ("read-before-edit", "coding"),
    ("search-before-add", "notes"),
    ("schema-before-query", "data"),
];

fn dirs(workdir: Option<&Path>, home: &Path) -> Vec<PathBuf> {
    workdir
        .map(|w| w.join(".weft").join("packs"))
        .into_iter()
        .chain([home.join("packs")])
        .collect()
}

/// Every built-in tool, by name, from the shipped packs.
fn catalog() -> Vec<ToolRef> {
    BUILTIN
        .iter()
        .filter_map(|n| builtin(n))
        .flat_map(|p| p.tools())
        .collect()
}

impl Declarative {
    /// Loads `path` (its name defaults to the file stem).
    pub fn load(path: &Path) -> Result<Self, String> {
        let text = weft_workspace::files::read_config(path, weft_workspace::files::CONFIG_CAP)
            .map_err(|e| format!("{}: {e}", path.display()))?
            .ok_or_else(|| format!("{}: it is gone", path.display()))?;
        let file: PackFile =
            toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
        let name = file.name.clone().unwrap_or_else(|| {
            path.file_stem()
                .unwrap_or_default()
                .to_string_lossy()
                .into_owned()
        });
        if file.prompt.trim().is_empty() {
            return Err(format!("{}: the pack has no prompt", path.display()));
        }
        let all = catalog();
        let mut tools = Vec::new();
        for t in &file.tools {
            match all.iter().find(|x| x.name() == t) {
                Some(tool) => tools.push(tool.clone()),
                None => {
                    let known: Vec<&str> = all.iter().map(|x| x.name()).collect();
                    return Err(format!(
                        "{}: no built-in tool named {t:?} (known: {})",
                        path.display(),
                        known.join(", ")
                    ));
                }
            }
        }
        let mut policies = Vec::new();
        for p in &file.policies {
            let Some((_, owner)) = POLICIES.iter().find(|(n, _)| n == p) else {
                let known: Vec<&str> = POLICIES.iter().map(|(n, _)| *n).collect();
                return Err(format!(
                    "{}: no policy named {p:?} (known: {})",
                    path.display(),
                    known.join(", ")
                ));
            };
            policies.extend(builtin(owner));
        }
        let permission = match &file.permission {
            Some(p) => PermissionMode::parse(p).ok_or_else(|| {
                format!(
                    "{}: permission must be ask or auto, not {p:?}",
                    path.display()
                )
            })?,
            None => PermissionMode::Ask,
        };
        Ok(Self {
            name,
            file,
            tools,
            policies,
            permission,
        })
    }
}

impl DomainPack for Declarative {
    fn name(&self) -> &str {
        &self.name
    }

    fn prompt(&self) -> String {
        self.file.prompt.clone()
    }

    fn context_files(&self) -> Vec<String> {
        self.file
            .context_files
            .clone()
            .unwrap_or_else(|| vec!["AGENTS.md".into(), "CLAUDE.md".into()])
    }

    fn tools(&self) -> Vec<ToolRef> {
        self.tools.clone()
    }

    fn policy(&self, tool: &str, input: &Value, ws: &Workspace) -> Result<(), String> {
        for p in &self.policies {
            p.policy(tool, input, ws)?;
        }
        Ok(())
    }

    fn verify_command(&self, _settings: &crate::settings::Settings) -> Option<String> {
        self.file.verify.clone().filter(|v| !v.trim().is_empty())
    }

    fn permission_default(&self) -> PermissionMode {
        self.permission
    }

    fn mcp_servers(&self) -> Option<Vec<String>> {
        self.file.mcp_servers.clone()
    }
}

/// The declarative pack called `name`, if a file defines it (an error when the file
/// is there but wrong, so a typo is seen). `workdir`: a trusted workspace's, else none.
pub fn find(
    name: &str,
    workdir: Option<&Path>,
    home: &Path,
) -> Result<Option<Arc<dyn DomainPack>>, String> {
    for dir in dirs(workdir, home) {
        let path = dir.join(format!("{name}.toml"));
        if std::fs::symlink_metadata(&path).is_ok() {
            return Declarative::load(&path).map(|p| Some(Arc::new(p) as Arc<dyn DomainPack>));
        }
    }
    Ok(None)
}

/// Names of the declarative packs found (`workdir`: a trusted workspace's, else none).
pub fn names(workdir: Option<&Path>, home: &Path) -> Vec<String> {
    let mut out = Vec::new();
    for dir in dirs(workdir, home) {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<String> = entries
            .flatten()
            .filter_map(|e| {
                e.file_name()
                    .to_str()?
                    .strip_suffix(".toml")
                    .map(String::from)
            })
            .collect();
        found.sort();
        for n in found {
            if !out.contains(&n) {
                out.push(n);
            }
        }
    }
    out
}
