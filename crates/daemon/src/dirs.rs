//! `listDir`: one folder of this machine, for a workspace picker that browses a host's
//! folders (the app's folder browser for a remote host, where a local file dialog
//! would show the wrong machine).
//!
//! It answers what `ls -a` would show the daemon's user — the daemon runs as that
//! user, so the kernel's permission checks are the only ones — with one exception:
//! nothing inside Weft's own state folder (`WEFT_HOME`: tokens, the client key,
//! sessions) is listed, whichever path or link leads there. The folder is resolved
//! (`canonicalize`) before that check, so `..` and links cannot walk around it. The
//! state folder's own entry still shows in its parent, as `ls` shows it.
//!
//! An entry that is a link is reported as what it points to (a link to a folder is a
//! folder to open), but never followed further than that one `stat`. A folder holding
//! `.git` is marked as a repository, so the picker can say which folders are projects.
//!
//! `readFile` reads one file the same way (a remote session's file opened from a window
//! of another machine): resolved first, nothing inside the state folder, at most
//! [`MAX_READ`] bytes from its start.

use std::path::{Path, PathBuf};

use std::io::Read as _;

use base64::Engine as _;
use weft_protocol::{DirEntry, DirListing, ErrorCode, FileContent, WireError};

/// `readFile` reads this much unless asked for less or more.
pub const DEFAULT_READ: u32 = 1 << 20;
/// `readFile` reads at most this much.
pub const MAX_READ: u32 = 16 << 20;

/// At most this many entries are listed (a folder of millions answers in bounded time).
pub const MAX_ENTRIES: usize = 5_000;

/// Lists `path` (none: `home`), refusing anything inside `state_dir`.
pub fn list(path: Option<&str>, home: &Path, state_dir: &Path) -> Result<DirListing, WireError> {
    let bad = |why: String| WireError::new(ErrorCode::BadWorkdir, why);
    let asked = match path {
        Some(p) if !Path::new(p).is_absolute() => {
            return Err(bad(format!("{p} is not an absolute path")))
        }
        Some(p) => PathBuf::from(p),
        None => home.to_path_buf(),
    };
    let dir = asked
        .canonicalize()
        .map_err(|e| bad(format!("{}: {e}", asked.display())))?;
    if !dir.is_dir() {
        return Err(bad(format!("{} is not a folder", dir.display())));
    }
    let state = state_dir
        .canonicalize()
        .unwrap_or_else(|_| state_dir.to_path_buf());
    if dir.starts_with(&state) {
        return Err(WireError::new(
            ErrorCode::Forbidden,
            format!(
                "{} is Weft's own state folder, which is not listed",
                dir.display()
            ),
        ));
    }
    let read = std::fs::read_dir(&dir).map_err(|e| bad(format!("{}: {e}", dir.display())))?;
    let mut entries: Vec<DirEntry> = read
        .filter_map(Result::ok)
        .take(MAX_ENTRIES)
        .map(|e| {
            let full = e.path();
            // One stat through a link: what it points to (a dangling one is a file).
            let is_dir = std::fs::metadata(&full).is_ok_and(|m| m.is_dir());
            DirEntry {
                name: e.file_name().to_string_lossy().into_owned(),
                is_dir,
                is_repo: is_dir && is_repo(&full),
            }
        })
        .collect();
    entries.sort_by(|a, b| b.is_dir.cmp(&a.is_dir).then_with(|| a.name.cmp(&b.name)));
    Ok(DirListing {
        path: dir.display().to_string(),
        parent: dir.parent().map(|p| p.display().to_string()),
        home: home.display().to_string(),
        is_repo: is_repo(&dir),
        entries,
    })
}

/// Reads at most `max` bytes (default [`DEFAULT_READ`], at most [`MAX_READ`]) of the
/// file `path`, refusing anything inside `state_dir`.
pub fn read(path: &str, max: Option<u32>, state_dir: &Path) -> Result<FileContent, WireError> {
    let bad = |why: String| WireError::new(ErrorCode::BadRequest, why);
    if !Path::new(path).is_absolute() {
        return Err(bad(format!("{path} is not an absolute path")));
    }
    let file = Path::new(path)
        .canonicalize()
        .map_err(|e| bad(format!("{path}: {e}")))?;
    let state = state_dir
        .canonicalize()
        .unwrap_or_else(|_| state_dir.to_path_buf());
    if file.starts_with(&state) {
        return Err(WireError::new(
            ErrorCode::Forbidden,
            format!(
                "{} is in Weft's own state folder, which is not read",
                file.display()
            ),
        ));
    }
    let opened = std::fs::File::open(&file).map_err(|e| bad(format!("{}: {e}", file.display())))?;
    let meta = opened
        .metadata()
        .map_err(|e| bad(format!("{}: {e}", file.display())))?;
    if !meta.is_file() {
        return Err(bad(format!("{} is not a file", file.display())));
    }
    let max = u64::from(max.unwrap_or(DEFAULT_READ).min(MAX_READ));
    let mut bytes = Vec::new();
    opened
        .take(max)
        .read_to_end(&mut bytes)
        .map_err(|e| bad(format!("{}: {e}", file.display())))?;
    Ok(FileContent {
        path: file.display().to_string(),
        size: meta.len(),
        truncated: meta.len() > bytes.len() as u64,
        data: base64::engine::general_purpose::STANDARD.encode(&bytes),
    })
}

