//! Per-workspace settings of the native agent: `<workdir>/.weft/native.toml`.
//!
//! ```toml
//! check = "cargo check --quiet"   # the coding pack's verify step
//! permission = "ask"              # or "auto": whether mutating tools ask first
//! max_steps = 50
//! ```

use std::path::Path;

use serde::Deserialize;

/// What `.weft/native.toml` may say.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
pub struct Settings {
    /// The check command the coding pack runs once the model is done.
    pub check: Option<String>,
    /// `ask` or `auto`.
    pub permission: Option<String>,
    /// The step limit of a turn.
    pub max_steps: Option<usize>,
}

/// The workspace's settings (defaults when the file is missing; a warning when it is
/// not valid TOML, so a typo is seen rather than silently ignored).
pub fn load(workdir: &Path) -> Result<Settings, String> {
    let path = workdir.join(".weft").join("native.toml");
    match std::fs::read_to_string(&path) {
        Ok(text) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Err(_) => Ok(Settings::default()),
    }
}

/// The workspace's check command, if configured.
pub fn check_command(workdir: &Path) -> Option<String> {
    load(workdir).ok()?.check.filter(|c| !c.trim().is_empty())
}
