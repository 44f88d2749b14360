//! The workspace's `.git` and `.weft` as bubblewrap mounts them read-only, whatever
//! shape they are in when a command starts.
//!
//! bubblewrap mounts on a path that exists, and a mount on a symbolic link lands on
//! the link's target, leaving the link itself (an entry of the writable workspace)
//! free to be replaced. So, per name:
//! - a folder or a file (a worktree's `.git` is a *gitfile*): bound read-only onto
//!   itself;
//! - a symbolic link: refused ([`Error::Symlink`]): the command does not run;
//! - absent: an empty folder is made there for the mount (a *mountpoint*), so the
//!   command cannot create the name either, and removed again when the last command
//!   using it ends, if it is still empty and still the folder Weft made.
//!
//! Removing a mountpoint while another sandbox has a mount on it would detach that
//! mount (the kernel allows `rmdir` of a mountpoint of another mount namespace) and
//! hand that sandbox a writable name. Two things prevent it: in this process a count of
//! the commands using each folder Weft made ([`MADE`]); across processes a shared
//! `flock` on the folder, held by every command that mounts one, which the remover must
//! turn into an exclusive lock first (it leaves the folder when it cannot: another
//! Weft process is using it; an empty `.git`/`.weft` is then left behind, which git
//! and Weft both read as absent).

use std::collections::BTreeMap;
use std::fs::File;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};

use crate::Error;

/// The names kept read-only inside the workspace.
pub const PROTECTED: [&str; 2] = [".git", ".weft"];

/// Folders this process made as mountpoints: path → (its device and inode, how many
/// commands use it now).
static MADE: Mutex<BTreeMap<PathBuf, (Id, usize)>> = Mutex::new(BTreeMap::new());

type Id = (u64, u64);

fn id(meta: &std::fs::Metadata) -> Id {
    (meta.dev(), meta.ino())
}

/// What one command holds while it runs: its mountpoints' locks and counts. Keep it
/// until the command has exited; dropping it removes a mountpoint Weft made once no
/// other command uses it.
#[derive(Debug, Default)]
pub struct Hold {
    held: Vec<Held>,
}

#[derive(Debug)]
struct Held {
    path: PathBuf,
    id: Id,
    /// The shared lock, released on drop.
    lock: Option<File>,
    made: bool,
}

/// The paths under `workdir` to bind read-only, and what holds them: `.git` and
/// `.weft`, an empty folder made for each one that is absent.
pub(crate) fn prepare(workdir: &Path) -> Result<(Vec<PathBuf>, Hold), Error> {
    let mut hold = Hold::default();
    let mut binds = Vec::new();
    for name in PROTECTED {
        let path = workdir.join(name);
        if let Some(held) = hold_one(&path)? {
            hold.held.push(held);
        }
        if std::fs::symlink_metadata(&path).is_ok() {
            binds.push(path);
        }
    }
    Ok((binds, hold))
}

fn open_dir(path: &Path) -> std::io::Result<File> {
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_DIRECTORY | libc::O_NOFOLLOW)
        .open(path)
}

/// Holds `path` for one command: `None` for a file (nothing to lock or remove) or a
/// name that cannot be made (the command could not make it either).
fn hold_one(path: &Path) -> Result<Option<Held>, Error> {
    let io = |source| Error::Io {
        path: path.to_path_buf(),
        source,
    };
    // A remover in another process holds its exclusive lock only for an rmdir; a
    // few rounds see it through.
    for _ in 0..16 {
        let mut made_here = MADE.lock().unwrap_or_else(PoisonError::into_inner);
        let made = match std::fs::symlink_metadata(path) {
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => match std::fs::create_dir(path) {
                Ok(()) => {
                    let meta = std::fs::symlink_metadata(path).map_err(io)?;
                    made_here.insert(path.to_path_buf(), (id(&meta), 0));
                    true
                }
                Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => continue,
                // Not writable here (a read-only file system, a folder not ours): the
                // command cannot make the name either.
                Err(_) => return Ok(None),
            },
            Err(e) => return Err(io(e)),
            Ok(meta) if meta.file_type().is_symlink() => {
                return Err(Error::Symlink {
                    path: path.to_path_buf(),
                    target: std::fs::read_link(path).unwrap_or_default(),
                })
            }
            Ok(meta) if meta.is_dir() => {
                let known = made_here.get(path).map(|(i, _)| *i);
                match known {
                    Some(i) if i == id(&meta) => true,
                    Some(_) => {
                        // Another folder took the name since: it is not ours.
                        made_here.remove(path);
                        false
                    }
                    None => false,
                }
            }
            Ok(_) => return Ok(None),
        };
        let lock = match open_dir(path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => continue,
            Err(e) if e.raw_os_error() == Some(libc::ELOOP) => continue,
            Err(e) => return Err(io(e)),
        };
        lock.lock_shared().map_err(io)?;
        let now = std::fs::symlink_metadata(path).ok().map(|m| id(&m));
        let locked = lock.metadata().map_err(io)?;
        if now != Some(id(&locked)) {
            // Removed or replaced while we waited for the lock: start again.
            continue;
        }
        if made {
            if let Some((_, users)) = made_here.get_mut(path) {
                *users += 1;
            }
        }
        return Ok(Some(Held {
            path: path.to_path_buf(),
            id: id(&locked),
            lock: Some(lock),
            made,
        }));
    }
    Err(io(std::io::Error::other(
        "it kept changing while the sandbox was being set up",
    )))
}

