//! Where a `WEFT_HOME`'s kernel service lives: its socket, lock, tokens and logs.
//! The daemon and every client compute these the same way.

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
    /// the home.
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

/// FNV-1a: a stable, dependency-free name for a long home's socket (not a secret).
fn fnv1a(bytes: &[u8]) -> u64 {
    bytes.iter().fold(0xcbf2_9ce4_8422_2325, |h, b| {
        (h ^ u64::from(*b)).wrapping_mul(0x0100_0000_01b3)
    })
}

fn uid() -> u32 {
    use std::os::unix::fs::MetadataExt;
    std::fs::metadata("/proc/self").map_or(0, |m| m.uid())
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
}
