//! One integration-test binary for the crate (link time on a 2-core machine).
#![allow(clippy::unwrap_used, clippy::expect_used)]
mod suite;
