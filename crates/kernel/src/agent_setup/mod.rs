//! Importing what the user set up in the agents themselves (`importAgentSetup`, `weft
//! mcp import`, `weft skills import`): the MCP servers of each agent's own files and
//! the skills of its own skills folders under `HOME`, brought into Weft so that every
//! agent gets them.
//!
//! Where to look comes from the agents' specs (`own_mcp`, `skills`): this module names
//! no agent. What is already in Weft is never changed: a server or skill whose name
//! Weft has is reported and left; the first agent's of a name wins over a later one's.
//! Servers are added to `$WEFT_HOME/mcp.json` under its lock, its other entries and
//! keys kept; a value that looks like a secret is never copied (see [`secrets`]): the
//! file names it `${secret:NAME}`, and the value the agent's file held is handed to
//! the caller's secret keeper (the OS secret store), so the server works as it did.
//! An agent's file that cannot be read or parsed is named in `problems` and skipped.

pub mod parse;
pub mod secrets;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use serde_json::Value as Json;
use weft_agent_spec::spec::{AgentSpec, SkillsDir};
use weft_protocol::{AgentSetupImport, ImportOutcome, ImportedMcpServer, ImportedSkill};

use crate::error::FilesError;
use crate::mcp::McpServer;

/// What to import.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Options {
    /// Only report.
    pub dry_run: bool,
    /// The MCP servers.
    pub servers: bool,
    /// The skills.
    pub skills: bool,
}

/// An agent's file can be large (Claude keeps its whole state in `~/.claude.json`).
const AGENT_FILE_CAP: u64 = 64 * weft_workspace::files::CONFIG_CAP;

/// Keeps one secret (its name, its value) where `${secret:NAME}` finds it; why not.
pub type SecretKeeper<'a> = &'a (dyn Fn(&str, &str) -> Result<(), String> + Sync);

/// Imports into `state_dir` (`$WEFT_HOME`) what `specs`' agents keep under `home`,
/// each secret value found handed to `keep` (not on a dry run).
/// Fails only when Weft's own MCP file cannot be read, parsed or written (it is then
/// left as it was); everything about the agents' files is in the report.
pub fn import(
    state_dir: &Path,
    home: Option<&Path>,
    specs: &[AgentSpec],
    options: Options,
    keep: SecretKeeper,
) -> Result<AgentSetupImport, FilesError> {
    let mcp_file = state_dir.join("mcp.json");
    let mut report = AgentSetupImport {
        dry_run: options.dry_run,
        mcp_file: mcp_file.display().to_string(),
        ..AgentSetupImport::default()
    };
    let Some(home) = home else {
        report
            .problems
            .push("HOME is not set: the agents' files cannot be found".into());
        return Ok(report);
    };
    if options.servers {
        import_servers(state_dir, home, specs, options.dry_run, keep, &mut report)?;
    }
    if options.skills {
        import_skills(state_dir, home, specs, options.dry_run, &mut report);
    }
    Ok(report)
}

/// Weft's global MCP file as JSON (an empty object when there is none); one that
/// does not parse is an error, so it is never overwritten.
fn read_weft_file(path: &Path) -> Result<serde_json::Map<String, Json>, FilesError> {
    let text = weft_workspace::files::read_config(path, weft_workspace::files::CONFIG_CAP)
        .map_err(|e| FilesError::Invalid(format!("{}: cannot read it ({e})", path.display())))?;
    let Some(text) = text else {
        return Ok(serde_json::Map::new());
    };
    match serde_json::from_str(&text) {
        Ok(Json::Object(m)) => Ok(m),
        Ok(_) | Err(_) => Err(FilesError::Invalid(format!(
            "{}: not a valid mcp.json; fix it before importing (nothing was changed)",
            path.display()
        ))),
    }
}

/// The names of the servers a Weft MCP file configures (under `mcpServers` or
/// `servers`, usable or not).
fn names_in(file: &serde_json::Map<String, Json>) -> BTreeSet<String> {
    ["mcpServers", "servers"]
        .iter()
        .filter_map(|k| file.get(*k).and_then(Json::as_object))
        .flat_map(|m| m.keys().cloned())
        .collect()
}

