//! The agent-process plumbing every driver shares: finding an agent's executable
//! ([`program`]), starting it as a process-group leader with exactly the turn's
//! environment, dying with the kernel and recorded in the process ledger ([`child`]),
//! reading its stdout as capped lines and following the files it appends to
//! ([`lines`]), in bursts on a thread of its own ([`paced`]), and telling whether a
//! live process was started with a turn's environment ([`env`]).
//!
//! It lives on the drivers' side of the dependency rule: the kernel defines the
//! `AgentDriver` contract and knows nothing of processes; drivers that run a program
//! use this. Nothing here reads the kernel's own environment on a turn's behalf:
//! callers pass the turn's (`AgentTurnInput::var`, `spawn_env`).
//!
//! Hazards: spawn from an async runtime's worker threads, never `spawn_blocking`
//! (the parent-death signal follows the spawning thread, see
//! `weft_proctree::parent_death`); a [`GroupChild`] that is dropped kills its whole
//! group, so keep it for as long as the agent should live.

pub mod child;
pub mod env;
pub mod install;
pub mod lines;
pub mod login;
pub mod paced;
pub mod pins;
#[cfg(feature = "test-support")]
pub mod planted;
pub mod program;
pub mod time;

pub use child::{probe_output, GroupChild, STDERR_TAIL};
pub use env::EnvFingerprint;
pub use lines::{preview, read_lines, read_lines_blocking, FileTail, RawLine};
pub use paced::{Paced, PacedStdout, PACE};
pub use program::{
    explicit_program, find_agent, find_program, installed_agents_dir, local_install,
    local_install_above, npm_package_version, search_path, LOCAL_BIN_DIR,
};
