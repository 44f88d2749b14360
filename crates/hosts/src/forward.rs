//! A host's ports on this machine: a worktree's dev server on the host (its
//! `WEFT_PORT` range) opened in the local browser at `http://127.0.0.1:LOCAL`.
//!
//! The forward is asked of the host's shared ssh connection (`ssh -O forward -L
//! 127.0.0.1:LOCAL:127.0.0.1:PORT HOST`) and cancelled the same way (`-O cancel`):
//! no second connection, no second login, and the user's ssh config (jump hosts, keys)
//! serves it as it serves everything else. It listens on loopback only.
//!
//! A forward lives in the shared connection: when none is open, one is opened for it
//! that stays (`ControlPersist=yes`) until `weft hosts remove` ends it, so the forward
//! does not go away a minute after the command that made it. (A shared connection some
//! other command opened ends a minute after its last session, and its forwards with
//! it; [`list`] says which are still listening.) OpenSSH keeps no list of them that a
//! client can read, so Weft keeps one: `$WEFT_HOME/forwards.json`.

use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use weft_client::Home;

use crate::{Host, HostError, Ssh};

/// One forward: `127.0.0.1:local` here reaches `127.0.0.1:port` on `host`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Forward {
    /// The host's name.
    pub host: String,
    /// The port on the host.
    pub port: u16,
    /// The port on this machine.
    pub local: u16,
}

impl Forward {
    /// The `-L` argument.
    fn spec(&self) -> String {
        format!("127.0.0.1:{}:127.0.0.1:{}", self.local, self.port)
    }

    /// Where it opens on this machine.
    pub fn url(&self) -> String {
        format!("http://127.0.0.1:{}/", self.local)
    }
}

/// A forward as [`list`] reports it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ForwardState {
    /// The forward.
    #[serde(flatten)]
    pub forward: Forward,
    /// Whether something listens on its local port now.
    pub listening: bool,
}

/// Reads `PORT` or `PORT:LOCALPORT` (the local port defaults to the host's).
pub fn parse(spec: &str) -> Result<(u16, u16), HostError> {
    let bad = || {
        HostError::Invalid(format!(
            "{spec:?} is not PORT or PORT:LOCALPORT (1-65535 each)"
        ))
    };
    let port = |s: &str| s.parse::<u16>().ok().filter(|p| *p > 0).ok_or_else(bad);
    match spec.split_once(':') {
        Some((remote, local)) => Ok((port(remote)?, port(local)?)),
        None => {
            let p = port(spec)?;
            Ok((p, p))
        }
    }
}

fn file(home: &Home) -> PathBuf {
    home.dir().join("forwards.json")
}

fn load(home: &Home) -> Vec<Forward> {
    std::fs::read(file(home))
        .ok()
        .and_then(|b| serde_json::from_slice(&b).ok())
        .unwrap_or_default()
}

fn save(home: &Home, forwards: &[Forward]) -> Result<(), HostError> {
    let path = file(home);
    let list_error = |why: String| HostError::List {
        path: path.display().to_string(),
        why,
    };
    let text = serde_json::to_vec_pretty(forwards).map_err(|e| list_error(e.to_string()))?;
    let dir = home.dir();
    std::fs::create_dir_all(dir).map_err(|e| list_error(e.to_string()))?;
    let tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| list_error(e.to_string()))?;
    std::fs::write(tmp.path(), text).map_err(|e| list_error(e.to_string()))?;
    tmp.persist(&path)
        .map(drop)
        .map_err(|e| list_error(e.to_string()))
}

async fn run(host: &str, mut cmd: tokio::process::Command) -> Result<String, HostError> {
    let out = cmd
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output();
    let out = tokio::time::timeout(Duration::from_secs(30), out)
        .await
        .map_err(|_| HostError::Unreachable {
            host: host.to_string(),
            why: "ssh did not answer in 30 s".into(),
        })??;
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    if out.status.success() {
        Ok(said)
    } else {
        Err(HostError::Unreachable {
            host: host.to_string(),
            why: if said.is_empty() {
                format!("ssh exited with {}", out.status)
            } else {
                said
            },
        })
    }
}

