//! Where each agent keeps its sessions: the homes the library indexes.
//!
//! The ambient ones (the daemon's own environment) and every login account's own home
//! (`<WEFT_HOME>/homes/<agent>/<account id>`, see the accounts crate), found again at
//! each sweep so an account added later is indexed without a restart.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use weft_agent_spec::sessions::NativeSessions;

/// An agent whose own session files the library reads: its reader, handed to the
/// library (the daemon takes them from the driver registry). Compared by agent id.
#[derive(Clone)]
pub struct Agent(Arc<dyn NativeSessions>);

impl Agent {
    /// The agent `sessions` reads.
    pub fn new(sessions: impl NativeSessions) -> Self {
        Self(Arc::new(sessions))
    }

    /// Its agent id.
    pub fn id(&self) -> &'static str {
        self.0.agent()
    }

    /// Its reader.
    pub fn sessions(&self) -> &dyn NativeSessions {
        &*self.0
    }
}

impl From<Arc<dyn NativeSessions>> for Agent {
    fn from(sessions: Arc<dyn NativeSessions>) -> Self {
        Self(sessions)
    }
}

impl std::fmt::Debug for Agent {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.id())
    }
}

impl PartialEq for Agent {
    fn eq(&self, other: &Self) -> bool {
        self.id() == other.id()
    }
}

impl Eq for Agent {}

/// One agent home: Claude's config folder (`~/.claude`), `CODEX_HOME` (`~/.codex`), or
/// Gemini's `.gemini` folder.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    /// Whose.
    pub agent: Agent,
    /// The folder.
    pub root: PathBuf,
    /// The Weft account it belongs to; none for the ambient home.
    pub account: Option<String>,
}

impl Home {
    /// The folders under `root` that hold sessions (watched recursively).
    pub fn session_roots(&self) -> Vec<PathBuf> {
        self.agent.sessions().session_roots(&self.root)
    }

    /// Whether `path` is a session file of this home.
    pub fn owns(&self, path: &Path) -> bool {
        self.agent.sessions().owns(&self.root, path)
    }
}

/// The homes of the environment `var` describes, one per agent that has one there
/// (each agent's config-home variable, else its folder under `HOME`).
pub fn ambient_homes(agents: &[Agent], var: &dyn Fn(&str) -> Option<String>) -> Vec<Home> {
    agents
        .iter()
        .filter_map(|agent| {
            Some(Home {
                root: agent.sessions().home(var)?,
                agent: agent.clone(),
                account: None,
            })
        })
        .collect()
}

/// The login accounts' homes under `accounts` (`<WEFT_HOME>/homes`): one folder per
/// account id per agent, the agent's home in it as its reader says.
pub fn account_homes(agents: &[Agent], accounts: &Path) -> Vec<Home> {
    let mut out = Vec::new();
    for agent in agents {
        let Ok(dir) = std::fs::read_dir(accounts.join(agent.id())) else {
            continue;
        };
        let mut found: Vec<(String, PathBuf)> = dir
            .filter_map(Result::ok)
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .map(|e| (e.file_name().to_string_lossy().into_owned(), e.path()))
            .collect();
        found.sort();
        for (id, path) in found {
            out.push(Home {
                agent: agent.clone(),
                root: agent.sessions().account_home(&path),
                account: Some(id),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn agents() -> Vec<Agent> {
        vec![
            Agent::new(weft_claude::native_sessions::ClaudeSessions),
            Agent::new(weft_codex::native_sessions::CodexSessions),
            Agent::new(weft_gemini::native_sessions::GeminiSessions),
        ]
    }

    #[test]
    fn homes_follow_the_agents_variables() {
        let env = |n: &str| match n {
            "HOME" => Some("/h".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            _ => None,
        };
        let homes = ambient_homes(&agents(), &env);
        let roots: Vec<_> = homes.iter().map(|h| h.root.clone()).collect();
        assert_eq!(
            roots,
            [
                PathBuf::from("/h/.claude"),
                PathBuf::from("/c"),
                PathBuf::from("/h/.gemini")
            ]
        );
        let claude = &homes[0];
        assert!(claude.owns(Path::new("/h/.claude/projects/-w/abc.jsonl")));
        assert!(!claude.owns(Path::new("/h/.claude/projects/-w/abc/tool-results/x.jsonl")));
        assert!(!claude.owns(Path::new("/h/.claude/todos/abc.json")));
        let codex = &homes[1];
        assert!(codex.owns(Path::new("/c/archived_sessions/rollout-2026-x.jsonl")));
        assert!(codex
            .session_roots()
            .contains(&PathBuf::from("/c/archived_sessions")));
    }

    #[test]
    fn each_login_account_has_its_home() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for d in ["claude/acc1", "codex/acc2", "gemini/acc3"] {
            std::fs::create_dir_all(dir.path().join(d)).unwrap_or_else(|e| panic!("{e}"));
        }
        let agents = agents();
        let homes = account_homes(&agents, dir.path());
        let got: Vec<(Agent, PathBuf, Option<&str>)> = homes
            .iter()
            .map(|h| (h.agent.clone(), h.root.clone(), h.account.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (
                    agents[0].clone(),
                    dir.path().join("claude/acc1"),
                    Some("acc1")
                ),
                (
                    agents[1].clone(),
                    dir.path().join("codex/acc2"),
                    Some("acc2")
                ),
                (
                    agents[2].clone(),
                    dir.path().join("gemini/acc3/.gemini"),
                    Some("acc3")
                ),
            ]
        );
        assert!(account_homes(&agents, &dir.path().join("none")).is_empty());
    }
}
