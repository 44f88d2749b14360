//! For tests of every driver: a current folder that holds executables named like an
//! agent (in the folder, in its `bin`, and in its own project-local install), to show
//! that a lookup never runs them. Behind the `test-support` feature.
//!
//! The current folder is process-wide: a [`PlantedFolder`] holds a lock that other
//! holders wait on, and puts the old folder back when dropped. Tests in the same binary
//! that do not take it must not depend on the current folder.

use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use crate::LOCAL_BIN_DIR;

static CWD: Mutex<()> = Mutex::new(());

/// The process's current folder, planted, until dropped.
pub struct PlantedFolder {
    dir: tempfile::TempDir,
    marker: PathBuf,
    previous: PathBuf,
    _lock: MutexGuard<'static, ()>,
}

impl PlantedFolder {
    /// Makes a temporary folder the current one, with an executable `name` in it, in
    /// `bin/` and in `.tools/agents/node_modules/.bin/`; each writes
    /// [`PlantedFolder::marker`] when run.
    pub fn new(name: &str) -> std::io::Result<Self> {
        let lock = CWD.lock().unwrap_or_else(|e| e.into_inner());
        let dir = tempfile::tempdir()?;
        let marker = dir.path().join("planted-ran");
        let script = format!("#!/bin/sh\necho \"$0\" >> '{}'\nexit 0\n", marker.display());
        for folder in [
            dir.path().to_path_buf(),
            dir.path().join("bin"),
            dir.path().join(LOCAL_BIN_DIR),
        ] {
            std::fs::create_dir_all(&folder)?;
            let file = folder.join(name);
            std::fs::write(&file, &script)?;
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o755))?;
        }
        let previous = std::env::current_dir()?;
        std::env::set_current_dir(dir.path())?;
        Ok(Self {
            dir,
            marker,
            previous,
            _lock: lock,
        })
    }

    /// The planted folder (the current one while this lives).
    pub fn path(&self) -> &Path {
        self.dir.path()
    }

    /// A `PATH` that names the current folder every way a shell would take it: an
    /// empty entry, `.`, `bin`.
    pub fn relative_path_var(&self) -> String {
        ":.:bin:".into()
    }

    /// Whether a planted executable ran.
    pub fn ran(&self) -> bool {
        self.marker.exists()
    }

    /// Whether `found` is one of the planted executables.
    pub fn is_planted(&self, found: &Path) -> bool {
        let canon = |p: &Path| p.canonicalize().unwrap_or_else(|_| p.to_path_buf());
        canon(found).starts_with(canon(self.dir.path()))
    }
}

impl Drop for PlantedFolder {
    fn drop(&mut self) {
        let _ = std::env::set_current_dir(&self.previous);
    }
}
