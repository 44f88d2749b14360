//! Finding an agent's executable the same way for every driver: a path as given, else
//! the project-local install that `scripts/setup.sh` makes (looked for above the
//! running executable, then above the current folder), else `PATH`.

use std::path::{Path, PathBuf};

/// Where the project's set-up installs agent CLIs, relative to the repository root.
pub const LOCAL_BIN_DIR: &str = ".tools/agents/node_modules/.bin";

/// A program by path, or by name in the project-local install or on `PATH`.
pub fn find_program(command: &str) -> Option<PathBuf> {
    let as_path = Path::new(command);
    if as_path.components().count() > 1 || as_path.is_absolute() {
        return as_path.is_file().then(|| as_path.to_path_buf());
    }
    let starts = [std::env::current_exe().ok(), std::env::current_dir().ok()];
    for start in starts.iter().flatten() {
        for dir in start.ancestors() {
            let candidate = dir.join(LOCAL_BIN_DIR).join(command);
            if candidate.is_file() {
                return Some(candidate);
            }
        }
    }
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(command))
        .find(|c| c.is_file())
}
