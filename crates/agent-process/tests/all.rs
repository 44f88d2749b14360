//! weft-agent-process with real processes: one integration-test binary.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
