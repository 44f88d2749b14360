//! Workspace trust: nothing a folder ships acts until the user trusted it.
//!
//! What counts as a grant is listed once, here ([`GRANTING`], [`GRANTING_DIRS`]): the
//! `.weft/` files that run code or approve commands, and the agents' own project
//! files that Weft would let act. Deny and ask rules only restrict, so they are not
//! grants and apply untrusted.
//!
//! The decision is kept in `$WEFT_HOME/trust.json` for a *scope*: the repository (by
//! its git common folder, so every worktree of it shares the decision) plus the
//! workspace's path inside it, or the folder itself outside git. It records the
//! hashes of the grants the user trusted: a change to any granting file is a new hash
//! and asks again. Weft's own writes (an "always allow" rule) move the recorded hash
//! along with them ([`after_own_write`]).
//!
//! A worktree's `.git` file names its repository; a folder could name someone else's
//! trusted repository that way, so the repository's back-link (`gitdir` in the
//! worktree's admin folder) must point at this folder before its scope is used.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};
use weft_protocol::{TrustGrant, WorkspaceTrust};

use crate::files::{read_config, ReadError, CONFIG_CAP};

/// The single files that grant something, relative to the workspace.
pub const GRANTING: &[&str] = &[
    ".weft/permissions.json",
    ".weft/mcp.json",
    ".weft/hooks.json",
    ".weft/native.toml",
    ".weft/worktree.toml",
    ".claude/settings.json",
    ".claude/settings.local.json",
    ".mcp.json",
    ".gemini/settings.json",
    ".codex/config.toml",
    ".env",
];

/// Folders whose every file grants something, with the kind of grant: a pack's tools,
/// a skill's scripts, and the folders in which Gemini CLI and Codex find a project's
/// own configuration (custom commands, `.env`, extensions, profiles).
pub const GRANTING_DIRS: &[(&str, &str)] = &[
    (".weft/packs", "pack"),
    (".weft/skills", "skill"),
    (".gemini", "agentConfig"),
    (".codex", "agentConfig"),
];

/// At most this many files are read under a granting folder; more is itself a grant
/// the user sees ("and N more files").
const DIR_FILES_MAX: usize = 500;

/// The trust file in a Weft home.
pub const FILE: &str = "trust.json";

/// At most this many trusted hashes are kept per scope (two worktrees on branches
/// with different `.weft/` content are both trusted without asking in turn).
const HASHES_MAX: usize = 16;

/// Why a trust decision could not be recorded.
#[derive(Debug, thiserror::Error)]
pub enum TrustError {
    /// The folder's grants changed after the user looked.
    #[error("what this folder grants changed since it was shown (hash {shown} is now {now}); look again")]
    Changed {
        /// The hash the user was shown.
        shown: String,
        /// The hash now.
        now: String,
    },
    /// Not a folder.
    #[error("{0} is not a folder")]
    NotAFolder(String),
    /// The trust file could not be read or written.
    #[error("the trust file {path}: {message}")]
    Store {
        /// Its path.
        path: String,
        /// What went wrong.
        message: String,
    },
}

/// What a folder grants, and the hash of it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Scan {
    /// The grants, in a stable order.
    pub grants: Vec<TrustGrant>,
    /// Hex SHA-256 over the granting content.
    pub hash: String,
}

fn grant(file: &str, kind: &str, detail: impl Into<String>) -> TrustGrant {
    TrustGrant {
        file: file.to_string(),
        kind: kind.to_string(),
        detail: detail.into(),
    }
}

/// One line of at most 200 characters, for a detail.
fn short(text: &str) -> String {
    let one: String = text.split_whitespace().collect::<Vec<_>>().join(" ");
    if one.chars().count() > 200 {
        format!("{}…", one.chars().take(199).collect::<String>())
    } else {
        one
    }
}

/// Scans `workdir` for what it grants.
pub fn scan(workdir: &Path) -> Scan {
    let mut grants = Vec::new();
    let mut hasher = Sha256::new();
    for rel in GRANTING {
        let path = workdir.join(rel);
        match read_config(&path, CONFIG_CAP) {
            Ok(None) => {}
            Ok(Some(text)) => {
                let (found, hashed) = grants_of(rel, &text);
                if !found.is_empty() {
                    feed(&mut hasher, rel, hashed.as_bytes());
                    grants.extend(found);
                }
            }
            Err(e) => {
                feed(&mut hasher, rel, format!("unreadable: {e}").as_bytes());
                grants.push(grant(rel, "unreadable", format!("cannot be read: {e}")));
            }
        }
    }
    for dir in GRANTING_DIRS {
        scan_dir(workdir, *dir, &mut grants, &mut hasher);
    }
    grants.sort();
    grants.dedup();
    Scan {
        grants,
        hash: hex(&hasher.finalize()),
    }
}