/// Forwards `127.0.0.1:local` here to `127.0.0.1:port` on `host`, through its shared
/// connection (opened, to stay, if none is), and records it.
pub async fn start(
    home: &Home,
    ssh: &Ssh,
    host: &Host,
    port: u16,
    local: u16,
) -> Result<Forward, HostError> {
    let forward = Forward {
        host: host.name.clone(),
        port,
        local,
    };
    if ssh.control_dir().is_none() {
        return Err(HostError::Invalid(
            "no folder for ssh's shared connections (XDG_RUNTIME_DIR, WEFT_HOME/ssh): \
             a forward lives in one"
                .into(),
        ));
    }
    if run(&host.name, ssh.control(&host.destination, "check", None))
        .await
        .is_err()
    {
        run(&host.name, ssh.persistent_master(&host.destination)).await?;
    }
    run(
        &host.name,
        ssh.control(&host.destination, "forward", Some(&forward.spec())),
    )
    .await?;
    let mut all = load(home);
    all.retain(|f| f.local != local);
    all.push(forward.clone());
    save(home, &all)?;
    Ok(forward)
}

/// Cancels the forward of `host`'s `port` (every local port it has), and forgets it.
pub async fn cancel(
    home: &Home,
    ssh: &Ssh,
    host: &Host,
    port: u16,
) -> Result<Vec<Forward>, HostError> {
    let mut all = load(home);
    let (gone, kept): (Vec<Forward>, Vec<Forward>) = all
        .drain(..)
        .partition(|f| f.host == host.name && f.port == port);
    if gone.is_empty() {
        return Err(HostError::Invalid(format!(
            "no forward of port {port} of host {} (weft hosts forward --list)",
            host.name
        )));
    }
    for f in &gone {
        // A connection that went away took its forward with it: nothing to cancel.
        if let Err(e) = run(
            &host.name,
            ssh.control(&host.destination, "cancel", Some(&f.spec())),
        )
        .await
        {
            if listening(f.local).await {
                return Err(e);
            }
        }
    }
    save(home, &kept)?;
    Ok(gone)
}

/// Forgets every forward of `host` (it was removed, its connection ended).
pub fn forget(home: &Home, host: &str) -> Result<(), HostError> {
    let mut all = load(home);
    let before = all.len();
    all.retain(|f| f.host != host);
    if all.len() == before {
        return Ok(());
    }
    save(home, &all)
}

/// The forwards recorded, each with whether its local port still listens.
pub async fn list(home: &Home) -> Vec<ForwardState> {
    let mut out = Vec::new();
    for forward in load(home) {
        let listening = listening(forward.local).await;
        out.push(ForwardState { forward, listening });
    }
    out
}

/// Whether something accepts connections on `127.0.0.1:port`.
async fn listening(port: u16) -> bool {
    let connect = tokio::net::TcpStream::connect(("127.0.0.1", port));
    matches!(
        tokio::time::timeout(Duration::from_secs(2), connect).await,
        Ok(Ok(_))
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_port_or_a_port_and_a_local_one() {
        assert_eq!(parse("3000").ok(), Some((3000, 3000)));
        assert_eq!(parse("3000:8080").ok(), Some((3000, 8080)));
        for bad in ["", "0", "x", "3000:", ":80", "70000", "1:2:3"] {
            assert!(parse(bad).is_err(), "{bad}");
        }
        let f = Forward {
            host: "gpu".into(),
            port: 3000,
            local: 8080,
        };
        assert_eq!(f.spec(), "127.0.0.1:8080:127.0.0.1:3000");
        assert_eq!(f.url(), "http://127.0.0.1:8080/");
    }

    #[test]
    fn the_list_is_kept_per_home_and_a_removed_hosts_forwards_are_forgotten() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = Home::at(dir.path());
        let f = |host: &str, port| Forward {
            host: host.into(),
            port,
            local: port + 1,
        };
        save(&home, &[f("gpu", 3000), f("box", 4000)]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load(&home), vec![f("gpu", 3000), f("box", 4000)]);
        forget(&home, "gpu").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(load(&home), vec![f("box", 4000)]);
    }
}
