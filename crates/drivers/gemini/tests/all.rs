//! The Gemini driver's tests: one integration binary (link time on small machines).
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod suite;
