//! What a workspace folder may do.
//!
//! A workspace is a folder the user did not necessarily write: a cloned repository can
//! ship a `.weft/` (MCP servers, hooks, allow rules, packs, skills, a `check`) and the
//! agents' own project files (`.claude/settings.json`, `.mcp.json`, …) that would run
//! code or approve commands with the user's authority. This crate is the one place that
//! knows those files:
//! - [`files`] reads one of them without trusting what it is: a FIFO, `/dev/zero` or a
//!   symlink to a huge file is refused with a clear error instead of blocking a worker
//!   or eating memory;
//! - [`trust`] lists what a folder grants, hashes it, and keeps the user's decision
//!   per repository (every worktree of it) or per folder outside git.
//!
//! It depends on nothing of Weft's: the kernel, the drivers, the shell guard and the
//! daemon all ask it.

pub mod files;
pub mod trust;