fn feed(hasher: &mut Sha256, rel: &str, bytes: &[u8]) {
    hasher.update(rel.as_bytes());
    hasher.update([0]);
    hasher.update((bytes.len() as u64).to_le_bytes());
    hasher.update(bytes);
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// The grants of one file, and the part of it the hash covers (the whole file, but
/// for `permissions.json` only its allow rules: deny and ask rules restrict, and
/// editing them should not ask again).
fn grants_of(rel: &str, text: &str) -> (Vec<TrustGrant>, String) {
    let whole = text.to_string();
    match rel {
        ".weft/permissions.json" => permissions(rel, text),
        ".weft/mcp.json" | ".mcp.json" => (mcp_servers(rel, text), whole),
        ".weft/hooks.json" => (hooks(rel, text), whole),
        ".weft/native.toml" => (native(rel, text), whole),
        ".weft/worktree.toml" => (toml_keys(rel, "worktree", text), whole),
        ".codex/config.toml" => (
            toml_keys(rel, "agentConfig", text)
                .into_iter()
                .map(|g| agent_config(g, "Codex"))
                .collect(),
            whole,
        ),
        ".claude/settings.json" | ".claude/settings.local.json" => {
            (json_keys(rel, text, "Claude Code"), whole)
        }
        ".gemini/settings.json" => (json_keys(rel, text, "Gemini CLI"), whole),
        ".env" => (env_names(rel, text), whole),
        _ => (Vec::new(), whole),
    }
}

fn agent_config(mut g: TrustGrant, agent: &str) -> TrustGrant {
    g.detail = format!("{agent} reads: {}", g.detail);
    g
}

fn not_parsed(rel: &str, kind: &str, e: impl std::fmt::Display) -> Vec<TrustGrant> {
    // A file Weft cannot parse still counts: the agent that reads it may parse it
    // differently, and the user should see that it is there.
    vec![grant(
        rel,
        kind,
        short(&format!("present, but not valid ({e})")),
    )]
}

fn permissions(rel: &str, text: &str) -> (Vec<TrustGrant>, String) {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return (not_parsed(rel, "allowRule", e), text.to_string()),
    };
    let allow: Vec<String> = value
        .get("allow")
        .and_then(|a| a.as_array())
        .map(|a| {
            a.iter()
                .map(|r| r.as_str().map_or_else(|| r.to_string(), str::to_string))
                .collect()
        })
        .unwrap_or_default();
    let grants = allow
        .iter()
        .map(|r| {
            grant(
                rel,
                "allowRule",
                format!("runs `{}` without asking", short(r)),
            )
        })
        .collect();
    let hashed = serde_json::to_string(&allow).unwrap_or_default();
    (grants, hashed)
}

fn mcp_servers(rel: &str, text: &str) -> Vec<TrustGrant> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return not_parsed(rel, "mcpServer", e),
    };
    let mut out = Vec::new();
    for key in ["mcpServers", "servers"] {
        let Some(servers) = value.get(key).and_then(|s| s.as_object()) else {
            continue;
        };
        for (name, s) in servers {
            let mut what = match (
                s.get("command").and_then(|c| c.as_str()),
                s.get("url").and_then(|u| u.as_str()),
            ) {
                (Some(cmd), _) => {
                    let args: Vec<String> = s
                        .get("args")
                        .and_then(|a| a.as_array())
                        .map(|a| {
                            a.iter()
                                .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    format!("`{name}` runs `{} {}`", cmd, args.join(" "))
                }
                (None, Some(url)) => format!("`{name}` connects to {url}"),
                (None, None) => format!("`{name}`"),
            };
            let secrets = secret_names(s);
            if !secrets.is_empty() {
                what.push_str(&format!(" with your secrets {}", secrets.join(", ")));
            }
            out.push(grant(rel, "mcpServer", short(&what)));
        }
    }
    out
}

/// The `${secret:NAME}` names anywhere in `value`.
fn secret_names(value: &serde_json::Value) -> Vec<String> {
    let text = value.to_string();
    let mut out: Vec<String> = Vec::new();
    let mut rest = text.as_str();
    while let Some(i) = rest.find("${secret:") {
        let after = &rest[i + "${secret:".len()..];
        let Some(end) = after.find('}') else { break };
        let name = after[..end].to_string();
        if !out.contains(&name) {
            out.push(name);
        }
        rest = &after[end + 1..];
    }
    out
}

fn hooks(rel: &str, text: &str) -> Vec<TrustGrant> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return not_parsed(rel, "hook", e),
    };
    let mut out = Vec::new();
    if let Some(events) = value.as_object() {
        for (event, list) in events {
            for h in list.as_array().into_iter().flatten() {
                let cmd = h.get("command").and_then(|c| c.as_str()).unwrap_or("?");
                out.push(grant(rel, "hook", short(&format!("{event}: runs `{cmd}`"))));
            }
        }
    }
    if out.is_empty() {
        out.push(grant(rel, "hook", "present (no hook command found)"));
    }
    out
}

