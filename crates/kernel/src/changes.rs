//! The normalized file changes drivers put on tool calls (`ToolCall::changes`): every
//! agent's edit format (whole-file writes, string replacements, patches) becomes one
//! shape, a path, add/modify/delete and a unified diff, so no surface parses an
//! agent's own input to draw a diff.

use std::path::Path;

use similar::TextDiff;
use weft_protocol::{ChangeKind, FileChange};

/// Lines of context around each hunk, as `git diff` and `diff -u` give.
const CONTEXT: usize = 3;

/// A file's change from `before` to `after` as a unified diff (`--- a/…`, `+++ b/…`,
/// `@@` hunks). An added file's header is `--- /dev/null`, a deleted one's `+++ /dev/null`.
pub fn unified(path: &str, kind: ChangeKind, before: &str, after: &str) -> String {
    let shown = path.trim_start_matches('/');
    let (old, new) = match kind {
        ChangeKind::Add => ("/dev/null".to_string(), format!("b/{shown}")),
        ChangeKind::Delete => (format!("a/{shown}"), "/dev/null".to_string()),
        ChangeKind::Modify => (format!("a/{shown}"), format!("b/{shown}")),
    };
    let diff = TextDiff::from_lines(before, after);
    let mut out = format!("--- {old}\n+++ {new}\n");
    out.push_str(
        &diff
            .unified_diff()
            .context_radius(CONTEXT)
            .missing_newline_hint(true)
            .to_string(),
    );
    out
}

/// The change of a file whose content goes from `before` (none: it did not exist) to
/// `after` (none: it was removed).
pub fn file_change(path: &str, before: Option<&str>, after: Option<&str>) -> FileChange {
    let kind = match (before, after) {
        (None, _) => ChangeKind::Add,
        (Some(_), None) => ChangeKind::Delete,
        (Some(_), Some(_)) => ChangeKind::Modify,
    };
    FileChange {
        path: path.to_string(),
        kind,
        diff: unified(path, kind, before.unwrap_or(""), after.unwrap_or("")),
    }
}

/// An edit known only as its replaced and replacing text (the file itself unseen):
/// the hunk's line numbers count from the fragment, not the file.
pub fn fragment_change(path: &str, old: &str, new: &str) -> FileChange {
    // A fragment ends mid-file: no "no newline at end of file" marker for it.
    let line = |s: &str| {
        if s.is_empty() || s.ends_with('\n') {
            s.to_string()
        } else {
            format!("{s}\n")
        }
    };
    FileChange {
        path: path.to_string(),
        kind: ChangeKind::Modify,
        diff: unified(path, ChangeKind::Modify, &line(old), &line(new)),
    }
}

/// Applies string replacements (`(old, new, all)`) to `content` in order, as Claude's
/// Edit/MultiEdit and the native agent's edit do; none if one's `old` is not there.
pub fn replaced(content: &str, edits: &[(&str, &str, bool)]) -> Option<String> {
    let mut text = content.to_string();
    for (old, new, all) in edits {
        if old.is_empty() || !text.contains(old) {
            return None;
        }
        text = if *all {
            text.replace(old, new)
        } else {
            text.replacen(old, new, 1)
        };
    }
    Some(text)
}

/// A whole-file write announced before it runs: the file as it is on disk now (if it
/// is there) against `content`. A relative `path` is read from `base`.
pub fn write_on_disk(base: Option<&Path>, path: &str, content: &str) -> FileChange {
    let before = read(base, path);
    file_change(path, before.as_deref(), Some(content))
}

/// String replacements (`(old, new, all)`) announced before they run, against the file
/// on disk; just the fragments when the file is unreadable or lacks one's text.
pub fn replace_on_disk(
    base: Option<&Path>,
    path: &str,
    edits: &[(&str, &str, bool)],
) -> FileChange {
    let before = read(base, path);
    if let Some(after) = before.as_deref().and_then(|b| replaced(b, edits)) {
        return file_change(path, before.as_deref(), Some(&after));
    }
    let old: Vec<&str> = edits.iter().map(|e| e.0).collect();
    let new: Vec<&str> = edits.iter().map(|e| e.1).collect();
    fragment_change(path, &old.join("\n"), &new.join("\n"))
}

