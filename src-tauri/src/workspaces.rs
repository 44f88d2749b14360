//! Recent workspace folders, newest first, kept in `<state_dir>/recent-workspaces.json`.
//! A folder of another host is kept as the windows name it, `HOST:/path`
//! (crate::route), while that host is in the list; it is checked there, by `listDir`.

use std::path::Path;

const FILE: &str = "recent-workspaces.json";
const KEEP: usize = 12;

/// The remembered folders that still exist, newest first.
pub fn load(state_dir: &Path, hosts: &[String]) -> Vec<String> {
    let list: Vec<String> = std::fs::read_to_string(state_dir.join(FILE))
        .ok()
        .and_then(|text| serde_json::from_str(&text).ok())
        .unwrap_or_default();
    list.into_iter()
        .filter(|p| Path::new(p).is_dir() || crate::route::split_folder(p, hosts).is_some())
        .collect()
}

/// Puts `path` (made absolute) first and returns the new list.
pub fn remember(state_dir: &Path, path: &str, hosts: &[String]) -> std::io::Result<Vec<String>> {
    if crate::route::split_folder(path, hosts).is_some() {
        return keep_first(state_dir, path.to_string(), hosts);
    }
    let canonical = std::fs::canonicalize(path)?;
    if !canonical.is_dir() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::InvalidInput,
            "is not a folder",
        ));
    }
    keep_first(state_dir, canonical.display().to_string(), hosts)
}

fn keep_first(
    state_dir: &Path,
    canonical: String,
    hosts: &[String],
) -> std::io::Result<Vec<String>> {
    let mut list = load(state_dir, hosts);
    list.retain(|p| *p != canonical);
    list.insert(0, canonical);
    list.truncate(KEEP);
    save(state_dir, &list)?;
    Ok(list)
}

/// Drops `path` from the list (the folder itself is untouched) and returns the new list.
/// A folder that no longer exists can be forgotten too, so `path` is matched as given.
pub fn forget(state_dir: &Path, path: &str, hosts: &[String]) -> std::io::Result<Vec<String>> {
    let mut list = load(state_dir, hosts);
    list.retain(|p| p != path);
    save(state_dir, &list)?;
    Ok(list)
}

fn save(state_dir: &Path, list: &[String]) -> std::io::Result<()> {
    std::fs::create_dir_all(state_dir)?;
    let tmp = state_dir.join(format!("{FILE}.tmp"));
    std::fs::write(&tmp, serde_json::to_string_pretty(list)?)?;
    std::fs::rename(&tmp, state_dir.join(FILE))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn newest_first_deduplicated_bounded_and_only_existing() {
        let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let dirs: Vec<String> = (0..15)
            .map(|i| {
                let d = root.path().join(format!("w{i}"));
                std::fs::create_dir_all(&d).unwrap_or_else(|e| panic!("{e}"));
                d.display().to_string()
            })
            .collect();
        for d in &dirs {
            remember(state.path(), d, &[]).unwrap_or_else(|e| panic!("{e}"));
        }
        let list = remember(state.path(), &dirs[5], &[]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list.len(), KEEP);
        assert!(list[0].ends_with("w5"));
        assert!(list[1].ends_with("w14"));
        assert_eq!(list.iter().filter(|p| p.ends_with("w5")).count(), 1);
        std::fs::remove_dir(&dirs[14]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!load(state.path(), &[]).iter().any(|p| p.ends_with("w14")));
        assert!(remember(state.path(), "/no/such/folder", &[]).is_err());
        let list = forget(state.path(), &list[0], &[]).unwrap_or_else(|e| panic!("{e}"));
        assert!(!list.iter().any(|p| p.ends_with("w5")));
        assert!(!load(state.path(), &[]).iter().any(|p| p.ends_with("w5")));
        assert_eq!(load(state.path(), &[]).len(), KEEP - 2);
    }

    #[test]
    fn a_listed_hosts_folder_is_kept_as_named_while_the_host_is_listed() {
        let state = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let gpu = vec!["gpu".to_string()];
        let list =
            remember(state.path(), "gpu:/home/me/proj", &gpu).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(list, vec!["gpu:/home/me/proj".to_string()]);
        assert_eq!(load(state.path(), &gpu), list);
        // Not a listed host: a local path that does not exist.
        assert!(remember(state.path(), "box:/x", &gpu).is_err());
        // The host removed: its folders are not offered.
        assert!(load(state.path(), &[]).is_empty());
    }
}
