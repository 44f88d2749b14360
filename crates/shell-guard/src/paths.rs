//! Where a path points, for deletes and writes: root, a system folder, home, the
//! workspace (its root or inside), the temp folder, elsewhere; and what a program named
//! by a path runs as.

use std::path::{Component, Path, PathBuf};

/// A path's place.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Place {
    /// `/` itself.
    Root,
    /// A top-level folder or one the system owns (`/etc`, `/usr`, `/boot`…).
    System,
    /// A block device (`/dev/sda`, `/dev/nvme0n1`…).
    Device,
    /// `/dev/null` and friends: writing there changes nothing.
    Sink,
    /// A home folder itself, or `/home`.
    Home,
    /// The workspace folder itself.
    WorkspaceRoot,
    /// Below the workspace.
    InWorkspace,
    /// Below the temp folder.
    Temp,
    /// Anywhere else.
    Elsewhere,
}

const SYSTEM: &[&str] = &[
    "/bin", "/boot", "/dev", "/etc", "/lib", "/lib32", "/lib64", "/libx32", "/opt", "/proc",
    "/root", "/sbin", "/srv", "/sys", "/usr", "/var", "/snap", "/efi",
];

/// Lexically normalizes `p` against `base` (`.` and `..` folded, no symlinks read).
pub fn normalize(p: &Path, base: &Path) -> PathBuf {
    let joined = if p.is_absolute() {
        p.to_path_buf()
    } else {
        base.join(p)
    };
    let mut out = PathBuf::from("/");
    for c in joined.components() {
        match c {
            Component::ParentDir => {
                out.pop();
            }
            Component::Normal(n) => out.push(n),
            _ => {}
        }
    }
    out
}

/// Where `p` (already normalized) is.
pub fn place(p: &Path, workdir: &Path, home: Option<&Path>) -> Place {
    let s = p.to_string_lossy();
    if s == "/" {
        return Place::Root;
    }
    if matches!(
        &*s,
        "/dev/null" | "/dev/stdout" | "/dev/stderr" | "/dev/tty" | "/dev/zero"
    ) || s.starts_with("/dev/fd/")
    {
        return Place::Sink;
    }
    if is_device(&s) {
        return Place::Device;
    }
    if p == workdir {
        return Place::WorkspaceRoot;
    }
    if p.starts_with(workdir) && workdir != Path::new("/") {
        return Place::InWorkspace;
    }
    if home.is_some_and(|h| p == h) || s == "/home" || s == "/root" {
        return Place::Home;
    }
    if s == "/tmp" || s == "/var/tmp" {
        return Place::System;
    }
    if p.starts_with("/tmp") || p.starts_with("/var/tmp") {
        return Place::Temp;
    }
    if p.components().count() == 2 {
        // Any top-level folder (`/mnt`, `/data`…) holds more than one project.
        return Place::System;
    }
    if SYSTEM.iter().any(|d| p.starts_with(d)) {
        return Place::System;
    }
    Place::Elsewhere
}

fn is_device(s: &str) -> bool {
    let Some(dev) = s.strip_prefix("/dev/") else {
        return false;
    };
    [
        "sd", "hd", "vd", "xvd", "nvme", "mmcblk", "md", "dm-", "loop", "sr", "disk/", "mapper/",
    ]
    .iter()
    .any(|p| dev.starts_with(p))
}

/// The folders a program named by its path is the system's own program in.
const SYSTEM_BIN: [&str; 6] = [
    "/bin",
    "/usr/bin",
    "/usr/local/bin",
    "/sbin",
    "/usr/sbin",
    "/usr/local/sbin",
];

/// The name a program word runs as: a bare name (looked up on PATH, whose changes are
/// judged apart) or a path into one of the system's own folders. None for any other
/// path (`./cat`, `tools/ls`, `/tmp/rm`): that file is what runs, whatever its name.
pub fn system_name(p: &str) -> Option<&str> {
    match p.rsplit_once('/') {
        None => Some(p),
        Some((dir, name)) => SYSTEM_BIN.contains(&dir).then_some(name),
    }
}

/// The program's file name (`/usr/bin/rm` → `rm`).
pub fn base(p: &str) -> &str {
    p.rsplit('/').next().unwrap_or(p)
}

/// The home folder of the user `name` as bash's `~name` finds it (the password
/// database), or `None` when there is no such user (bash then leaves `~name` as it is).
pub fn user_home(name: &str) -> Option<String> {
    // A name a password database could hold; anything else is not looked up.
    if name.starts_with('-')
        || !name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-' | '$'))
    {
        return None;
    }
    let user = nix::unistd::User::from_name(name).ok().flatten()?;
    Some(user.dir.to_string_lossy().into_owned())
}
