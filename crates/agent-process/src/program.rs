//! Finding an agent's executable, the same way for every driver, never relative to
//! the current folder.
//!
//! The kernel runs as a per-user service on behalf of clients started in any folder,
//! including a repository the user just cloned. A lookup that consulted the current
//! folder (its `.tools`, or a `.` or `bin` entry on `PATH`) would run whatever that
//! repository planted under an agent's name. So, for a bare name:
//!
//! 1. the agent's `WEFT_<AGENT>_BIN`, when the turn's environment sets it: an
//!    absolute path to a file (a relative one would depend on the service's folder);
//! 2. the project-local install that `scripts/setup.sh` makes ([`LOCAL_BIN_DIR`]),
//!    looked for only above the running executable (a development checkout's
//!    `target/…` or an installed tree), never above the current folder;
//! 3. `PATH` — the turn's, as its agent would see it — skipping entries that are empty
//!    or relative (`PATH=:/usr/bin` or `.` mean "the current folder" to a shell).
//!
//! A name found must be an executable file.

use std::ffi::OsStr;
use std::path::{Path, PathBuf};

/// Where the project's set-up installs agent CLIs, relative to the repository root.
pub const LOCAL_BIN_DIR: &str = ".tools/agents/node_modules/.bin";

/// Whether `path` is a file someone may execute.
fn executable(path: &Path) -> bool {
    use std::os::unix::fs::PermissionsExt;
    path.metadata()
        .is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
}

/// `command` as a bare name (no folder part), when it is one.
fn bare(command: &str) -> bool {
    !command.is_empty() && Path::new(command).components().count() == 1 && !command.contains('/')
}

/// `command` in the project-local install above `exe` (the running executable).
pub fn local_install_above(exe: &Path, command: &str) -> Option<PathBuf> {
    if !bare(command) {
        return None;
    }
    exe.ancestors()
        .skip(1)
        .map(|dir| dir.join(LOCAL_BIN_DIR).join(command))
        .find(|c| executable(c))
}

/// `command` in the project-local install above the running executable.
pub fn local_install(command: &str) -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    local_install_above(&exe, command)
}

/// `command` in the absolute folders of `path` (a `PATH` value), first found wins.
pub fn search_path(command: &str, path: &OsStr) -> Option<PathBuf> {
    if !bare(command) {
        return None;
    }
    std::env::split_paths(path)
        .filter(|dir| dir.is_absolute())
        .map(|dir| dir.join(command))
        .find(|c| executable(c))
}

/// A program by absolute path, or by bare name in the project-local install (above
/// the running executable) or on `path` (the turn's `PATH`; `None` searches none). A
/// relative path with a folder part (`./agent`, `bin/agent`) is never found.
pub fn find_program(command: &str, path: Option<&OsStr>) -> Option<PathBuf> {
    let as_path = Path::new(command);
    if as_path.is_absolute() {
        return executable(as_path).then(|| as_path.to_path_buf());
    }
    local_install(command).or_else(|| search_path(command, path?))
}

/// The program a setting (`WEFT_<AGENT>_BIN`) names: it must be an absolute path (a
/// relative one would be looked up in the kernel's own folder) to an executable file.
pub fn explicit_program(setting: &str, value: &str) -> Result<PathBuf, String> {
    let p = PathBuf::from(value);
    if !p.is_absolute() {
        Err(format!(
            "{setting} is `{value}`, which is not an absolute path (a relative one would \
             be looked up in the kernel's own folder)"
        ))
    } else if executable(&p) {
        Ok(p)
    } else {
        Err(format!(
            "{setting} points at {}, which is not an executable file",
            p.display()
        ))
    }
}

