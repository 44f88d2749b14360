//! Real OpenSSH servers for the hosts tests ([`weft_ssh_rig`]: throwaway users, an
//! sshd each on a loopback port, an ssh config of their own given as
//! `WEFT_SSH_CONFIG`), with this test's own home, whose shared ssh connections the rig
//! ends when dropped.

use std::ops::{Deref, DerefMut};
use std::process::{Command, Output};

pub use weft_ssh_rig::SshRig;

use super::support::{bounded, Env};

/// The machinery of one test.
pub struct Rig {
    // Dropped first: the servers and users go before the test's home and daemon.
    ssh: SshRig,
    pub env: Env,
}

impl Deref for Rig {
    type Target = SshRig;
    fn deref(&self) -> &SshRig {
        &self.ssh
    }
}

impl DerefMut for Rig {
    fn deref_mut(&mut self) -> &mut SshRig {
        &mut self.ssh
    }
}

impl Rig {
    /// A rig, or none (with the reason printed) where the tests cannot run.
    pub fn new() -> Option<Rig> {
        let mut ssh = SshRig::new()?;
        let env = Env::new();
        // The shared connections Weft opens (their sockets are in the test's home).
        ssh.control_dir(&env.home.path().join("ssh"));
        Some(Rig { ssh, env })
    }

    /// The processes of `user` that are alive.
    pub fn live_processes(user: &str) -> Vec<String> {
        SshRig::live_processes(user)
    }

    /// `weft ARGS` with the rig's ssh config and this test's home (its shared ssh
    /// connections in that home, not in the runtime folder of whoever runs the tests).
    pub fn cmd(&self, args: &[&str]) -> Command {
        let mut cmd = self.env.cmd(args);
        cmd.env("WEFT_SSH_CONFIG", self.config())
            .env_remove("XDG_RUNTIME_DIR")
            .env_remove("WEFT_HOST");
        cmd
    }

    pub fn weft(&self, args: &[&str]) -> Output {
        let out = bounded(self.cmd(args), args);
        self.env.keep_output(&out);
        out
    }

    /// `weft ARGS`, which must succeed: its stdout.
    pub fn ok(&self, args: &[&str]) -> String {
        let out = self.weft(args);
        assert!(
            out.status.success(),
            "weft {args:?}: {}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        String::from_utf8_lossy(&out.stdout).into_owned()
    }
}