fn native(rel: &str, text: &str) -> Vec<TrustGrant> {
    let value: toml::Table = match toml::from_str(text) {
        Ok(v) => v,
        Err(e) => return not_parsed(rel, "setting", e),
    };
    value
        .iter()
        .map(|(k, v)| {
            let shown = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            match k.as_str() {
                "check" => grant(
                    rel,
                    "check",
                    short(&format!(
                        "runs `{shown}` after each turn that changes files"
                    )),
                ),
                "permission" => grant(
                    rel,
                    "permissionMode",
                    short(&format!("the native agent's permission mode: {shown}")),
                ),
                _ => grant(rel, "setting", short(&format!("{k} = {shown}"))),
            }
        })
        .collect()
}

fn toml_keys(rel: &str, kind: &str, text: &str) -> Vec<TrustGrant> {
    let value: toml::Table = match toml::from_str(text) {
        Ok(v) => v,
        Err(e) => return not_parsed(rel, kind, e),
    };
    let mut out: Vec<TrustGrant> = value
        .iter()
        .map(|(k, v)| grant(rel, kind, short(&format!("{k} = {v}"))))
        .collect();
    if out.is_empty() {
        out.push(grant(rel, kind, "present (empty)"));
    }
    out
}

fn json_keys(rel: &str, text: &str, agent: &str) -> Vec<TrustGrant> {
    let value: serde_json::Value = match serde_json::from_str(text) {
        Ok(v) => v,
        Err(e) => return not_parsed(rel, "agentConfig", e),
    };
    let mut out: Vec<TrustGrant> = value
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            grant(
                rel,
                "agentConfig",
                short(&format!("{agent} reads: {k} = {v}")),
            )
        })
        .collect();
    if out.is_empty() {
        out.push(grant(
            rel,
            "agentConfig",
            format!("{agent} reads it (empty)"),
        ));
    }
    out
}

/// A `.env` file: Gemini CLI loads every variable in it (an endpoint such as
/// `GOOGLE_GEMINI_BASE_URL` included). Only the names are shown: the values may be the
/// user's own secrets.
fn env_names(rel: &str, text: &str) -> Vec<TrustGrant> {
    let names: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with('#'))
        .filter_map(|l| l.trim_start_matches("export ").split('=').next())
        .map(str::trim)
        .collect();
    if names.is_empty() {
        return Vec::new();
    }
    vec![grant(
        rel,
        "agentConfig",
        short(&format!(
            "Gemini CLI loads these variables: {}",
            names.join(", ")
        )),
    )]
}

fn scan_dir(
    workdir: &Path,
    (rel, kind): (&str, &str),
    grants: &mut Vec<TrustGrant>,
    hasher: &mut Sha256,
) {
    let root = workdir.join(rel);
    let mut files = Vec::new();
    let mut more = 0usize;
    let mut stack = vec![root.clone()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            let path = entry.path();
            // Never follow a link out of the folder: it is hashed as the link it is.
            let Ok(meta) = std::fs::symlink_metadata(&path) else {
                continue;
            };
            if meta.is_dir() {
                stack.push(path);
            } else if files.len() < DIR_FILES_MAX {
                files.push((path, meta.file_type().is_symlink()));
            } else {
                more += 1;
            }
        }
    }
    files.sort();
    let mut names = std::collections::BTreeSet::new();
    for (path, is_link) in &files {
        let inside = path.strip_prefix(workdir).unwrap_or(path);
        let inside_str = inside.to_string_lossy();
        if *is_link {
            let target = std::fs::read_link(path).unwrap_or_default();
            feed(
                hasher,
                &inside_str,
                format!("link -> {}", target.display()).as_bytes(),
            );
        } else {
            match read_config(path, CONFIG_CAP) {
                Ok(Some(text)) => feed(hasher, &inside_str, text.as_bytes()),
                Ok(None) => {}
                Err(ReadError::NotText) => {
                    let bytes = std::fs::read(path).unwrap_or_default();
                    feed(hasher, &inside_str, &bytes);
                }
                Err(e) => feed(hasher, &inside_str, format!("unreadable: {e}").as_bytes()),
            }
        }
        // A pack is a file of its own, a skill a folder: name what the user knows.
        let below = path.strip_prefix(&root).unwrap_or(path);
        if let Some(first) = below.components().next() {
            names.insert(first.as_os_str().to_string_lossy().into_owned());
        }
    }
    let agent = match rel {
        ".gemini" => Some("Gemini CLI"),
        ".codex" => Some("Codex"),
        _ => None,
    };
    for name in names {
        // A file listed on its own (`.gemini/settings.json`) already has its grants.
        if GRANTING.contains(&format!("{rel}/{name}").as_str()) {
            continue;
        }
        match agent {
            Some(agent) => grants.push(grant(rel, kind, format!("{agent} reads: {name}"))),
            None => grants.push(grant(rel, kind, name)),
        }
    }
    if more > 0 {
        feed(hasher, rel, format!("{more} more").as_bytes());
        grants.push(grant(rel, kind, format!("and {more} more files")));
    }
}

