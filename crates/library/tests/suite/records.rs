//! What the user does with a session's record: export it, archive it.

use weft_protocol::SessionAction;

use super::index::{Fixture, CLAUDE_ID};

/// An export is the owner's only, and goes through a file of an unpredictable name
/// (security-3 L4): a link planted under the name the daemon once used is not
/// followed, and nothing is left beside the export.
#[test]
fn an_export_is_private_and_written_through_an_unpredictable_file() {
    use std::os::unix::fs::PermissionsExt;
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let out = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let victim = out.path().join("victim");
    std::fs::write(&victim, "untouched").unwrap_or_else(|e| panic!("{e}"));
    let planted = out
        .path()
        .join(format!(".notes.md.{}.part", std::process::id()));
    std::os::unix::fs::symlink(&victim, &planted).unwrap_or_else(|e| panic!("{e}"));
    let target = out.path().join("notes.md");
    let key = format!("claude:{CLAUDE_ID}");
    let n = f
        .library
        .export_file(&key, weft_protocol::ExportFormat::Markdown, &target)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(n > 0);
    let meta = std::fs::metadata(&target).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(meta.permissions().mode() & 0o777, 0o600);
    assert_eq!(
        std::fs::read_to_string(&victim).unwrap_or_else(|e| panic!("{e}")),
        "untouched"
    );
    let mut names: Vec<String> = std::fs::read_dir(out.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    let planted_name = planted
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    assert_eq!(
        names,
        [planted_name, "notes.md".to_string(), "victim".to_string()]
    );
}

/// Archiving records when, so what the session left goes 30 days later; unarchiving
/// forgets it.
#[test]
fn an_archived_session_is_found_by_when_it_was_archived() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let key = format!("claude:{CLAUDE_ID}");
    let later = i64::MAX;
    assert!(f
        .library
        .archived_before(later)
        .unwrap_or_else(|e| panic!("{e}"))
        .is_empty());
    f.library
        .manage(&key, &SessionAction::Archive)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        f.library
            .archived_before(later)
            .unwrap_or_else(|e| panic!("{e}")),
        std::slice::from_ref(&key)
    );
    assert!(f
        .library
        .archived_before(0)
        .unwrap_or_else(|e| panic!("{e}"))
        .is_empty());
    f.library
        .manage(&key, &SessionAction::Unarchive)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(f
        .library
        .archived_before(later)
        .unwrap_or_else(|e| panic!("{e}"))
        .is_empty());
}
