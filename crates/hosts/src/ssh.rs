//! How Weft runs the system's `ssh`.
//!
//! - `-T` and `RequestTTY=no`, `RemoteCommand=none`: a byte stream, never a terminal,
//!   whatever the user's config says for interactive logins.
//! - One connection per host shared by every window and command: `ControlMaster=auto`
//!   with the control socket in `$XDG_RUNTIME_DIR/weft` (else a private folder of
//!   `WEFT_HOME`) and `ControlPersist`, so a second command skips the handshake. The
//!   socket name `cm-%C` is a 40-hex hash; its folder must stay short, because a Unix
//!   socket path has 108 bytes and ssh binds a longer temporary name first.
//! - `ServerAliveInterval`: a dead link is noticed in under a minute.
//! - `BatchMode=yes`: a prompt nobody can answer fails at once instead of hanging;
//!   [`Ssh::prompting`] leaves it out where a user sits at the terminal (`weft hosts
//!   add`), so ssh can ask there (on /dev/tty, not on the script's stdin) to accept a
//!   new host key or for a passphrase, and the shared connection it opens then serves
//!   the commands that follow without asking again.
//! - `WEFT_SSH_CONFIG`: an ssh config file given with `-F` instead of `~/.ssh/config`
//!   (the tests' own, with their keys, known_hosts and jump hosts).

use std::path::{Path, PathBuf};

use weft_client::Home;

/// How long the shared connection outlives its last command.
pub const CONTROL_PERSIST_SECS: u32 = 60;
/// Seconds between keepalives (three missed: the link is dead).
pub const SERVER_ALIVE_SECS: u32 = 15;

/// `ssh` binds `<ControlPath>.<16 random characters>` before renaming it, and the
/// path must fit `sun_path` (108 bytes with its NUL).
const CONTROL_DIR_MAX: usize = 107 - "/cm-".len() - 40 - ".0123456789abcdef".len();

/// The `ssh` invocation Weft uses.
#[derive(Debug, Clone)]
pub struct Ssh {
    program: PathBuf,
    config: Option<PathBuf>,
    control_dir: Option<PathBuf>,
    batch: bool,
}

impl Ssh {
    /// The system's `ssh` (`WEFT_SSH` may name another), the config of
    /// `WEFT_SSH_CONFIG` if set, and a control folder for `home`.
    pub fn from_env(home: &Home) -> Ssh {
        let program = std::env::var_os("WEFT_SSH")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from)
            .unwrap_or_else(|| PathBuf::from("ssh"));
        let config = std::env::var_os("WEFT_SSH_CONFIG")
            .filter(|p| !p.is_empty())
            .map(PathBuf::from);
        Ssh {
            program,
            config,
            control_dir: control_dir(home),
            batch: true,
        }
    }

    /// The same, but ssh may ask the user (see the module's comment).
    pub fn prompting(self) -> Ssh {
        Ssh {
            batch: false,
            ..self
        }
    }

    /// `from_env`, but with the ssh config file `config` (none: the user's own) whatever
    /// the environment says.
    pub fn with_config(home: &Home, config: Option<PathBuf>) -> Ssh {
        Ssh {
            config,
            ..Ssh::from_env(home)
        }
    }

    /// The folder of the shared connections' sockets (none: no sharing).
    pub fn control_dir(&self) -> Option<&Path> {
        self.control_dir.as_deref()
    }

    /// `ssh` to `destination` running `remote` (plain words; see the crate's comment).
    pub fn command(&self, destination: &str, remote: &[&str]) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(self.options());
        cmd.arg("--").arg(destination).args(remote);
        cmd
    }

    /// `ssh -O exit`: ends the shared connection to `destination`, if one is open.
    pub fn exit_master(&self, destination: &str) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(self.options());
        cmd.args(["-O", "exit", "--", destination]);
        cmd
    }

    /// `ssh -O OP [-L SPEC]` to the shared connection to `destination` (`check`,
    /// `forward`, `cancel`).
    pub fn control(
        &self,
        destination: &str,
        op: &str,
        forward: Option<&str>,
    ) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(self.options());
        cmd.args(["-O", op]);
        if let Some(spec) = forward {
            cmd.args(["-L", spec]);
        }
        cmd.arg("--").arg(destination);
        cmd
    }

    /// Opens the shared connection to `destination` to stay until `ssh -O exit` (a
    /// port forward lives in it: crate::forward). ssh takes an option's first value,
    /// so `ControlPersist=yes` goes before the others.
    pub fn persistent_master(&self, destination: &str) -> tokio::process::Command {
        let mut cmd = tokio::process::Command::new(&self.program);
        cmd.args(["-o", "ControlPersist=yes"]);
        cmd.args(self.options());
        cmd.arg("--").arg(destination).arg("true");
        cmd
    }

    fn options(&self) -> Vec<String> {
        let mut args = Vec::new();
        if let Some(config) = &self.config {
            args.push("-F".into());
            args.push(config.display().to_string());
        }
        args.push("-T".into());
        let mut o = |s: String| {
            args.push("-o".into());
            args.push(s);
        };
        if self.batch {
            o("BatchMode=yes".into());
        }
        o("RequestTTY=no".into());
        o("RemoteCommand=none".into());
        o("ConnectTimeout=10".into());
        o(format!("ServerAliveInterval={SERVER_ALIVE_SECS}"));
        o("ServerAliveCountMax=3".into());
        match &self.control_dir {
            Some(dir) => {
                o("ControlMaster=auto".into());
                o(format!("ControlPath={}/cm-%C", dir.display()));
                o(format!("ControlPersist={CONTROL_PERSIST_SECS}"));
            }
            None => {
                o("ControlMaster=no".into());
                o("ControlPath=none".into());
            }
        }
        args
    }
}