fn import_servers(
    state_dir: &Path,
    home: &Path,
    specs: &[AgentSpec],
    dry_run: bool,
    keep: SecretKeeper,
    report: &mut AgentSetupImport,
) -> Result<(), FilesError> {
    let path = state_dir.join("mcp.json");
    // Values to keep once the file is written (a failed write keeps none).
    let mut found_secrets: Vec<(String, String)> = Vec::new();
    let existing = names_in(&read_weft_file(&path)?);
    let mut taken: Vec<(String, String)> = Vec::new(); // name, agent
    let mut to_add: Vec<McpServer> = Vec::new();
    for spec in specs {
        for own in &spec.own_mcp {
            let file = home.join(&own.file);
            let text = match weft_workspace::files::read_config(&file, AGENT_FILE_CAP) {
                Ok(Some(t)) => t,
                Ok(None) => continue,
                Err(e) => {
                    report
                        .problems
                        .push(format!("{}: cannot read it ({e}); skipped", file.display()));
                    continue;
                }
            };
            let found = match parse::servers(own.format, &text) {
                Ok(f) => f,
                Err(e) => {
                    report
                        .problems
                        .push(format!("{}: {e}; skipped", file.display()));
                    continue;
                }
            };
            for f in found {
                let mut entry = ImportedMcpServer {
                    name: f.name.clone(),
                    agent: spec.id.clone(),
                    source: file.display().to_string(),
                    ..ImportedMcpServer::default()
                };
                let mut server = match f.server {
                    Ok(s) => s,
                    Err(why) => {
                        entry.outcome = ImportOutcome::Unsupported;
                        entry.note = Some(why);
                        report.servers.push(entry);
                        continue;
                    }
                };
                entry.command.clone_from(&server.command);
                entry.args.clone_from(&server.args);
                entry.url.clone_from(&server.url);
                entry.env_names = server
                    .env
                    .keys()
                    .chain(server.headers.keys())
                    .cloned()
                    .collect();
                let (outcome, note) = if let Err(why) = crate::mcp::check(&f.name, &server) {
                    (ImportOutcome::Unsupported, Some(format!("it {why}")))
                } else if existing.contains(&f.name) {
                    (
                        ImportOutcome::Exists,
                        Some(format!("Weft already has a server `{}`", f.name)),
                    )
                } else if let Some((_, first)) = taken.iter().find(|(n, _)| *n == f.name) {
                    (
                        ImportOutcome::Duplicate,
                        Some(format!("{first}'s server of this name is imported")),
                    )
                } else {
                    let found = secrets::keep_out_with_values(&f.name, &mut server);
                    entry.secrets = found.iter().map(|(n, _)| n.clone()).collect();
                    let mut notes = Vec::new();
                    // Named, with no value here (the agent read it from its own
                    // environment): the user sets it.
                    let to_set: Vec<String> = found
                        .iter()
                        .filter(|(_, v)| v.is_none())
                        .map(|(n, _)| format!("`weft mcp secret set {n} --stdin`"))
                        .collect();
                    let moved: Vec<&str> = found
                        .iter()
                        .filter(|(_, v)| v.is_some())
                        .map(|(n, _)| n.as_str())
                        .collect();
                    if !moved.is_empty() {
                        notes.push(format!(
                            "{} the secret store as {}, not the file",
                            if dry_run {
                                "would move secrets into"
                            } else {
                                "secrets go into"
                            },
                            moved.join(", ")
                        ));
                    }
                    if !to_set.is_empty() {
                        notes.push(format!(
                            "set what the agent took from its environment with {}",
                            to_set.join(", ")
                        ));
                    }
                    found_secrets.extend(found.into_iter().filter_map(|(n, v)| v.map(|v| (n, v))));
                    if !f.left_out.is_empty() {
                        notes.push(format!(
                            "left out (Weft does not set them): {}",
                            f.left_out.join(", ")
                        ));
                    }
                    server.name = f.name.clone();
                    taken.push((f.name.clone(), spec.id.clone()));
                    to_add.push(server);
                    (
                        ImportOutcome::Added,
                        (!notes.is_empty()).then(|| notes.join("; ")),
                    )
                };
                entry.outcome = outcome;
                entry.note = note;
                report.servers.push(entry);
            }
        }
    }
    if dry_run || to_add.is_empty() {
        return Ok(());
    }
    write_servers(state_dir, &to_add)?;
    for (name, value) in found_secrets {
        if let Err(why) = keep(&name, &value) {
            report.problems.push(format!(
                "{name} could not go into the secret store ({why}); set it with `weft mcp secret set {name} --stdin`"
            ));
        }
    }
    Ok(())
}

