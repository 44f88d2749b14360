//! `PtyBridge`: one program (an agent's own terminal UI) in a real PTY.
//!
//! The child runs in its own session and process group (portable-pty calls `setsid`),
//! so killing the group leaves nothing behind. Output is read on a dedicated blocking
//! thread (portable-pty's reader is blocking) and goes out at once to every attached
//! viewer as numbered chunks; a second thread keeps a [`Screen`] (alacritty's terminal
//! model with bounded scrollback) up to date behind it, which is what a pane
//! re-attaching restores (the current screen, not stale or duplicated bytes). The
//! output the screen has not reached yet is kept, and [`PtyBridge::attach`] first
//! brings the screen up to everything read, then returns it as one redraw with the
//! offset it is current at; a viewer applies only chunks past that offset.
//!
//! Hazards (from portable-pty's docs): the writer is taken once; dropping it sends EOF
//! to the child. The reader hits EOF only once every copy of the slave is closed, which
//! portable-pty arranges by closing ours after spawn.

mod bridge;
mod screen;

pub use bridge::{
    check_size, After, Attach, Chunk, ExitInfo, PtyBridge, PtyError, PtySize, PtySpec,
};
pub use screen::{Screen, MAX_COLS, MAX_ROWS, SCROLLBACK_CELLS};