fn read(base: Option<&Path>, path: &str) -> Option<String> {
    let p = Path::new(path);
    let full = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base?.join(p)
    };
    std::fs::read_to_string(full).ok()
}

/// A patch an agent gave for one file (Codex's `fileChange` diffs, which start at the
/// first `@@`), with the `---`/`+++` header every change carries added when missing.
pub fn with_header(path: &str, kind: ChangeKind, patch: &str) -> String {
    if patch.starts_with("--- ") {
        return patch.to_string();
    }
    let head = unified(path, kind, "", "");
    let mut out = head;
    out.push_str(patch);
    if !out.ends_with('\n') {
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_modified_file_is_a_unified_diff_with_its_line_numbers() {
        let before = "one\ntwo\nthree\nfour\nfive\nsix\nseven\neight\n";
        let after = before.replace("six", "SIX");
        let c = file_change("src/a.txt", Some(before), Some(&after));
        assert_eq!(c.kind, ChangeKind::Modify);
        assert_eq!(
            c.diff,
            "--- a/src/a.txt\n+++ b/src/a.txt\n@@ -3,6 +3,6 @@\n three\n four\n five\n-six\n+SIX\n seven\n eight\n"
        );
    }

    #[test]
    fn added_and_deleted_files_have_a_dev_null_side() {
        let add = file_change("/w/new.rs", None, Some("fn main() {}\n"));
        assert_eq!(add.kind, ChangeKind::Add);
        assert!(
            add.diff
                .starts_with("--- /dev/null\n+++ b/w/new.rs\n@@ -0,0 +1 @@\n+fn main() {}"),
            "{}",
            add.diff
        );
        let del = file_change("gone.txt", Some("bye\n"), None);
        assert_eq!(del.kind, ChangeKind::Delete);
        assert!(del.diff.contains("+++ /dev/null\n@@ -1 +0,0 @@\n-bye"));
    }

    #[test]
    fn a_missing_final_newline_is_marked() {
        let c = file_change("a", Some("x\n"), Some("x\ny"));
        assert!(
            c.diff.contains("+y\n\\ No newline at end of file"),
            "{}",
            c.diff
        );
    }

    #[test]
    fn replacements_apply_in_order_and_a_missing_one_gives_none() {
        let text = "a b a";
        assert_eq!(
            replaced(text, &[("a", "c", false)]).as_deref(),
            Some("c b a")
        );
        assert_eq!(
            replaced(text, &[("a", "c", true), ("b", "d", false)]).as_deref(),
            Some("c d c")
        );
        assert_eq!(replaced(text, &[("z", "c", false)]), None);
    }

    #[test]
    fn a_headerless_patch_gets_its_header() {
        let p = with_header("f.txt", ChangeKind::Modify, "@@ -1 +1 @@\n-a\n+b");
        assert_eq!(p, "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n");
        let full = "--- a/f.txt\n+++ b/f.txt\n@@ -1 +1 @@\n-a\n+b\n";
        assert_eq!(with_header("f.txt", ChangeKind::Modify, full), full);
    }

    #[test]
    fn changes_announced_before_they_run_read_the_file_on_disk() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::write(dir.path().join("a.txt"), "keep\nold\n");
        let w = write_on_disk(Some(dir.path()), "a.txt", "keep\nnew\n");
        assert_eq!(w.kind, ChangeKind::Modify);
        assert!(w.diff.contains(" keep\n-old\n+new\n"), "{}", w.diff);
        let n = write_on_disk(Some(dir.path()), "b.txt", "x\n");
        assert_eq!(n.kind, ChangeKind::Add);
        let r = replace_on_disk(Some(dir.path()), "a.txt", &[("old", "NEW", false)]);
        assert!(
            r.diff.contains("@@ -1,2 +1,2 @@\n keep\n-old\n+NEW\n"),
            "{}",
            r.diff
        );
        let f = replace_on_disk(None, "a.txt", &[("old", "NEW", false)]);
        assert!(f.diff.contains("@@ -1 +1 @@\n-old\n+NEW\n"), "{}", f.diff);
    }
}