fn is_repo(dir: &Path) -> bool {
    std::fs::symlink_metadata(dir.join(".git")).is_ok()
}

/// The daemon user's home folder (`$HOME`, else `/`).
pub fn home() -> PathBuf {
    std::env::var_os("HOME")
        .filter(|h| !h.is_empty())
        .map_or_else(|| PathBuf::from("/"), PathBuf::from)
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn names(l: &DirListing) -> Vec<(&str, bool, bool)> {
        l.entries
            .iter()
            .map(|e| (e.name.as_str(), e.is_dir, e.is_repo))
            .collect()
    }

    #[test]
    fn lists_folders_first_marks_repositories_and_shows_hidden_entries() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let state = root.path().join("state");
        std::fs::create_dir_all(home.join("proj/.git")).unwrap();
        std::fs::create_dir_all(home.join("notes")).unwrap();
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(home.join(".profile"), "").unwrap();
        std::fs::write(home.join("a.txt"), "").unwrap();
        std::os::unix::fs::symlink(home.join("proj"), home.join("link-to-proj")).unwrap();

        let l = list(None, &home, &state).unwrap();
        assert_eq!(l.path, home.canonicalize().unwrap().display().to_string());
        assert_eq!(
            names(&l),
            vec![
                ("link-to-proj", true, true),
                ("notes", true, false),
                ("proj", true, true),
                (".profile", false, false),
                ("a.txt", false, false),
            ]
        );
        assert!(!l.is_repo);
        let proj = list(
            Some(&home.join("proj").display().to_string()),
            &home,
            &state,
        )
        .unwrap();
        assert!(proj.is_repo);
        assert_eq!(names(&proj), vec![(".git", true, false)]);
        assert_eq!(proj.parent.as_deref(), Some(l.path.as_str()));
    }

    #[test]
    fn never_lists_inside_the_state_folder_by_any_path_or_link() {
        let root = tempfile::tempdir().unwrap();
        let home = root.path().join("home");
        let state = home.join(".weft");
        std::fs::create_dir_all(state.join("tokens")).unwrap();
        std::fs::create_dir_all(home.join("proj")).unwrap();
        std::os::unix::fs::symlink(&state, home.join("proj/sneaky")).unwrap();

        // Its entry shows in its parent, as ls shows it…
        let l = list(None, &home, &state).unwrap();
        assert!(l.entries.iter().any(|e| e.name == ".weft"));
        // …but no way in is listed.
        for way in [
            state.clone(),
            state.join("tokens"),
            home.join("proj/../.weft"),
            home.join("proj/sneaky"),
            home.join("proj/sneaky/tokens"),
        ] {
            let e = list(Some(&way.display().to_string()), &home, &state).unwrap_err();
            assert_eq!(e.code, ErrorCode::Forbidden, "{}", way.display());
        }
    }

    #[test]
    fn a_relative_or_missing_path_or_a_file_is_refused_with_its_reason() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("f"), "").unwrap();
        let state = root.path().join("state");
        for (p, says) in [
            ("relative/x".to_string(), "not an absolute path"),
            (
                root.path().join("missing").display().to_string(),
                "No such file",
            ),
            (root.path().join("f").display().to_string(), "not a folder"),
        ] {
            let e = list(Some(&p), root.path(), &state).unwrap_err();
            assert_eq!(e.code, ErrorCode::BadWorkdir);
            assert!(e.message.contains(says), "{p}: {}", e.message);
        }
    }

    #[test]
    fn reads_a_file_up_to_its_cap_but_nothing_of_the_state_folder() {
        let dir = tempfile::tempdir().unwrap();
        let state = dir.path().join("state");
        std::fs::create_dir_all(&state).unwrap();
        std::fs::write(state.join("tokens"), "secret").unwrap();
        std::fs::write(dir.path().join("notes.md"), "hello, host").unwrap();
        std::os::unix::fs::symlink(state.join("tokens"), dir.path().join("link")).unwrap();
        let b64 = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);

        let whole = read(
            &dir.path().join("notes.md").display().to_string(),
            None,
            &state,
        )
        .unwrap();
        assert_eq!((whole.size, whole.truncated), (11, false));
        assert_eq!(whole.data, b64("hello, host"));
        let head = read(
            &dir.path().join("notes.md").display().to_string(),
            Some(5),
            &state,
        )
        .unwrap();
        assert_eq!(
            (head.size, head.truncated, head.data),
            (11, true, b64("hello"))
        );

        for inside in [
            state.join("tokens"),
            dir.path().join("link"),
            state.join("../state/tokens"),
        ] {
            let e = read(&inside.display().to_string(), None, &state).unwrap_err();
            assert_eq!(e.code, ErrorCode::Forbidden, "{}", inside.display());
        }
        assert_eq!(
            read("notes.md", None, &state).unwrap_err().code,
            ErrorCode::BadRequest
        );
        assert_eq!(
            read(&dir.path().display().to_string(), None, &state)
                .unwrap_err()
                .code,
            ErrorCode::BadRequest
        );
    }
}