/// The folder as the decision names it: canonical when it exists.
fn canonical(workdir: &Path) -> PathBuf {
    std::fs::canonicalize(workdir).unwrap_or_else(|_| workdir.to_path_buf())
}

/// What a decision for `workdir` is kept for: `git:<common dir>:<path inside>` or
/// `dir:<folder>`.
pub fn scope(workdir: &Path) -> String {
    let dir = canonical(workdir);
    for root in dir.ancestors() {
        let dotgit = root.join(".git");
        let Ok(meta) = std::fs::symlink_metadata(&dotgit) else {
            continue;
        };
        // As git reads it: a `.git` folder without a HEAD is no repository (the
        // sandbox mounts an empty one where `.git` is missing) and the search goes on.
        let common = if meta.is_dir() {
            if !dotgit.join("HEAD").exists() {
                continue;
            }
            Some(dotgit.clone())
        } else if meta.is_file() {
            worktree_common_dir(&dotgit)
        } else {
            None
        };
        let Some(common) = common else {
            break;
        };
        let inside = dir.strip_prefix(root).unwrap_or(Path::new(""));
        return format!("git:{}:{}", canonical(&common).display(), inside.display());
    }
    format!("dir:{}", dir.display())
}

/// The common git folder of a worktree whose `.git` file is `dotgit`, when the
/// repository's own record of that worktree points back at it.
fn worktree_common_dir(dotgit: &Path) -> Option<PathBuf> {
    let text = read_config(dotgit, 4096).ok()??;
    let gitdir = text.trim().strip_prefix("gitdir:")?.trim();
    let base = dotgit.parent()?;
    let admin = canonical(&base.join(gitdir));
    let common_rel = read_config(&admin.join("commondir"), 4096).ok()??;
    let back = read_config(&admin.join("gitdir"), 4096).ok()??;
    if canonical(Path::new(back.trim())) != canonical(dotgit) {
        return None;
    }
    Some(canonical(&admin.join(common_rel.trim())))
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct Record {
    /// The folder the user looked at last (for `weft trust --show` and the record).
    folder: String,
    /// Trusted hashes, newest last.
    trusted: Vec<String>,
    /// The hash the user said no to.
    declined: Option<String>,
    /// When the last decision was made (ms since the epoch).
    at: u64,
}

#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", default)]
struct TrustFile {
    scopes: BTreeMap<String, Record>,
}

fn now_ms() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_millis() as u64)
        .unwrap_or(0)
}

fn store_error(path: &Path, message: impl std::fmt::Display) -> TrustError {
    TrustError::Store {
        path: path.display().to_string(),
        message: message.to_string(),
    }
}

fn read_store(path: &Path) -> Result<TrustFile, TrustError> {
    match read_config(path, 16 * CONFIG_CAP) {
        Ok(None) => Ok(TrustFile::default()),
        Ok(Some(text)) => serde_json::from_str(&text).map_err(|e| store_error(path, e)),
        Err(e) => Err(store_error(path, e)),
    }
}

/// Runs `change` on the trust file under an exclusive lock and replaces it atomically
/// (a temp file in the same folder, then rename): two writers never lose an update.
fn update<T>(state_dir: &Path, change: impl FnOnce(&mut TrustFile) -> T) -> Result<T, TrustError> {
    let path = state_dir.join(FILE);
    std::fs::create_dir_all(state_dir).map_err(|e| store_error(&path, e))?;
    let lock =
        crate::files::lock(&state_dir.join(".trust.lock")).map_err(|e| store_error(&path, e))?;
    let mut file = read_store(&path)?;
    let out = change(&mut file);
    let text = serde_json::to_string_pretty(&file).map_err(|e| store_error(&path, e))?;
    crate::files::replace(&path, text.as_bytes()).map_err(|e| store_error(&path, e))?;
    drop(lock);
    Ok(out)
}

