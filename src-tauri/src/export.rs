//! Saving a session export: the file name the save dialog suggests, and the write.

use std::io::Write as _;
use std::path::Path;

use weft_protocol::ExportFormat;

/// The suggested file name (`<agent>-<id start>.md`), its extension and the
/// dialog filter's name. A key's characters that a file name should not hold become `-`.
pub fn file_name(session_key: &str, format: ExportFormat) -> (String, &'static str, &'static str) {
    let (ext, kind) = match format {
        ExportFormat::Markdown => ("md", "Markdown"),
        ExportFormat::Json => ("json", "JSON"),
    };
    let stem: String = session_key
        .chars()
        .take(48)
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' || c == '_' {
                c
            } else {
                '-'
            }
        })
        .collect();
    let stem = if stem.is_empty() {
        "session".into()
    } else {
        stem
    };
    (format!("{stem}.{ext}"), ext, kind)
}

/// Writes `text` to `path`, replacing it (the dialog asked before an overwrite),
/// readable by others as a document is (0644; the umask may narrow it).
pub fn write(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
    options.open(path)?.write_all(text.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_plain_and_match_the_format() {
        assert_eq!(
            file_name("claude:2beba834-ea9e", ExportFormat::Markdown),
            ("claude-2beba834-ea9e.md".to_string(), "md", "Markdown")
        );
        assert_eq!(
            file_name("../x/y", ExportFormat::Json).0,
            "---x-y.json".to_string()
        );
        assert_eq!(file_name("", ExportFormat::Json).0, "session.json");
    }

    #[test]
    fn write_replaces_the_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("a.md");
        std::fs::write(&path, "old and longer").unwrap_or_else(|e| panic!("{e}"));
        write(&path, "new").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(std::fs::read_to_string(&path).ok().as_deref(), Some("new"));
    }
}
