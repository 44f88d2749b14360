//! File access that cannot leave the workspace: every open is resolved by the kernel
//! beneath the workspace's root (`openat2` with `RESOLVE_BENEATH`).
//!
//! The file tools run in Weft's own process, outside any sandbox, so a path the model
//! names must not lead anywhere else — and the workspace is writable by the commands
//! the model runs, which can plant a symbolic link. Checking a path and then opening it
//! loses twice: a dangling link `notes.md -> ~/.bash_login` looks like a new file
//! inside the workspace, and a check can be raced. With `RESOLVE_BENEATH` the kernel
//! refuses, at open time and for every component, a link (or `..`) that leads out of
//! the root; an absolute link counts as leading out. A link that stays inside (`README.md
//! -> docs/README.md`) is followed, so the last component is not opened with
//! `O_NOFOLLOW`: `RESOLVE_BENEATH` already refuses the links that matter, and a
//! workspace's own links keep working. `RESOLVE_NO_MAGICLINKS` refuses `/proc` links.
//! Only regular files are read or written (a FIFO would block, a device is no file).
//! Folders are made one at a time, each under a parent opened the same way.
//!
//! `openat2` is Linux 5.6 or later; on an older kernel the tools refuse to touch files.

use std::fs::File;
use std::io::{Read, Write};
use std::os::fd::OwnedFd;
use std::path::{Component, Path, PathBuf};

use rustix::fs::{Mode, OFlags, ResolveFlags};

fn resolve() -> ResolveFlags {
    ResolveFlags::BENEATH | ResolveFlags::NO_MAGICLINKS
}

/// Why a file beneath the root could not be used.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A symbolic link or `..` leads out of the workspace.
    #[error("it leads out of the workspace (through a symbolic link or ..); only files inside it may be used")]
    Outside,
    /// Not a regular file.
    #[error("it is not a regular file")]
    NotRegular,
    /// The OS said no.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

impl From<rustix::io::Errno> for Error {
    fn from(e: rustix::io::Errno) -> Self {
        // EXDEV: the path left the root; ELOOP: too many links (or a magic link).
        if e == rustix::io::Errno::XDEV || e == rustix::io::Errno::LOOP {
            Error::Outside
        } else {
            Error::Io(e.into())
        }
    }
}

/// `path` (absolute under `root`, or relative to it) as a path relative to `root`,
/// `..` and `.` resolved by name; `None` when it names the root itself or lies outside.
pub fn relative(root: &Path, path: &Path) -> Option<PathBuf> {
    let lexical = lexical(&root.join(path));
    let rel = lexical.strip_prefix(root).ok()?.to_path_buf();
    (!rel.as_os_str().is_empty()).then_some(rel)
}

/// `path` with `..` and `.` resolved by name alone, no link followed.
pub(crate) fn lexical(path: &Path) -> PathBuf {
    let mut lexical = PathBuf::new();
    for c in path.components() {
        match c {
            Component::ParentDir => {
                lexical.pop();
            }
            Component::CurDir => {}
            other => lexical.push(other),
        }
    }
    lexical
}

fn open_root(root: &Path) -> Result<OwnedFd, Error> {
    Ok(rustix::fs::open(
        root,
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
    )?)
}

fn regular(file: File) -> Result<File, Error> {
    if file.metadata()?.is_file() {
        Ok(file)
    } else {
        Err(Error::NotRegular)
    }
}

/// The content of `rel` beneath `root`.
pub fn read(root: &Path, rel: &Path) -> Result<Vec<u8>, Error> {
    let dir = open_root(root)?;
    let fd = rustix::fs::openat2(
        &dir,
        rel,
        OFlags::RDONLY | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::empty(),
        resolve(),
    )?;
    let mut bytes = Vec::new();
    regular(File::from(fd))?.read_to_end(&mut bytes)?;
    Ok(bytes)
}