/// The trust of `workdir` as the user decided it, scanned now.
pub fn status(state_dir: &Path, workdir: &Path) -> WorkspaceTrust {
    let scan = scan(workdir);
    let key = scope(workdir);
    let record = read_store(&state_dir.join(FILE))
        .ok()
        .and_then(|mut f| f.scopes.remove(&key));
    make(workdir, key, scan, record.as_ref())
}

fn make(workdir: &Path, key: String, scan: Scan, record: Option<&Record>) -> WorkspaceTrust {
    let trusted = scan.grants.is_empty() || record.is_some_and(|r| r.trusted.contains(&scan.hash));
    let declined = !trusted && record.is_some_and(|r| r.declined.as_ref() == Some(&scan.hash));
    WorkspaceTrust {
        trusted,
        grants: scan.grants,
        hash: scan.hash,
        workdir: canonical(workdir).display().to_string(),
        scope: key,
        declined,
    }
}

/// True when what `workdir` grants takes effect.
pub fn is_trusted(state_dir: &Path, workdir: &Path) -> bool {
    status(state_dir, workdir).trusted
}

fn check_folder(workdir: &Path) -> Result<(), TrustError> {
    if workdir.is_dir() {
        Ok(())
    } else {
        Err(TrustError::NotAFolder(workdir.display().to_string()))
    }
}

/// Trusts what `workdir` grants now, which must be what the user saw (`hash`).
pub fn trust(state_dir: &Path, workdir: &Path, hash: &str) -> Result<WorkspaceTrust, TrustError> {
    check_folder(workdir)?;
    let scan = scan(workdir);
    if scan.hash != hash {
        return Err(TrustError::Changed {
            shown: hash.to_string(),
            now: scan.hash,
        });
    }
    let key = scope(workdir);
    let folder = canonical(workdir).display().to_string();
    update(state_dir, |f| {
        let r = f.scopes.entry(key.clone()).or_default();
        record_trusted(r, &scan.hash, folder);
        make(workdir, key.clone(), scan.clone(), Some(r))
    })
}

fn record_trusted(r: &mut Record, hash: &str, folder: String) {
    r.trusted.retain(|h| h != hash);
    r.trusted.push(hash.to_string());
    let extra = r.trusted.len().saturating_sub(HASHES_MAX);
    r.trusted.drain(..extra);
    r.declined = None;
    r.folder = folder;
    r.at = now_ms();
}

/// Says no to what `workdir` grants now (`hash`, as the user saw it).
pub fn decline(state_dir: &Path, workdir: &Path, hash: &str) -> Result<WorkspaceTrust, TrustError> {
    check_folder(workdir)?;
    let scan = scan(workdir);
    if scan.hash != hash {
        return Err(TrustError::Changed {
            shown: hash.to_string(),
            now: scan.hash,
        });
    }
    let key = scope(workdir);
    let folder = canonical(workdir).display().to_string();
    update(state_dir, |f| {
        let r = f.scopes.entry(key.clone()).or_default();
        r.trusted.retain(|h| *h != scan.hash);
        r.declined = Some(scan.hash.clone());
        r.folder = folder;
        r.at = now_ms();
        make(workdir, key.clone(), scan.clone(), Some(r))
    })
}

/// Forgets every decision for `workdir`'s scope.
pub fn revoke(state_dir: &Path, workdir: &Path) -> Result<WorkspaceTrust, TrustError> {
    let key = scope(workdir);
    update(state_dir, |f| {
        f.scopes.remove(&key);
    })?;
    Ok(status(state_dir, workdir))
}

/// After Weft itself wrote a granting file of `workdir` (an "always allow" rule):
/// when the folder was trusted before (`before`, taken just before the write), the new
/// content is trusted too, so the user's own choice does not ask again. An untrusted
/// folder stays untrusted.
pub fn after_own_write(
    state_dir: &Path,
    workdir: &Path,
    before: &WorkspaceTrust,
) -> Result<(), TrustError> {
    if !before.trusted {
        return Ok(());
    }
    let scan = scan(workdir);
    if scan.hash == before.hash || scan.grants.is_empty() {
        return Ok(());
    }
    let key = scope(workdir);
    let folder = canonical(workdir).display().to_string();
    update(state_dir, |f| {
        let r = f.scopes.entry(key).or_default();
        record_trusted(r, &scan.hash, folder);
    })
}

#[cfg(test)]
#[path = "trust_tests.rs"]
mod tests;
