//! Where each agent keeps its sessions: the homes the library indexes.
//!
//! The ambient ones (the daemon's own environment) and every login account's own home
//! (`<WEFT_HOME>/homes/<agent>/<account id>`, see the accounts crate), found again at
//! each sweep so an account added later is indexed without a restart.

use std::path::{Path, PathBuf};

/// An agent whose own session files the library reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Agent {
    /// Claude Code.
    Claude,
    /// Codex.
    Codex,
    /// Gemini CLI.
    Gemini,
}

impl Agent {
    /// Its agent id.
    pub fn id(self) -> &'static str {
        match self {
            Agent::Claude => "claude",
            Agent::Codex => "codex",
            Agent::Gemini => "gemini",
        }
    }

    /// The agent named `id`.
    pub fn parse(id: &str) -> Option<Agent> {
        match id {
            "claude" => Some(Agent::Claude),
            "codex" => Some(Agent::Codex),
            "gemini" => Some(Agent::Gemini),
            _ => None,
        }
    }
}

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
        match self.agent {
            Agent::Claude => vec![self.root.join("projects")],
            Agent::Codex => vec![
                self.root.join("sessions"),
                self.root.join("archived_sessions"),
            ],
            Agent::Gemini => vec![self.root.join("tmp")],
        }
    }

    /// Whether `path` is a session file of this home.
    pub fn owns(&self, path: &Path) -> bool {
        let Ok(rel) = path.strip_prefix(&self.root) else {
            return false;
        };
        let name = path
            .file_name()
            .map(|n| n.to_string_lossy())
            .unwrap_or_default();
        let first = rel
            .components()
            .next()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .unwrap_or_default();
        match self.agent {
            Agent::Claude => {
                first == "projects"
                    && name.ends_with(".jsonl")
                    && !rel.components().any(|c| c.as_os_str() == "tool-results")
            }
            Agent::Codex => {
                (first == "sessions" || first == "archived_sessions")
                    && name.starts_with("rollout-")
                    && name.ends_with(".jsonl")
            }
            Agent::Gemini => {
                first == "tmp"
                    && rel.components().any(|c| c.as_os_str() == "chats")
                    && (name.ends_with(".jsonl") || name.ends_with(".json"))
            }
        }
    }
}

/// The homes of the environment `var` describes: `CLAUDE_CONFIG_DIR` else
/// `~/.claude`; `CODEX_HOME` else `~/.codex`; `GEMINI_CLI_HOME/.gemini` else
/// `~/.gemini`.
pub fn ambient_homes(var: &dyn Fn(&str) -> Option<String>) -> Vec<Home> {
    let get = |n: &str| var(n).filter(|v| !v.is_empty()).map(PathBuf::from);
    let home = get("HOME");
    let mut out = Vec::new();
    let mut push = |agent, root: Option<PathBuf>| {
        if let Some(root) = root {
            out.push(Home {
                agent,
                root,
                account: None,
            });
        }
    };
    push(
        Agent::Claude,
        get("CLAUDE_CONFIG_DIR").or_else(|| home.as_ref().map(|h| h.join(".claude"))),
    );
    push(
        Agent::Codex,
        get("CODEX_HOME").or_else(|| home.as_ref().map(|h| h.join(".codex"))),
    );
    push(
        Agent::Gemini,
        get("GEMINI_CLI_HOME")
            .or_else(|| home.clone())
            .map(|h| h.join(".gemini")),
    );
    out
}

/// The login accounts' homes under `accounts` (`<WEFT_HOME>/homes`): one folder per
/// account id per agent; Gemini's is that folder's `.gemini` (it is `GEMINI_CLI_HOME`).
pub fn account_homes(accounts: &Path) -> Vec<Home> {
    let mut out = Vec::new();
    for agent in [Agent::Claude, Agent::Codex, Agent::Gemini] {
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
                agent,
                root: match agent {
                    Agent::Gemini => path.join(".gemini"),
                    _ => path,
                },
                account: Some(id),
            });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn homes_follow_the_agents_variables() {
        let env = |n: &str| match n {
            "HOME" => Some("/h".to_string()),
            "CODEX_HOME" => Some("/c".to_string()),
            _ => None,
        };
        let homes = ambient_homes(&env);
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
        let homes = account_homes(dir.path());
        let got: Vec<(Agent, PathBuf, Option<&str>)> = homes
            .iter()
            .map(|h| (h.agent, h.root.clone(), h.account.as_deref()))
            .collect();
        assert_eq!(
            got,
            [
                (Agent::Claude, dir.path().join("claude/acc1"), Some("acc1")),
                (Agent::Codex, dir.path().join("codex/acc2"), Some("acc2")),
                (
                    Agent::Gemini,
                    dir.path().join("gemini/acc3/.gemini"),
                    Some("acc3")
                ),
            ]
        );
        assert!(account_homes(&dir.path().join("none")).is_empty());
    }
}