/// True when `path` is a mountpoint this process made (for the key of a sandbox
/// started ahead: such a folder stands for an absent name).
pub(crate) fn is_made(path: &Path, meta: &std::fs::Metadata) -> bool {
    MADE.lock()
        .unwrap_or_else(PoisonError::into_inner)
        .get(path)
        .is_some_and(|(i, _)| *i == id(meta))
}

impl Drop for Hold {
    fn drop(&mut self) {
        for mut held in self.held.drain(..) {
            drop(held.lock.take());
            if held.made {
                release(&held);
            }
        }
    }
}

/// The last user of a mountpoint Weft made removes it, if no other process holds it
/// and it is still that folder and empty.
fn release(held: &Held) {
    let mut made = MADE.lock().unwrap_or_else(PoisonError::into_inner);
    let Some((known, users)) = made.get_mut(&held.path) else {
        return;
    };
    if *known != held.id {
        return;
    }
    *users = users.saturating_sub(1);
    if *users > 0 {
        return;
    }
    made.remove(&held.path);
    let Ok(dir) = open_dir(&held.path) else {
        return;
    };
    let same = dir.metadata().is_ok_and(|m| id(&m) == held.id);
    if !same || dir.try_lock().is_err() {
        return;
    }
    let empty = std::fs::read_dir(&held.path).is_ok_and(|mut d| d.next().is_none());
    if empty {
        // Only an empty folder goes; anything written there since stays.
        let _ = std::fs::remove_dir(&held.path);
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn an_absent_name_is_made_for_the_mount_and_removed_after_its_last_user() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::create_dir(ws.path().join(".git")).unwrap();
        let (binds, first) = prepare(ws.path()).unwrap();
        assert_eq!(binds, vec![ws.path().join(".git"), ws.path().join(".weft")]);
        assert!(ws.path().join(".weft").is_dir());
        let (_, second) = prepare(ws.path()).unwrap();
        drop(first);
        assert!(
            ws.path().join(".weft").is_dir(),
            "removed while a second command still mounts it"
        );
        drop(second);
        assert!(!ws.path().join(".weft").exists(), "left behind");
        assert!(
            ws.path().join(".git").is_dir(),
            "the user's own folder went"
        );
    }

    #[test]
    fn a_mountpoint_another_process_holds_is_left_and_one_written_to_is_kept() {
        let ws = tempfile::tempdir().unwrap();
        let (_, hold) = prepare(ws.path()).unwrap();
        // Another Weft process mounting it holds a shared lock on it.
        let other = File::open(ws.path().join(".weft")).unwrap();
        other.lock_shared().unwrap();
        drop(hold);
        assert!(ws.path().join(".weft").is_dir());
        drop(other);
        let (_, hold) = prepare(ws.path()).unwrap();
        drop(hold);
        assert!(
            ws.path().join(".weft").is_dir(),
            "not made by this process: not removed"
        );
        std::fs::remove_dir(ws.path().join(".weft")).unwrap();
        let (_, hold) = prepare(ws.path()).unwrap();
        std::fs::write(ws.path().join(".weft/permissions.json"), "{}").unwrap();
        drop(hold);
        assert!(ws.path().join(".weft/permissions.json").is_file());
    }

    #[test]
    fn a_symlinked_name_is_refused_and_a_gitfile_is_bound() {
        let ws = tempfile::tempdir().unwrap();
        std::fs::write(ws.path().join(".git"), "gitdir: /elsewhere\n").unwrap();
        std::os::unix::fs::symlink("/tmp", ws.path().join(".weft")).unwrap();
        let err = prepare(ws.path()).unwrap_err();
        assert!(
            matches!(&err, Error::Symlink { path, .. } if path.ends_with(".weft")),
            "{err}"
        );
        std::fs::remove_file(ws.path().join(".weft")).unwrap();
        let (binds, hold) = prepare(ws.path()).unwrap();
        assert_eq!(binds[0], ws.path().join(".git"));
        drop(hold);
        assert!(ws.path().join(".git").is_file());
    }
}