/// The folder `rel` beneath `root`, made (with its parents) when missing.
fn folder(root: &OwnedFd, rel: &Path) -> Result<OwnedFd, Error> {
    let open = |p: &Path| {
        rustix::fs::openat2(
            root,
            if p.as_os_str().is_empty() {
                Path::new(".")
            } else {
                p
            },
            OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
            Mode::empty(),
            resolve(),
        )
    };
    let mut at = PathBuf::new();
    for c in rel.components() {
        let parent = open(&at)?;
        at.push(c);
        match open(&at) {
            Ok(_) => {}
            Err(rustix::io::Errno::NOENT) => {
                match rustix::fs::mkdirat(&parent, c.as_os_str(), Mode::from_raw_mode(0o777)) {
                    Ok(()) | Err(rustix::io::Errno::EXIST) => {}
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e) => return Err(e.into()),
        }
    }
    Ok(open(&at)?)
}

/// Writes `bytes` as the whole of `rel` beneath `root`, making its folders.
pub fn write(root: &Path, rel: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = open_root(root)?;
    if let Some(parent) = rel.parent() {
        folder(&dir, parent)?;
    }
    let fd = rustix::fs::openat2(
        &dir,
        rel,
        OFlags::WRONLY | OFlags::CREATE | OFlags::CLOEXEC | OFlags::NOCTTY | OFlags::NONBLOCK,
        Mode::from_raw_mode(0o666),
        resolve(),
    )?;
    let mut file = regular(File::from(fd))?;
    // Truncated only once it is known to be a regular file inside.
    file.set_len(0)?;
    file.write_all(bytes)?;
    Ok(())
}

/// Removes the file `rel` beneath `root` (gone already is fine).
pub fn remove(root: &Path, rel: &Path) -> Result<(), Error> {
    let dir = open_root(root)?;
    let (Some(parent), Some(name)) = (rel.parent(), rel.file_name()) else {
        return Err(Error::Outside);
    };
    let parent = rustix::fs::openat2(
        &dir,
        if parent.as_os_str().is_empty() {
            Path::new(".")
        } else {
            parent
        },
        OFlags::PATH | OFlags::DIRECTORY | OFlags::CLOEXEC,
        Mode::empty(),
        resolve(),
    );
    let parent = match parent {
        Ok(p) => p,
        Err(rustix::io::Errno::NOENT) => return Ok(()),
        Err(e) => return Err(e.into()),
    };
    match rustix::fs::unlinkat(&parent, name, rustix::fs::AtFlags::empty()) {
        Ok(()) | Err(rustix::io::Errno::NOENT) => Ok(()),
        Err(e) => Err(e.into()),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn links_out_of_the_root_are_refused_and_links_inside_are_followed() {
        let root = tempfile::tempdir().unwrap();
        let outside = tempfile::tempdir().unwrap();
        let root_path = root.path();
        let target = outside.path().join("created.txt");
        std::os::unix::fs::symlink(&target, root_path.join("notes.md")).unwrap();
        std::os::unix::fs::symlink("../", root_path.join("up")).unwrap();
        std::os::unix::fs::symlink(outside.path(), root_path.join("out")).unwrap();
        for rel in ["notes.md", "up/x.txt", "out/x.txt", "out/new/x.txt"] {
            let r = write(root_path, Path::new(rel), b"escaped");
            assert!(matches!(r, Err(Error::Outside)), "{rel}: {r:?}");
        }
        assert!(!target.exists());
        assert!(std::fs::read_dir(outside.path()).unwrap().next().is_none());
        std::fs::write(outside.path().join("secret"), "s").unwrap();
        assert!(matches!(
            read(root_path, Path::new("out/secret")),
            Err(Error::Outside)
        ));
        // Inside: written, read back, through an inside link too.
        write(root_path, Path::new("docs/README.md"), b"one").unwrap();
        std::os::unix::fs::symlink("docs/README.md", root_path.join("README.md")).unwrap();
        write(root_path, Path::new("README.md"), b"two").unwrap();
        assert_eq!(
            read(root_path, Path::new("docs/README.md")).unwrap(),
            b"two"
        );
        remove(root_path, Path::new("docs/README.md")).unwrap();
        remove(root_path, Path::new("docs/README.md")).unwrap();
        assert_eq!(
            relative(root_path, &root_path.join("a/../b.txt")),
            Some(PathBuf::from("b.txt"))
        );
        assert_eq!(relative(root_path, Path::new("../x")), None);
        assert_eq!(relative(root_path, Path::new(".")), None);
    }
}
