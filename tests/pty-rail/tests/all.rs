//! The real codex and gemini TUIs on the PTY rail: one integration binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod suite;
