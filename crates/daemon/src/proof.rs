//! The key that proves a socket client runs outside Weft's sandbox.
//!
//! The Unix socket admits only our uid, but a command Weft runs in its sandbox has our
//! uid too. A socket client's hello therefore carries the contents of
//! `$WEFT_HOME/client.key` (0600, made by the daemon): the sandbox hides the Weft home
//! (bubblewrap mounts a tmpfs over it, Landlock grants no read below it), so a client
//! that can read the key is the user's own process. Without it the hello is refused:
//! no verb, and above all no environment — whose `WEFT_<AGENT>_BIN`, `PATH` or
//! `WEFT_HOME` would choose the program the daemon runs outside the sandbox.

use std::io::Write;
use std::os::unix::fs::PermissionsExt;
use std::path::Path;

/// The key at `path`, made (64 hex digits from two v4 UUIDs: 244 random bits from the
/// OS) when there is none or it is not ours alone.
pub fn ensure(path: &Path) -> std::io::Result<String> {
    use std::os::unix::fs::MetadataExt;
    if let Ok(meta) = std::fs::symlink_metadata(path) {
        let ours = meta.uid() == nix::unistd::getuid().as_raw();
        let private = meta.permissions().mode() & 0o077 == 0;
        if meta.is_file() && ours && private {
            if let Ok(Some(key)) = weft_workspace::files::read_config(path, 4096) {
                let key = key.trim().to_string();
                if key.len() >= 32 {
                    return Ok(key);
                }
            }
        }
    }
    let key = format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    );
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut tmp = tempfile::Builder::new()
        .prefix(".client-key-")
        .permissions(std::fs::Permissions::from_mode(0o600))
        .tempfile_in(dir)?;
    tmp.write_all(key.as_bytes())?;
    tmp.as_file().sync_all()?;
    tmp.persist(path).map_err(|e| e.error)?;
    Ok(key)
}

/// Compares a presented key with ours in time independent of where they differ.
pub fn matches(ours: &str, given: &str) -> bool {
    let (a, b) = (ours.as_bytes(), given.as_bytes());
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn the_key_is_made_private_kept_and_remade_when_widened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("client.key");
        let key = ensure(&path).unwrap();
        assert_eq!(key.len(), 64);
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        assert_eq!(ensure(&path).unwrap(), key, "kept across starts");
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let again = ensure(&path).unwrap();
        assert_ne!(again, key, "a key others could read is replaced");
        assert!(matches(&again, &again));
        assert!(!matches(&again, &key));
        assert!(!matches(&again, ""));
    }
}
