//! `PtyBridge`: one program (an agent's own terminal UI) in a real PTY.
//!
//! The child runs in its own session and process group (portable-pty calls `setsid`),
//! so killing the group leaves nothing behind. Output is read on a dedicated blocking
//! thread (portable-pty's reader is blocking) and goes two ways under one lock: into a
//! `vt100` screen, the bounded history a pane re-attaching restores (the current screen,
//! not stale or duplicated bytes), and out to every attached viewer as numbered chunks.
//! Because both happen under the same lock, [`PtyBridge::attach`] returns a screen and
//! the offset it is current at, and a viewer applies only chunks past that offset.
//!
//! Hazards (from portable-pty's docs): the writer is taken once; dropping it sends EOF
//! to the child. The reader hits EOF only once every copy of the slave is closed, which
//! portable-pty arranges by closing ours after spawn.

mod bridge;

pub use bridge::{Attach, Chunk, ExitInfo, PtyBridge, PtyError, PtySize, PtySpec};
