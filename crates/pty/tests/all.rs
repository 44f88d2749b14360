//! The PTY bridge with real programs in real PTYs.
mod suite;
