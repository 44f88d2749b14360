//! Where Weft keeps its state: one global folder and one per workspace.

use std::path::{Path, PathBuf};

/// `$WEFT_HOME`, else `~/.weft` (else `.weft` in the current folder when there is no
/// home at all).
pub fn global_state_dir() -> PathBuf {
    if let Some(dir) = std::env::var_os("WEFT_HOME").filter(|d| !d.is_empty()) {
        return PathBuf::from(dir);
    }
    match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
        Some(home) => PathBuf::from(home).join(".weft"),
        None => PathBuf::from(".weft"),
    }
}

/// `<workdir>/.weft`: state that belongs to one workspace.
pub fn workspace_state_dir(workdir: &Path) -> PathBuf {
    workdir.join(".weft")
}
