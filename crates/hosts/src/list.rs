//! The hosts list: `$WEFT_HOME/hosts.json`, written whole to a temporary file beside
//! it and renamed over it, so a crash or a second writer never leaves half a list.

use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use weft_client::Home;

use crate::HostError;

/// The implicit host: this machine.
pub const LOCAL: &str = "local";

/// One other machine.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Host {
    /// What the user calls it (`--host NAME`).
    pub name: String,
    /// What `ssh` is given.
    pub destination: String,
    /// Its `$HOME`, as first contact found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    /// The `weft` last installed or found there by this machine.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub installed: Option<Installed>,
    /// For a `wss://` destination (a `weft serve` reached straight over TLS): the
    /// SHA-256 fingerprint of its key, the only one trusted.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fingerprint: Option<String>,
}

impl Host {
    /// Whether it is reached straight over TLS (`wss://`) rather than over ssh.
    pub fn direct(&self) -> bool {
        self.destination.starts_with("wss://")
    }
}

/// A `weft` on a host, as checked at first contact.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Installed {
    /// Its version.
    pub version: String,
    /// Its SHA-256 (hex).
    pub sha256: String,
    /// Which local binary it copies (its size and modification time): another local
    /// build of the same version is checked again.
    pub local: String,
}

/// The hosts list of a `WEFT_HOME`.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Hosts {
    /// The hosts, in the order they were added.
    pub hosts: Vec<Host>,
}

/// Its file.
pub fn file(home: &Home) -> PathBuf {
    home.dir().join("hosts.json")
}

impl Hosts {
    /// Reads the list (none yet: empty).
    pub fn load(home: &Home) -> Result<Hosts, HostError> {
        let path = file(home);
        match std::fs::read(&path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| list_error(&path, e)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Hosts::default()),
            Err(e) => Err(list_error(&path, e)),
        }
    }

    /// Writes the list atomically (0600: it names machines and users).
    pub fn save(&self, home: &Home) -> Result<(), HostError> {
        let path = file(home);
        let write = || -> std::io::Result<()> {
            use std::io::Write as _;
            std::fs::create_dir_all(home.dir())?;
            let mut tmp = tempfile::NamedTempFile::new_in(home.dir())?;
            let bytes = serde_json::to_vec_pretty(self).map_err(std::io::Error::other)?;
            tmp.write_all(&bytes)?;
            tmp.as_file().sync_all()?;
            tmp.persist(&path).map_err(|e| e.error)?;
            Ok(())
        };
        write().map_err(|e| list_error(&path, e))
    }

    /// The host called `name`.
    pub fn get(&self, name: &str) -> Result<&Host, HostError> {
        self.hosts
            .iter()
            .find(|h| h.name == name)
            .ok_or_else(|| HostError::Unknown(name.to_string()))
    }

    /// Adds a host (a name already there is an error, as is `local`).
    pub fn add(&mut self, name: &str, destination: &str) -> Result<&mut Host, HostError> {
        check_name(name)?;
        check_destination(destination)?;
        if self.hosts.iter().any(|h| h.name == name) {
            return Err(HostError::Invalid(format!(
                "a host named {name:?} is already there (`weft hosts remove {name}` first)"
            )));
        }
        self.hosts.push(Host {
            name: name.to_string(),
            destination: destination.to_string(),
            home: None,
            installed: None,
            fingerprint: None,
        });
        let last = self.hosts.len() - 1;
        Ok(&mut self.hosts[last])
    }

    /// Takes the host out of the list, returning it.
    pub fn remove(&mut self, name: &str) -> Result<Host, HostError> {
        let at = self
            .hosts
            .iter()
            .position(|h| h.name == name)
            .ok_or_else(|| HostError::Unknown(name.to_string()))?;
        Ok(self.hosts.remove(at))
    }

    /// Replaces the record of the host of the same name.
    pub fn update(&mut self, host: Host) {
        if let Some(slot) = self.hosts.iter_mut().find(|h| h.name == host.name) {
            *slot = host;
        }
    }
}

fn list_error(path: &Path, e: impl std::fmt::Display) -> HostError {
    HostError::List {
        path: path.display().to_string(),
        why: e.to_string(),
    }
}

/// A host's name is a key part (`HOST/agent:id`): letters, digits, `-`, `_`, `.`.
pub fn check_name(name: &str) -> Result<(), HostError> {
    let ok = !name.is_empty()
        && name.len() <= 64
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(&b));
    if !ok {
        return Err(HostError::Invalid(format!(
            "{name:?} cannot name a host: use letters, digits, '-', '_' or '.'"
        )));
    }
    if name == LOCAL {
        return Err(HostError::Invalid(
            "`local` is this machine and is always there".into(),
        ));
    }
    Ok(())
}

/// A destination is one word `ssh` reads as a destination, never as an option.
fn check_destination(destination: &str) -> Result<(), HostError> {
    if destination.is_empty()
        || destination.starts_with('-')
        || destination
            .chars()
            .any(|c| c.is_whitespace() || c.is_control())
    {
        return Err(HostError::Invalid(format!(
            "{destination:?} is not an ssh destination (`user@host`, `host` or a Host alias of ~/.ssh/config)"
        )));
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_list_round_trips_and_refuses_bad_names_and_options_as_destinations() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        assert_eq!(Hosts::load(&home).ok(), Some(Hosts::default()));
        let mut hosts = Hosts::default();
        hosts
            .add("gpu", "me@gpu.example")
            .unwrap_or_else(|e| panic!("{e}"));
        assert!(hosts.add("gpu", "other").is_err());
        assert!(hosts.add("local", "x").is_err());
        assert!(hosts.add("a/b", "x").is_err());
        assert!(hosts.add("evil", "-oProxyCommand=sh").is_err());
        assert!(hosts.add("sp", "a b").is_err());
        hosts.save(&home).unwrap_or_else(|e| panic!("{e}"));
        let mode = std::os::unix::fs::PermissionsExt::mode(
            &std::fs::metadata(file(&home))
                .unwrap_or_else(|e| panic!("{e}"))
                .permissions(),
        );
        assert_eq!(mode & 0o077, 0, "{mode:o}");
        let back = Hosts::load(&home).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(back, hosts);
        assert_eq!(
            back.get("gpu").map(|h| h.destination.clone()).ok(),
            Some("me@gpu.example".into())
        );
        let mut back = back;
        back.remove("gpu").unwrap_or_else(|e| panic!("{e}"));
        assert!(matches!(back.get("gpu"), Err(HostError::Unknown(_))));
    }
}
