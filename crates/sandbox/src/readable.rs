//! What the Landlock helper lets a command read: everything except a few folders.
//!
//! Landlock only adds access, beneath a folder: it cannot grant `/` and carve a hole
//! below it. So "all but `$WEFT_HOME`" is granted as every entry along the path to it
//! except the next step: for `/root/.weft`, every entry of `/` but `root`, then every
//! entry of `/root` but `.weft`. The hazards, each handled:
//! - a symbolic link among those entries whose target leads into a hidden folder, or
//!   holds one (`/root/all -> /`), would grant it through the link: such a link is left
//!   out;
//! - the folders along the way (`/`, `/root`) cannot be *listed* (that right is granted
//!   beneath a folder, so it would take the hidden one with it); their entries can
//!   still be read by name;
//! - the list is taken when the command starts: an entry made later beside a hidden
//!   folder is not readable to it.

use std::path::{Path, PathBuf};

/// The paths to grant read access beneath so that all of `root` is readable except
/// `hidden` (canonical paths; those not under `root` change nothing).
pub fn readable(root: &Path, hidden: &[PathBuf]) -> Vec<PathBuf> {
    let mut out = Vec::new();
    walk(root, hidden, &mut out);
    out
}

fn walk(dir: &Path, hidden: &[PathBuf], out: &mut Vec<PathBuf>) {
    if hidden.iter().any(|h| dir.starts_with(h)) {
        return;
    }
    if !hidden.iter().any(|h| h.starts_with(dir)) {
        out.push(dir.to_path_buf());
        return;
    }
    // A hidden folder lies beneath `dir`: grant its entries one by one.
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut entries: Vec<_> = entries.flatten().collect();
    entries.sort_by_key(|e| e.file_name());
    for e in entries {
        let path = e.path();
        let is_link = e.file_type().is_ok_and(|t| t.is_symlink());
        if is_link {
            // Granted through its target: only when that target neither lies in nor
            // holds a hidden folder (a dangling link grants nothing anyway).
            let Ok(target) = path.canonicalize() else {
                continue;
            };
            if !hidden
                .iter()
                .any(|h| target.starts_with(h) || h.starts_with(&target))
            {
                out.push(path);
            }
            continue;
        }
        walk(&path, hidden, out);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn every_sibling_along_the_path_but_the_hidden_folder() {
        let root = tempfile::tempdir().unwrap();
        let root = root.path().canonicalize().unwrap();
        for d in ["home/me/.weft/run", "home/me/src", "home/other", "usr/bin"] {
            std::fs::create_dir_all(root.join(d)).unwrap();
        }
        std::fs::write(root.join("home/me/.bashrc"), "").unwrap();
        std::os::unix::fs::symlink(root.join("usr"), root.join("home/me/usr")).unwrap();
        std::os::unix::fs::symlink(root.join("home/me/.weft"), root.join("home/me/w")).unwrap();
        std::os::unix::fs::symlink(&root, root.join("home/me/all")).unwrap();
        std::os::unix::fs::symlink(root.join("nowhere"), root.join("home/me/gone")).unwrap();
        let hidden = [root.join("home/me/.weft")];
        let got: Vec<String> = readable(&root, &hidden)
            .iter()
            .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
            .collect();
        assert_eq!(
            got,
            [
                "home/me/.bashrc",
                "home/me/src",
                "home/me/usr",
                "home/other",
                "usr"
            ],
            "links into or over the hidden folder, and dangling ones, are left out"
        );
        assert_eq!(readable(&root, &[]), vec![root.clone()]);
        assert_eq!(
            readable(&root, &[PathBuf::from("/elsewhere/entirely")]),
            vec![root.clone()]
        );
    }
}