/// The first private, short enough folder of `$XDG_RUNTIME_DIR/weft`,
/// `WEFT_HOME/ssh` and `/tmp/weft-ssh-<uid>`; none when none is (then each command
/// makes its own connection, slower but working).
fn control_dir(home: &Home) -> Option<PathBuf> {
    let runtime = std::env::var_os("XDG_RUNTIME_DIR")
        .map(PathBuf::from)
        .filter(|d| d.is_absolute() && d.is_dir())
        .map(|d| d.join("weft"));
    let uid = nix::unistd::getuid().as_raw();
    let candidates = [
        runtime,
        Some(home.dir().join("ssh")),
        Some(PathBuf::from(format!("/tmp/weft-ssh-{uid}"))),
    ];
    candidates
        .into_iter()
        .flatten()
        .filter(|d| d.as_os_str().len() <= CONTROL_DIR_MAX)
        .find(|d| weft_client::paths::make_socket_dir(d).is_ok())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_command_is_a_shared_keepalive_batch_stream_to_the_destination_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let ssh = Ssh::with_config(&Home::at(dir.path()), Some(PathBuf::from("/cfg")));
        let cmd = ssh.command("me@gpu", &["/bin/sh", "-s"]);
        let args: Vec<String> = cmd
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        let joined = args.join(" ");
        for want in [
            "-F /cfg",
            "-T",
            "-o BatchMode=yes",
            "-o RequestTTY=no",
            "-o RemoteCommand=none",
            "-o ControlMaster=auto",
            "-o ControlPersist=60",
            "-o ServerAliveInterval=15",
        ] {
            assert!(joined.contains(want), "{want} missing: {joined}");
        }
        assert!(
            joined.contains("ControlPath=") && joined.contains("/cm-%C"),
            "{joined}"
        );
        // The destination follows `--`, so it is never read as an option; then the
        // remote words, as they are.
        assert!(joined.ends_with("-- me@gpu /bin/sh -s"), "{joined}");
        let asking = ssh.prompting().command("me@gpu", &["true"]);
        let joined: Vec<String> = asking
            .as_std()
            .get_args()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert!(!joined.join(" ").contains("BatchMode"), "{joined:?}");
    }

    #[test]
    fn a_long_home_puts_the_control_socket_where_it_fits() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let long = Home::at(dir.path().join("x".repeat(80)));
        let found = control_dir(&long);
        if let Some(found) = &found {
            assert!(found.as_os_str().len() <= CONTROL_DIR_MAX, "{found:?}");
            assert!(!found.starts_with(long.dir()));
        }
        let short = Home::at(dir.path());
        let found = control_dir(&short).unwrap_or_else(|| panic!("no control folder"));
        assert!(found.as_os_str().len() <= CONTROL_DIR_MAX);
    }
}