/// Adds `servers` to `$WEFT_HOME/mcp.json` under its lock, keeping everything there
/// (a server that appeared there meanwhile wins).
fn write_servers(state_dir: &Path, servers: &[McpServer]) -> Result<(), FilesError> {
    let path = state_dir.join("mcp.json");
    std::fs::create_dir_all(state_dir).map_err(FilesError::io("create", state_dir))?;
    let lock = state_dir.join(".mcp.lock");
    let _lock = weft_workspace::files::lock(&lock).map_err(FilesError::io("lock", &lock))?;
    let mut file = read_weft_file(&path)?;
    let existing = names_in(&file);
    let list = file
        .entry("mcpServers")
        .or_insert_with(|| Json::Object(serde_json::Map::new()));
    let Json::Object(list) = list else {
        return Err(FilesError::Invalid(format!(
            "{}: its `mcpServers` is not an object; fix it before importing",
            path.display()
        )));
    };
    for s in servers {
        if existing.contains(&s.name) {
            continue;
        }
        let value =
            serde_json::to_value(s).map_err(|e| FilesError::io("write", &path)(e.into()))?;
        list.insert(s.name.clone(), value);
    }
    let text = serde_json::to_string_pretty(&Json::Object(file))
        .map_err(|e| FilesError::io("write", &path)(e.into()))?;
    weft_workspace::files::replace(&path, text.as_bytes()).map_err(FilesError::io("write", &path))
}

/// Each agent's own skills folders under `home`, each once, with the first agent
/// whose spec names it.
fn skill_folders<'a>(home: &Path, specs: &'a [AgentSpec]) -> Vec<(PathBuf, &'a str)> {
    let mut out: Vec<(PathBuf, &str)> = Vec::new();
    for spec in specs {
        for dir in &spec.skills {
            let (SkillsDir::Both(rel) | SkillsDir::Home(rel)) = dir;
            let folder = home.join(rel);
            if !out.iter().any(|(f, _)| *f == folder) {
                out.push((folder, &spec.id));
            }
        }
    }
    out
}

fn import_skills(
    state_dir: &Path,
    home: &Path,
    specs: &[AgentSpec],
    dry_run: bool,
    report: &mut AgentSetupImport,
) {
    let weft_roots: Vec<PathBuf> = crate::skills::roots(state_dir, None)
        .into_iter()
        .map(|(_, r)| r)
        .collect();
    let mut existing: BTreeSet<String> = crate::skills::find(state_dir, None)
        .into_iter()
        .map(|s| s.name)
        .collect();
    if let Ok(entries) = std::fs::read_dir(state_dir.join("skills")) {
        existing.extend(
            entries
                .flatten()
                .map(|e| e.file_name().to_string_lossy().to_string()),
        );
    }
    let mut taken: Vec<(String, String)> = Vec::new();
    for (folder, agent) in skill_folders(home, specs) {
        let Ok(entries) = std::fs::read_dir(&folder) else {
            continue;
        };
        let mut dirs: Vec<PathBuf> = entries
            .flatten()
            .map(|e| e.path())
            .filter(|p| {
                !p.file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with('.'))
            })
            // Weft's own skills, linked there for the agent, are not the user's.
            .filter(|p| !crate::skills::is_weft_link(p, &weft_roots))
            .filter(|p| p.is_dir())
            .collect();
        dirs.sort();
        for dir in dirs {
            let folder_name = dir
                .file_name()
                .map(|n| n.to_string_lossy().to_string())
                .unwrap_or_default();
            let mut entry = ImportedSkill {
                name: folder_name,
                agent: agent.to_string(),
                source: dir.display().to_string(),
                ..ImportedSkill::default()
            };
            let md = dir.join("SKILL.md");
            let front = match std::fs::read_to_string(&md) {
                Ok(text) => crate::skills::front_matter(&text),
                Err(e) => {
                    entry.outcome = ImportOutcome::Unsupported;
                    entry.note = Some(format!("no readable SKILL.md ({e})"));
                    report.skills.push(entry);
                    continue;
                }
            };
            let Some((name, description)) = front else {
                entry.outcome = ImportOutcome::Unsupported;
                entry.note = Some(
                    "its SKILL.md has no front matter with a `name` (---\\nname: …\\n---)".into(),
                );
                report.skills.push(entry);
                continue;
            };
            entry.name.clone_from(&name);
            entry.description = description;
            (entry.outcome, entry.note) = if !crate::skills::good_name(&name) {
                (
                    ImportOutcome::Unsupported,
                    Some(format!(
                        "`{name}` is not a skill name (lowercase letters, digits and -, at most 64)"
                    )),
                )
            } else if existing.contains(&name) {
                (
                    ImportOutcome::Exists,
                    Some(format!("Weft already has a skill `{name}`")),
                )
            } else if let Some((_, first)) = taken.iter().find(|(n, _)| *n == name) {
                (
                    ImportOutcome::Duplicate,
                    Some(format!("{first}'s skill of this name is imported")),
                )
            } else if dry_run {
                taken.push((name.clone(), agent.to_string()));
                (ImportOutcome::Added, None)
            } else {
                match crate::skills::add(state_dir, &dir) {
                    Ok(_) => {
                        taken.push((name.clone(), agent.to_string()));
                        (ImportOutcome::Added, None)
                    }
                    Err(e) => (ImportOutcome::Failed, Some(e.to_string())),
                }
            };
            report.skills.push(entry);
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests;
