//! One daemon per `WEFT_HOME`: an exclusive `flock` on `daemon.lock`, held for the
//! daemon's life, with its pid written inside for the "who holds it" message. The
//! kernel drops the lock with the process, however it dies, so a crashed daemon never
//! leaves a stale lock behind (a stale pid in the file is just text).

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

use nix::fcntl::{Flock, FlockArg};

/// The held lock; dropping it releases it.
pub struct Lock {
    _file: Flock<File>,
}

/// Why the lock was not taken.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another daemon holds it.
    #[error("another Weft daemon (pid {pid}) already runs for this WEFT_HOME")]
    Held {
        /// Its pid, as it wrote it (0 when unreadable).
        pid: u32,
    },
    /// The file could not be opened.
    #[error("cannot open the daemon lock {path}: {source}")]
    Io {
        /// The lock file.
        path: String,
        /// Why.
        source: std::io::Error,
    },
}

/// Takes the lock at `path` without waiting, and writes our pid into it.
pub fn take(path: &Path) -> Result<Lock, LockError> {
    let io = |source| LockError::Io {
        path: path.display().to_string(),
        source,
    };
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .open(path)
        .map_err(io)?;
    let mut file = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(locked) => locked,
        Err((mut file, _)) => {
            let mut text = String::new();
            let _ = file.read_to_string(&mut text);
            return Err(LockError::Held {
                pid: text.trim().parse().unwrap_or(0),
            });
        }
    };
    file.set_len(0).map_err(io)?;
    file.rewind().map_err(io)?;
    writeln!(file, "{}", std::process::id()).map_err(io)?;
    file.flush().map_err(io)?;
    Ok(Lock { _file: file })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_second_taker_learns_who_holds_it_and_gets_it_once_released() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("daemon.lock");
        let held = take(&path).unwrap_or_else(|e| panic!("{e}"));
        // flock is per open file description: a second open in this process conflicts too.
        match take(&path) {
            Err(LockError::Held { pid }) => assert_eq!(pid, std::process::id()),
            other => panic!("expected Held, got {:?}", other.err()),
        }
        drop(held);
        assert!(take(&path).is_ok());
    }
}
