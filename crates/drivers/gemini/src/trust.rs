//! Gemini CLI's own folder trust, tied to Weft's.
//!
//! Gemini 0.61.0 refuses to run headless (and over ACP) in a folder it does not trust
//! ("Gemini CLI is not running in a trusted directory", observed), and `--skip-trust`
//! trusts the folder for one run: it then loads the folder's `.gemini/settings.json`
//! (MCP servers, hooks, tool settings), `.gemini/.env` or `.env` (any variable,
//! `GOOGLE_GEMINI_BASE_URL` included) and custom commands. So Weft passes it only when
//! the user trusted the folder in Weft, or when the folder has nothing of that kind for
//! Gemini to load — there trusting it for the run grants nothing. Otherwise the turn
//! fails and says how to trust the folder; the terminal UI runs without the flag and
//! Gemini asks its own question.

use std::path::{Path, PathBuf};

use weft_kernel::driver::AgentTurnInput;

/// What Gemini would load from `workdir` as the folder's own configuration: its
/// `.gemini/` folder, and a `.env` there or in a folder above it inside the same
/// repository (Gemini looks upward for one).
pub fn own_config(workdir: &Path) -> Vec<PathBuf> {
    let mut found = Vec::new();
    let home = std::env::var_os("HOME").map(PathBuf::from);
    for dir in workdir.ancestors() {
        // The user's own home is theirs: its `.env` and `.gemini` are not the folder's.
        if home.as_deref() == Some(dir) {
            break;
        }
        for name in [".gemini", ".env"] {
            let p = dir.join(name);
            if std::fs::symlink_metadata(&p).is_ok() {
                found.push(p);
            }
        }
        // A repository's root ends the search: above it is not the project.
        if dir.join(".git").exists() {
            break;
        }
    }
    found
}

/// The arguments that let Gemini run in the turn's folder: `--skip-trust` when Weft's
/// trust covers it, or when Gemini would load nothing of the folder's own; an error
/// naming what it would load otherwise.
pub fn trust_args(input: &AgentTurnInput) -> Result<Vec<String>, String> {
    if input.workspace_trusted {
        return Ok(vec!["--skip-trust".into()]);
    }
    let own = own_config(&input.workdir);
    if own.is_empty() {
        return Ok(vec!["--skip-trust".into()]);
    }
    let names: Vec<String> = own.iter().map(|p| p.display().to_string()).collect();
    Err(format!(
        "Gemini CLI would load this folder's own configuration ({}), and the folder is not trusted; trust it first (`weft trust`, or the app's trust dialog), then run the turn again",
        names.join(", ")
    ))
}

/// For the terminal UI: `--skip-trust` where [`trust_args`] allows it, else nothing,
/// and Gemini asks the user in its own UI.
pub fn tui_args(input: &AgentTurnInput) -> Vec<String> {
    trust_args(input).unwrap_or_default()
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn input(dir: &Path, trusted: bool) -> AgentTurnInput {
        AgentTurnInput {
            workdir: dir.to_path_buf(),
            workspace_trusted: trusted,
            ..Default::default()
        }
    }

    #[test]
    fn skip_trust_only_when_trusted_or_nothing_to_load() {
        let root = tempfile::tempdir().unwrap();
        let repo = root.path().join("repo");
        let sub = repo.join("sub");
        std::fs::create_dir_all(repo.join(".git")).unwrap();
        std::fs::create_dir_all(&sub).unwrap();
        assert_eq!(trust_args(&input(&sub, false)).unwrap(), ["--skip-trust"]);

        std::fs::write(repo.join(".env"), "GOOGLE_GEMINI_BASE_URL=http://evil\n").unwrap();
        let err = trust_args(&input(&sub, false)).unwrap_err();
        assert!(err.contains(".env") && err.contains("weft trust"), "{err}");
        assert!(tui_args(&input(&sub, false)).is_empty());
        assert_eq!(trust_args(&input(&sub, true)).unwrap(), ["--skip-trust"]);

        // Above the repository is not the project's.
        std::fs::remove_file(repo.join(".env")).unwrap();
        std::fs::write(root.path().join(".env"), "X=1\n").unwrap();
        assert_eq!(trust_args(&input(&sub, false)).unwrap(), ["--skip-trust"]);

        std::fs::create_dir_all(sub.join(".gemini")).unwrap();
        assert!(trust_args(&input(&sub, false)).is_err());
    }
}
