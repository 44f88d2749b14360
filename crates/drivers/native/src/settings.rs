//! Per-workspace settings of the native agent: `<workdir>/.weft/native.toml`, read
//! only in a workspace the user trusted (its `check` runs a command, its `permission`
//! lets every call run unasked).
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
/// not valid TOML or not a file Weft reads, so a typo is seen rather than silently
/// ignored).
pub fn load(workdir: &Path) -> Result<Settings, String> {
    let path = workdir.join(".weft").join("native.toml");
    match weft_workspace::files::read_config(&path, weft_workspace::files::CONFIG_CAP) {
        Ok(Some(text)) => toml::from_str(&text).map_err(|e| format!("{}: {e}", path.display())),
        Ok(None) => Ok(Settings::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

impl Settings {
    /// The check command, if one is set.
    pub fn check_command(&self) -> Option<String> {
        self.check.clone().filter(|c| !c.trim().is_empty())
    }
}