/// The folder `weft agents install` installs agents into: `$WEFT_HOME/agents` (else
/// `~/.weft/agents`), as the turn's environment `var` names it.
pub fn installed_agents_dir(var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf> {
    let set = |name: &str| {
        var(name)
            .filter(|v| !v.trim().is_empty())
            .map(PathBuf::from)
    };
    let home = set("WEFT_HOME").or_else(|| set("HOME").map(|h| h.join(".weft")))?;
    home.is_absolute().then(|| home.join("agents"))
}

/// Finds an agent's executable for a turn: the first of `bin_vars` that `var` (the
/// turn's environment, `AgentTurnInput::var`) sets ([`explicit_program`]), else the
/// one `weft agents install` put in [`installed_agents_dir`], else [`find_program`]
/// with the turn's `PATH`. The error says where it looked; callers add how to install
/// it.
pub fn find_agent(
    command: &str,
    bin_vars: &[&str],
    var: &dyn Fn(&str) -> Option<String>,
) -> Result<PathBuf, String> {
    for name in bin_vars {
        if let Some(value) = var(name).filter(|v| !v.trim().is_empty()) {
            return explicit_program(name, &value);
        }
    }
    if bare(command) {
        if let Some(dir) = installed_agents_dir(var) {
            let p = dir.join("node_modules/.bin").join(command);
            if executable(&p) {
                return Ok(p);
            }
        }
    }
    let path = var("PATH");
    if let Some(found) = find_program(command, path.as_deref().map(OsStr::new)) {
        return Ok(found);
    }
    if Path::new(command).is_absolute() {
        return Err(format!("`{command}` is not an executable file"));
    }
    if !bare(command) {
        return Err(format!(
            "`{command}` is a relative path; give a bare name or an absolute path"
        ));
    }
    let mut looked: Vec<String> = bin_vars.iter().map(|v| format!("${v}")).collect();
    if let Some(dir) = installed_agents_dir(var) {
        looked.push(format!(
            "{} (`weft agents install {command}`)",
            dir.join("node_modules/.bin").join(command).display()
        ));
    }
    looked.push(format!("{LOCAL_BIN_DIR}/{command} above this program"));
    looked.push("the absolute folders on PATH".into());
    Err(format!(
        "`{command}` was not found (looked at {})",
        looked.join(", ")
    ))
}

/// The version of the npm package `program` comes from (its link resolved, the nearest
/// `package.json` with a `bin` above it), read rather than run: starting a Node CLI just
/// for `--version` costs 0.2-3.5 s of CPU each (Gemini's bundle the most), and the kernel
/// lists every agent at once, so on a busy 2-core machine `listAgentInfo` took over 10 s.
pub fn npm_package_version(program: &Path) -> Option<String> {
    let real = program.canonicalize().ok()?;
    real.ancestors().skip(1).take(4).find_map(|dir| {
        let text = std::fs::read_to_string(dir.join("package.json")).ok()?;
        let v: serde_json::Value = serde_json::from_str(&text).ok()?;
        v.get("bin")?;
        v["version"].as_str().map(String::from)
    })
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use std::os::unix::fs::PermissionsExt;

    use super::*;

    fn plant(path: &Path) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, "#!/bin/sh\necho planted\n").unwrap();
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }

    #[test]
    fn the_local_install_is_found_above_the_executable_only() {
        let root = tempfile::tempdir().unwrap();
        let exe = root.path().join("target/debug/weft");
        let agent = root.path().join(LOCAL_BIN_DIR).join("fake-agent");
        plant(&agent);
        assert_eq!(local_install_above(&exe, "fake-agent"), Some(agent));
        // Not below it, and not for a name with a folder part.
        let other = tempfile::tempdir().unwrap();
        assert_eq!(
            local_install_above(&other.path().join("weft"), "fake-agent"),
            None
        );
        assert_eq!(local_install_above(&exe, "../fake-agent"), None);
    }

    #[test]
    fn path_search_skips_empty_and_relative_entries_and_plain_files() {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        plant(&bin.join("fake-agent"));
        std::fs::write(bin.join("not-executable"), "x").unwrap();
        let path = std::env::join_paths(["", ".", "bin", bin.to_str().unwrap()]).unwrap();
        assert_eq!(
            search_path("fake-agent", &path),
            Some(bin.join("fake-agent"))
        );
        assert_eq!(search_path("not-executable", &path), None);
        assert_eq!(search_path("fake-agent", OsStr::new(".:bin:")), None);
    }

    #[test]
    fn the_bin_variable_comes_first_and_must_be_absolute() {
        let dir = tempfile::tempdir().unwrap();
        let agent = dir.path().join("my-agent");
        plant(&agent);
        let abs = agent.display().to_string();
        let vars = |name: &str| match name {
            "WEFT_X_BIN" => Some(abs.clone()),
            _ => None,
        };
        assert_eq!(find_agent("x", &["WEFT_X_BIN"], &vars), Ok(agent.clone()));
        let relative = |name: &str| (name == "WEFT_X_BIN").then(|| "./my-agent".to_string());
        let err = find_agent("x", &["WEFT_X_BIN"], &relative).unwrap_err();
        assert!(err.contains("not an absolute path"), "{err}");
        let missing = |name: &str| (name == "WEFT_X_BIN").then(|| "/nowhere/x".to_string());
        let err = find_agent("x", &["WEFT_X_BIN"], &missing).unwrap_err();
        assert!(err.contains("/nowhere/x"), "{err}");
        let none = |_: &str| None;
        let err = find_agent("weft-no-such-agent", &["WEFT_X_BIN"], &none).unwrap_err();
        assert!(err.contains("$WEFT_X_BIN") && err.contains("PATH"), "{err}");
        let err = find_agent("bin/agent", &[], &none).unwrap_err();
        assert!(err.contains("relative path"), "{err}");
    }
}
