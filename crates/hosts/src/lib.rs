//! Other machines, reached through the system's `ssh`.
//!
//! A host is a name and an `ssh` destination (`user@host`, or a `Host` alias of the
//! user's `~/.ssh/config` with its ProxyJump, IdentityFile, agent and known_hosts):
//! Weft runs the system's OpenSSH client and never re-implements it, so whatever
//! reaches the machine from a terminal reaches it from Weft. `local` is always there
//! and is this machine.
//!
//! Each host runs its own daemon for its own user, exactly as this machine does. A
//! client reaches it by running `ssh -T HOST <abs path>/weft proxy` and speaking the
//! daemon's framed protocol over that stream ([`link`]); `weft proxy` starts the
//! host's daemon when none runs, detached, so losing the connection never stops a
//! turn. Every invocation shares one SSH connection per host (OpenSSH's ControlMaster,
//! [`ssh`]).
//!
//! First contact ([`contact`]) assumes nothing of the host's login shell: `ssh` joins
//! its arguments into one string that the login shell parses (csh and fish parse POSIX
//! quoting differently, which broke other tools), so every command line Weft sends is
//! plain words, and every script goes on stdin to `/bin/sh -s`. It finds or copies a
//! `weft` of this very version (checked by SHA-256) into
//! `~/.local/share/weft/<version>/`, never as root; a host of another OS or
//! architecture gets an error that names it.
//!
//! A host's ports (a worktree's dev server) open here through the same shared
//! connection ([`forward`]: `ssh -O forward -L …`).

pub mod connect;
pub mod contact;
pub mod direct;
pub mod forward;
pub mod link;
pub mod list;
pub mod ssh;
pub mod status;

pub use connect::{connect, remote_hello};
pub use list::{Host, Hosts};
pub use ssh::Ssh;

/// Why a host could not be used.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum HostError {
    /// No host of that name.
    #[error("no host named {0:?} (`weft hosts list`; `weft hosts add NAME DESTINATION` adds one)")]
    Unknown(String),
    /// A name or destination that cannot be used.
    #[error("{0}")]
    Invalid(String),
    /// `ssh` could not reach the host, or the command there failed.
    #[error("cannot reach host {host}: {why}")]
    Unreachable {
        /// The host.
        host: String,
        /// What ssh (or the host) said.
        why: String,
    },
    /// The host runs an OS or architecture this `weft` was not built for.
    #[error("{0}")]
    Platform(String),
    /// Installing or checking `weft` on the host failed.
    #[error("installing weft on host {host} failed: {why}")]
    Install {
        /// The host.
        host: String,
        /// Why.
        why: String,
    },
    /// The hosts list could not be read or written.
    #[error("the hosts list {path}: {why}")]
    List {
        /// Its file.
        path: String,
        /// Why.
        why: String,
    },
    /// Local I/O (spawning ssh, reading this binary).
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// Where `weft` of `version` lives on a host whose `$HOME` is `home`.
pub fn remote_binary(home: &str, version: &str) -> String {
    format!("{home}/.local/share/weft/{version}/weft")
}

/// A path sent as one word of a remote command line: only characters that every
/// login shell (sh, bash, zsh, fish, csh) reads alike and leaves alone.
pub fn plain_word(s: &str) -> bool {
    !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+@,:".contains(&b))
}
