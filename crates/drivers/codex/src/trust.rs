//! Codex and a folder's own `.codex/` configuration.
//!
//! Codex 0.171.0 loads a project's `.codex/config.toml` (MCP servers it starts,
//! providers, shell settings) for every folder its trust record calls trusted — and
//! `codex app-server` records every folder a thread starts in as trusted in the user's
//! `$CODEX_HOME/config.toml` when it has no record (observed: a project MCP server ran
//! on the first turn, and `trust_level = "trusted"` appeared). Only a record of
//! `untrusted` written there beforehand stops it, and Weft does not rewrite the user's
//! Codex configuration. So in a folder the user has not trusted in Weft, a Codex turn
//! that would load such a file does not start; where there is none, it runs as usual.

use std::path::{Path, PathBuf};

use weft_kernel::driver::AgentTurnInput;

/// The `.codex/` folders Codex would read as the project's: in the folder and each one
/// above it up to the repository's root (or the user's home).
pub fn own_config(workdir: &Path) -> Vec<PathBuf> {
    let home = std::env::var_os("HOME").map(PathBuf::from);
    let mut found = Vec::new();
    for dir in workdir.ancestors() {
        if home.as_deref() == Some(dir) {
            break;
        }
        let p = dir.join(".codex");
        if std::fs::symlink_metadata(&p).is_ok() {
            found.push(p);
        }
        if dir.join(".git").exists() {
            break;
        }
    }
    found
}

/// Why the turn cannot start, when the folder is untrusted and has a `.codex/`.
pub fn refusal(input: &AgentTurnInput) -> Option<String> {
    if input.workspace_trusted {
        return None;
    }
    let own = own_config(&input.workdir);
    if own.is_empty() {
        return None;
    }
    let names: Vec<String> = own.iter().map(|p| p.display().to_string()).collect();
    Some(format!(
        "Codex would load this folder's own configuration ({}) and the folder is not trusted; trust it first (`weft trust`, or the app's trust dialog), then run the turn again",
        names.join(", ")
    ))
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_untrusted_folder_with_codex_config_is_refused_and_a_trusted_one_is_not() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        let mut input = AgentTurnInput {
            workdir: repo.clone(),
            ..Default::default()
        };
        assert_eq!(refusal(&input), None);
        std::fs::create_dir_all(repo.join(".codex")).unwrap();
        std::fs::write(
            repo.join(".codex/config.toml"),
            "[mcp_servers.x]\ncommand=\"x\"\n",
        )
        .unwrap();
        let why = refusal(&input).unwrap();
        assert!(
            why.contains(".codex") && why.contains("weft trust"),
            "{why}"
        );
        input.workspace_trusted = true;
        assert_eq!(refusal(&input), None);
    }
}
