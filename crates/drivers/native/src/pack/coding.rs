//! The coding pack (the default): files, search, shell, git; read-before-edit as its
//! policy; the workspace's check command as its verify step.

use std::sync::Arc;

use serde_json::Value;

use super::DomainPack;
use crate::tools::{bash, fs, git, search, ToolRef, Workspace};

/// The coding pack.
pub struct Coding;

const PROMPT: &str = "You work in a software project (the workspace). Use the tools to look \
before you change anything: read a file before you edit or overwrite it, prefer edit for \
small changes, run commands with bash to build and test. Keep changes focused. When you are \
done, say briefly what you changed.";

impl DomainPack for Coding {
    fn name(&self) -> &str {
        "coding"
    }

    fn prompt(&self) -> String {
        PROMPT.into()
    }

    fn tools(&self) -> Vec<ToolRef> {
        vec![
            Arc::new(fs::Read),
            Arc::new(fs::Ls),
            Arc::new(search::Glob),
            Arc::new(search::Grep),
            Arc::new(fs::Write),
            Arc::new(fs::Edit),
            Arc::new(bash::Bash),
            Arc::new(git::GitStatus),
            Arc::new(git::GitDiff),
            Arc::new(git::GitLog),
            Arc::new(git::GitCommit),
        ]
    }

    /// Paths must stay in the workspace; an existing file is read before it is edited
    /// or overwritten (the model otherwise writes over what it has not seen).
    fn policy(&self, tool: &str, input: &Value, workspace: &Workspace) -> Result<(), String> {
        let Some(path) = input.get("path").and_then(Value::as_str) else {
            return Ok(());
        };
        let resolved = workspace.resolve(path)?;
        if matches!(tool, "edit" | "write") && resolved.is_file() && !workspace.was_read(&resolved)
        {
            return Err(format!(
                "read {path} before you {tool} it (the coding pack's read-before-edit rule)"
            ));
        }
        Ok(())
    }

    fn verify_command(&self, settings: &crate::settings::Settings) -> Option<String> {
        settings.check_command()
    }
}
