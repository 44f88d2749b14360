//! Saving a session export: the file name the save dialog suggests.

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
}
