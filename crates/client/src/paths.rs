//! Where a `WEFT_HOME`'s kernel service lives: its socket, lock, tokens and logs.
//! The daemon and every client compute these the same way.

use std::os::unix::fs::{DirBuilderExt, MetadataExt};
use std::path::{Path, PathBuf};

/// A `WEFT_HOME` and the files of its kernel service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Home {
    dir: PathBuf,
}

/// A Unix socket path must fit `sockaddr_un.sun_path` (108 bytes on Linux, with its NUL).
const SOCKET_PATH_MAX: usize = 100;

impl Home {
    /// `$WEFT_HOME`, else `~/.weft`.
    pub fn from_env() -> Home {
        if let Some(dir) = std::env::var_os("WEFT_HOME").filter(|d| !d.is_empty()) {
            return Home::at(PathBuf::from(dir));
        }
        match std::env::var_os("HOME").filter(|d| !d.is_empty()) {
            Some(home) => Home::at(PathBuf::from(home).join(".weft")),
            None => Home::at(PathBuf::from("/tmp").join(format!("weft-{}", uid()))),
        }
    }

    /// The home at `dir` (made absolute, so a daemon and its clients agree on it
    /// whatever their current folders).
    pub fn at(dir: impl Into<PathBuf>) -> Home {
        let dir = dir.into();
        let dir = std::path::absolute(&dir).unwrap_or(dir);
        Home { dir }
    }

    /// The folder itself.
    pub fn dir(&self) -> &Path {
        &self.dir
    }

    /// The service's Unix socket: in the home when the path is short enough, else in
    /// `$XDG_RUNTIME_DIR` (or a per-user folder under /tmp) under a name derived from
    /// the home. Whichever folder it is, the daemon binds and a client says hello only
    /// once [`check_socket_dir`] holds for it.
    pub fn socket(&self) -> PathBuf {
        let inside = self.dir.join("daemon.sock");
        if inside.as_os_str().len() <= SOCKET_PATH_MAX {
            return inside;
        }
        let name = format!(
            "weft-{:016x}.sock",
            fnv1a(self.dir.as_os_str().as_encoded_bytes())
        );
        let runtime = std::env::var_os("XDG_RUNTIME_DIR")
            .map(PathBuf::from)
            .filter(|d| d.is_absolute() && d.is_dir())
            .unwrap_or_else(|| PathBuf::from("/tmp").join(format!("weft-{}", uid())));
        runtime.join(name)
    }

    /// The lock only one daemon of this home holds; it also holds its pid.
    pub fn lock(&self) -> PathBuf {
        self.dir.join("daemon.lock")
    }

    /// Tokens for WebSocket clients, with their scopes (0600).
    pub fn tokens(&self) -> PathBuf {
        self.dir.join("tokens")
    }

    /// The key a socket client proves with that it runs outside Weft's sandbox (0600,
    /// made by the daemon; the sandbox hides the home).
    pub fn client_key(&self) -> PathBuf {
        self.dir.join("client.key")
    }

    /// The logs folder.
    pub fn log_dir(&self) -> PathBuf {
        self.dir.join("logs")
    }

    /// Where a daemon started on demand writes what it says before its log is set up
    /// (and its log after).
    pub fn daemon_log(&self) -> PathBuf {
        self.log_dir().join("daemon.log")
    }
}

/// Checks that `dir` may hold the daemon's socket: a real folder (not a link), owned
/// by this user and open to nobody else (mode 0700 or narrower). Whoever can write
/// into the folder can put a socket of their own in its place, and a client would
/// hand it its hello: its whole environment, keys included. `/tmp/weft-<uid>` is a
/// name any local user can take first.
pub fn check_socket_dir(dir: &Path) -> std::io::Result<()> {
    let meta = std::fs::symlink_metadata(dir)?;
    let ours = nix::unistd::getuid().as_raw();
    let mode = meta.mode() & 0o7777;
    let problem = if !meta.file_type().is_dir() {
        format!("{} is not a folder (a link or a file)", dir.display())
    } else if meta.uid() != ours {
        format!(
            "{} belongs to uid {}, not to this user (uid {ours}): another user may be \
             listening there; remove it, or set XDG_RUNTIME_DIR to a private folder",
            dir.display(),
            meta.uid()
        )
    } else if mode & 0o077 != 0 {
        format!(
            "{} is open to other users (mode {mode:04o}): another user could put a \
             socket of their own there; make it private with `chmod 700 {}`",
            dir.display(),
            dir.display()
        )
    } else {
        return Ok(());
    };
    Err(std::io::Error::new(
        std::io::ErrorKind::PermissionDenied,
        format!("refusing the Weft daemon's socket folder: {problem}"),
    ))
}

/// Makes `dir` (missing parents too, each 0700) for the daemon's socket, then checks
/// it as [`check_socket_dir`] does: a folder someone else made first is refused, not
/// taken over.
pub fn make_socket_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)?;
    check_socket_dir(dir)
}

/// FNV-1a: a stable, dependency-free name for a long home's socket (not a secret).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn uid() -> u32 {
    nix::unistd::getuid().as_raw()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_home_gets_a_short_socket_elsewhere_and_always_the_same_one() {
        let short = Home::at("/tmp/w");
        assert_eq!(short.socket(), PathBuf::from("/tmp/w/daemon.sock"));
        let long = Home::at(format!("/tmp/{}", "x".repeat(200)));
        let socket = long.socket();
        assert!(
            socket.as_os_str().len() <= SOCKET_PATH_MAX + 40,
            "{socket:?}"
        );
        assert!(!socket.starts_with(long.dir()));
        assert_eq!(socket, long.socket());
        assert_ne!(
            socket,
            Home::at(format!("/tmp/{}", "y".repeat(200))).socket()
        );
    }

    fn mode(dir: &Path, mode: u32) {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode))
            .unwrap_or_else(|e| panic!("{e}"));
    }

    #[test]
    fn a_socket_folder_must_be_ours_private_and_no_link() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let made = dir.path().join("weft-run");
        make_socket_dir(&made).unwrap_or_else(|e| panic!("{e}"));
        check_socket_dir(&made).unwrap_or_else(|e| panic!("{e}"));
        mode(&made, 0o777);
        let e = check_socket_dir(&made).err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("mode 0777")),
            "{e:?}"
        );
        assert!(make_socket_dir(&made).is_err(), "a wide folder was taken");
        mode(&made, 0o700);
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&made, &link).unwrap_or_else(|e| panic!("{e}"));
        let e = check_socket_dir(&link).err().map(|e| e.to_string());
        assert!(
            e.as_deref().is_some_and(|e| e.contains("not a folder")),
            "{e:?}"
        );
    }

    /// Another user's folder (this needs root to make; elsewhere it is skipped).
    #[test]
    fn another_users_socket_folder_is_refused() {
        if uid() != 0 {
            eprintln!("SKIPPED: only root can give a folder to another user");
            return;
        }
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let theirs = dir.path().join("weft-0");
        make_socket_dir(&theirs).unwrap_or_else(|e| panic!("{e}"));
        std::os::unix::fs::chown(&theirs, Some(65534), Some(65534))
            .unwrap_or_else(|e| panic!("{e}"));
        let e = make_socket_dir(&theirs).err().map(|e| e.to_string());
        assert!(
            e.as_deref()
                .is_some_and(|e| e.contains("belongs to uid 65534")),
            "{e:?}"
        );
    }
}
