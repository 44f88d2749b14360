//! `saveAttachment`: a file pasted or dropped into a composer, kept where the agent can
//! read it. A browser or WebView has the bytes, not a path, so the daemon writes them
//! under `$WEFT_HOME/attachments/<id>/<name>` (folder 0700, file 0600) and answers the
//! path for the prompt's `attachments`, after the same check every prompt's
//! attachments pass (size, an image that decodes).

use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::Path;

use base64::Engine;
use weft_protocol::{ErrorCode, WireError};

fn bad(message: impl Into<String>) -> WireError {
    WireError::new(ErrorCode::BadRequest, message)
}

/// The name to keep: its last component, without leading dots, never empty.
fn file_name(name: &str) -> String {
    let last = name.rsplit(['/', '\\']).next().unwrap_or_default();
    let trimmed = last.trim().trim_start_matches('.');
    if trimmed.is_empty() {
        "attachment".into()
    } else {
        trimmed.chars().take(200).collect()
    }
}

/// Writes `data` (base64) as `name` and returns its absolute path.
pub fn save(home: &Path, name: &str, data: &str) -> Result<String, WireError> {
    let limit = weft_attachments::MAX_ATTACHMENT_BYTES;
    // Refused before decoding: the base64 of a file past the limit is longer still.
    if (data.len() as u64) / 4 * 3 > limit + 2 {
        return Err(bad(format!(
            "attachment {name} is about {} bytes; the limit is {limit} bytes ({} MiB)",
            (data.len() as u64) / 4 * 3,
            limit / (1024 * 1024)
        )));
    }
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data.trim())
        .map_err(|e| bad(format!("attachment {name}: not base64 ({e})")))?;
    let dir = home
        .join("attachments")
        .join(uuid::Uuid::new_v4().to_string());
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(&dir)
        .map_err(|e| WireError::new(ErrorCode::Storage, format!("{}: {e}", dir.display())))?;
    let path = dir.join(file_name(name));
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(&path)
        .and_then(|mut f| f.write_all(&bytes));
    if let Err(e) = written {
        let _ = std::fs::remove_dir_all(&dir);
        return Err(WireError::new(
            ErrorCode::Storage,
            format!("{}: {e}", path.display()),
        ));
    }
    if let Err(e) = weft_attachments::check(&path) {
        let _ = std::fs::remove_dir_all(&dir);
        // Named as the user knows it, not by the folder it was kept in.
        let why = e.to_string().replace(&path.display().to_string(), name);
        return Err(bad(why));
    }
    Ok(path.display().to_string())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    #[test]
    fn a_pasted_file_is_kept_private_and_a_fake_image_is_refused() {
        use std::os::unix::fs::PermissionsExt;
        let home = tempfile::tempdir().unwrap();
        let b64 = |s: &[u8]| base64::engine::general_purpose::STANDARD.encode(s);
        let path = save(home.path(), "../../notes.txt", &b64(b"hello")).unwrap();
        assert!(path.ends_with("/notes.txt"), "{path}");
        assert!(path.starts_with(home.path().join("attachments").to_str().unwrap()));
        assert_eq!(std::fs::read(&path).unwrap(), b"hello");
        let mode = std::fs::metadata(&path).unwrap().permissions().mode();
        assert_eq!(mode & 0o777, 0o600);
        let e = save(home.path(), "shot.png", &b64(b"not pixels")).unwrap_err();
        assert!(
            e.message.contains("shot.png is not an image"),
            "{}",
            e.message
        );
        let e = save(home.path(), "x", "%%%").unwrap_err();
        assert!(e.message.contains("not base64"), "{}", e.message);
        let huge = "A".repeat(50 * 1024 * 1024);
        let e = save(home.path(), "huge.bin", &huge).unwrap_err();
        assert!(
            e.message.contains("the limit is 33554432 bytes (32 MiB)"),
            "{}",
            e.message
        );
        // Only the one good file stayed.
        assert_eq!(
            std::fs::read_dir(home.path().join("attachments"))
                .unwrap()
                .count(),
            1
        );
    }
}
