//! Weft's kernel: the runtime every surface stands on.
//!
//! Data flows one way up (driver → [`runner`] → [`Loom`] → surface) and verbs flow one
//! way down through [`Loom`]'s verbs. A driver ([`AgentDriver`]) turns one agent into
//! `DriverEvent`s; the session runner folds them into the session's snapshot with the
//! protocol's `Accumulator`, numbers the resulting patches (gap-free per session),
//! persists every event through the `SessionStore` port, and queues prompts so a
//! session runs one turn at a time, in order. The ports ([`ports`]) each have a working
//! default, so `Loom::builder(dir).driver(..).open()` is a usable kernel.
//!
//! Hazards: the runner's state mutex is never held across an `.await`; a driver that
//! ignores stop is abandoned after a grace period (its future dropped, which must kill
//! its process); events from an abandoned turn are dropped, not folded into the next.

mod account_verbs;
pub mod agent_setup;
mod agent_switch;
pub mod changes;
pub mod checkpoints;
pub mod driver;
mod env;
pub mod error;
pub mod feed;
mod hub;
pub mod index;
pub mod io;
pub mod live;
pub mod mcp;
pub mod plugin;
pub mod ports;
mod restore;
mod roster;
mod runner;
pub mod skills;
pub mod state;
mod terminals;
mod time;
mod turn;
mod verbs;
mod warm;

pub use driver::{
    isolated_env, kept_on_account, AgentDriver, AgentTurnInput, DriverContext, DriverResult,
    EnvNames, HandoverSource, Steer, TuiSpec, TurnSink,
};
pub use error::{FilesError, IndexError, KernelError};
pub use hub::{Loom, LoomBuilder};
pub use index::SessionIndex;
pub use io::{Caller, Subscription, TerminalOpened};
pub use plugin::{Plugin, Plugins, SpawnContribution, SpawnCx};
pub use roster::DriverSource;
pub use time::now_ms;
pub use turn::{run_turn, TurnCallbacks};
pub use verbs::MAX_QUEUED;
pub use weft_pty as pty;
