//! A remote session's file opened on this machine: the file an agent on a host named
//! (a link in its reply, a tool call's path) is read through that host's daemon
//! (`readFile`, at most 16 MiB) and copied to `<state_dir>/remote/<host>/<its path>`,
//! which then opens as a local file does ([`crate::open`]): the editor, or the desktop's
//! handler for an inert type. The copy is this machine's: editing it changes nothing
//! on the host.
//!
//! Which host: the path itself named `HOST:/abs/path`, or the session's folder
//! `HOST:/…` (a relative path is that folder's). The host's answer names the file by
//! its resolved absolute path, and the copy's place is built from that path's plain
//! components only, so nothing the host says can put a file outside `remote/<host>/`.

use std::path::{Component, Path, PathBuf};

use base64::Engine as _;
use weft_protocol::{ClientRequest, ErrorCode, FileContent, WireError};

use crate::route::split_folder;

/// The largest file opened from a host.
pub const MAX_BYTES: u32 = 16 << 20;

/// The host and the path on it of the file `path` (relative to `workdir`), when either
/// names a host of `hosts`; `None`: a file of this machine.
pub fn remote_target(
    path: &str,
    workdir: Option<&str>,
    hosts: &[String],
) -> Option<(String, String)> {
    let raw = path.strip_prefix("file://").unwrap_or(path);
    if let Some((host, own)) = split_folder(raw, hosts) {
        return Some((host.to_string(), own.to_string()));
    }
    let (host, dir) = split_folder(workdir?, hosts)?;
    let own = if raw.starts_with('/') {
        raw.to_string()
    } else {
        Path::new(dir).join(raw).display().to_string()
    };
    Some((host.to_string(), own))
}

/// Where the copy of `host`'s file `path` (absolute) goes under `state_dir`.
pub fn copy_path(state_dir: &Path, host: &str, path: &str) -> Result<PathBuf, String> {
    let mut out = state_dir.join("remote").join(host);
    let mut parts = 0;
    for c in Path::new(path).components() {
        match c {
            Component::RootDir => {}
            Component::Normal(part) => {
                out.push(part);
                parts += 1;
            }
            _ => return Err(format!("host {host} named the file {path:?}")),
        }
    }
    if parts == 0 || !path.starts_with('/') {
        return Err(format!("host {host} named the file {path:?}"));
    }
    Ok(out)
}

/// Reads `host`'s file `path` through `link` and writes its copy under `state_dir`
/// (0600): the copy's path.
pub async fn fetch(
    link: &std::sync::Arc<crate::link::Link>,
    app: &tauri::AppHandle,
    state_dir: &Path,
    host: &str,
    path: &str,
) -> Result<PathBuf, WireError> {
    let (own, bytes) = read(link, app, host, path).await?;
    let copy =
        copy_path(state_dir, host, &own).map_err(|e| WireError::new(ErrorCode::BadRequest, e))?;
    write_private(&copy, &bytes).map_err(|e| {
        WireError::new(
            ErrorCode::Internal,
            format!("copying {host}:{own} to {}: {e}", copy.display()),
        )
    })?;
    tracing::info!(host, path = own, copy = %copy.display(), "copied a host's file here");
    Ok(copy)
}

/// The name a download of the host's file `path` is offered under: its last plain
/// component (`file` when it has none).
pub fn download_name(path: &str) -> String {
    Path::new(path)
        .file_name()
        .and_then(|n| n.to_str())
        .filter(|n| !n.is_empty())
        .unwrap_or("file")
        .to_string()
}

/// Writes `bytes` to `dest`, a file the user picked in the save dialog (0600: it came
/// from another machine, and may be anything of the host's user's).
pub fn save(dest: &Path, bytes: &[u8]) -> std::io::Result<()> {
    write_private(dest, bytes)
}

/// Reads `host`'s file `path` through its daemon (at most [`MAX_BYTES`]): its resolved
/// path on the host and its bytes.
pub async fn read(
    link: &std::sync::Arc<crate::link::Link>,
    app: &tauri::AppHandle,
    host: &str,
    path: &str,
) -> Result<(String, Vec<u8>), WireError> {
    let request = ClientRequest::ReadFile {
        path: path.to_string(),
        max_bytes: Some(MAX_BYTES),
    };
    let reply = link.request_on(app, Some(host), request).await?;
    let file: FileContent = serde_json::from_value(reply)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("host {host}'s answer: {e}")))?;
    if file.truncated {
        return Err(WireError::new(
            ErrorCode::BadRequest,
            format!(
                "{host}:{} is {} bytes; files of at most {MAX_BYTES} bytes open from a host",
                file.path, file.size
            ),
        ));
    }
    // The host named it as `HOST:/path` (the shell names a host's folders back).
    let own = split_folder(&file.path, &[host.to_string()]).map_or(file.path.as_str(), |(_, p)| p);
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(&file.data)
        .map_err(|e| WireError::new(ErrorCode::Internal, format!("host {host}'s answer: {e}")))?;
    Ok((own.to_string(), bytes))
}

fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::os::unix::fs::{DirBuilderExt as _, OpenOptionsExt as _};
    if let Some(dir) = path.parent() {
        std::fs::DirBuilder::new()
            .recursive(true)
            .mode(0o700)
            .create(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create(true)
        .truncate(true)
        .mode(0o600)
        .open(path)?;
    std::io::Write::write_all(&mut file, bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosts() -> Vec<String> {
        vec!["gpu".into()]
    }

    #[test]
    fn a_hosts_file_is_named_by_its_folder_or_the_sessions() {
        assert_eq!(
            remote_target("notes.md", Some("gpu:/srv/proj"), &hosts()),
            Some(("gpu".into(), "/srv/proj/notes.md".into()))
        );
        assert_eq!(
            remote_target("/etc/motd", Some("gpu:/srv/proj"), &hosts()),
            Some(("gpu".into(), "/etc/motd".into()))
        );
        assert_eq!(
            remote_target("gpu:/srv/x.rs", None, &hosts()),
            Some(("gpu".into(), "/srv/x.rs".into()))
        );
        // This machine's, and a host not in the list.
        assert_eq!(remote_target("notes.md", Some("/w"), &hosts()), None);
        assert_eq!(remote_target("notes.md", Some("box:/w"), &hosts()), None);
        assert_eq!(remote_target("notes.md", None, &hosts()), None);
    }

    #[test]
    fn a_download_is_offered_under_the_files_own_name() {
        assert_eq!(download_name("/srv/proj/report.pdf"), "report.pdf");
        assert_eq!(download_name("/"), "file");
        assert_eq!(download_name(""), "file");
    }

    #[test]
    fn the_copy_stays_under_the_hosts_folder() {
        let state = Path::new("/state");
        assert_eq!(
            copy_path(state, "gpu", "/srv/proj/notes.md"),
            Ok(PathBuf::from("/state/remote/gpu/srv/proj/notes.md"))
        );
        for bad in ["/srv/../../etc/passwd", "relative", "/", ""] {
            assert!(copy_path(state, "gpu", bad).is_err(), "{bad}");
        }
    }
}
