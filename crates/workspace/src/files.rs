//! Reading a configuration file that an untrusted party may have placed.
//!
//! `std::fs::read_to_string` on a path in a workspace blocks forever on a FIFO (the
//! open waits for a writer) and reads `/dev/zero` until memory runs out; both are one
//! `ln -s` or `mkfifo` in a cloned repository. Here the file is opened non-blocking,
//! must be a regular file once open (checked on the open descriptor, so a swap between
//! check and read changes nothing), and at most `cap` bytes are read.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The size past which a configuration file is refused (1 MiB): Weft's own files are a
/// few KB; anything bigger is a mistake or an attack.
pub const CONFIG_CAP: u64 = 1 << 20;

/// Why a configuration file could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ReadError {
    /// Not a regular file (a FIFO, a device, a folder, a socket).
    #[error("not a regular file")]
    NotRegular,
    /// Larger than the cap.
    #[error("larger than {cap} bytes")]
    TooLarge {
        /// The cap that was passed.
        cap: u64,
    },
    /// Not UTF-8 text.
    #[error("not UTF-8 text")]
    NotText,
    /// The OS refused (permissions, I/O).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The text of the configuration file at `path`, `None` when there is none; at most
/// `cap` bytes ([`CONFIG_CAP`] for Weft's own files). Symlinks are followed (a dotfile
/// manager links global files), but what they lead to must be a regular file.
pub fn read_config(path: &Path, cap: u64) -> Result<Option<String>, ReadError> {
    let file = match std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)
    {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) if e.raw_os_error() == Some(libc::ENOTDIR) => return Ok(None),
        Err(e) => return Err(ReadError::Io(e)),
    };
    let meta = file.metadata()?;
    if !meta.file_type().is_file() {
        return Err(ReadError::NotRegular);
    }
    if meta.len() > cap {
        return Err(ReadError::TooLarge { cap });
    }
    let mut bytes = Vec::with_capacity(usize::try_from(meta.len()).unwrap_or(0));
    // The file may grow between the stat and the read: never read past the cap.
    file.take(cap + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > cap {
        return Err(ReadError::TooLarge { cap });
    }
    String::from_utf8(bytes)
        .map(Some)
        .map_err(|_| ReadError::NotText)
}

/// An exclusive lock on `path` (created 0600 when missing), held until the file is
/// dropped: read-modify-write of a shared file happens under it.
pub fn lock(path: &Path) -> std::io::Result<std::fs::File> {
    let file = std::fs::OpenOptions::new()
        .create(true)
        .truncate(false)
        .write(true)
        .mode(0o600)
        .open(path)?;
    file.lock()?;
    Ok(file)
}

/// Replaces `path` with `bytes` atomically: a fresh temp file (0600, unique name) in
/// the same folder, synced, then renamed over it. A reader sees the old file or the
/// new one, never half of one, and a crash leaves the old one.
pub fn replace(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".weft-")
        .suffix(".tmp")
        .tempfile_in(dir)?;
    std::io::Write::write_all(&mut tmp, bytes)?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(())
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_missing_file_is_none_and_a_regular_one_is_read() {
        let dir = tempfile::tempdir().unwrap();
        assert!(read_config(&dir.path().join("none.json"), CONFIG_CAP)
            .unwrap()
            .is_none());
        assert!(
            read_config(&dir.path().join("no/such/dir.json"), CONFIG_CAP)
                .unwrap()
                .is_none()
        );
        std::fs::write(dir.path().join("a.json"), "{}").unwrap();
        assert_eq!(
            read_config(&dir.path().join("a.json"), CONFIG_CAP).unwrap(),
            Some("{}".into())
        );
    }

    #[test]
    fn a_fifo_a_device_and_a_folder_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("mcp.json");
        let made = std::process::Command::new("mkfifo")
            .arg(&fifo)
            .status()
            .unwrap();
        assert!(made.success());
        // Would block forever in std::fs::read_to_string (no writer ever comes).
        assert!(matches!(
            read_config(&fifo, CONFIG_CAP),
            Err(ReadError::NotRegular)
        ));
        let zero = dir.path().join("zero.json");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(
            read_config(&zero, CONFIG_CAP),
            Err(ReadError::NotRegular)
        ));
        assert!(matches!(
            read_config(dir.path(), CONFIG_CAP),
            Err(ReadError::NotRegular)
        ));
    }

    #[test]
    fn a_file_past_the_cap_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let big = dir.path().join("big.json");
        std::fs::write(&big, vec![b' '; 2048]).unwrap();
        assert!(matches!(
            read_config(&big, 1024),
            Err(ReadError::TooLarge { cap: 1024 })
        ));
        assert!(read_config(&big, 4096).unwrap().is_some());
    }
}
