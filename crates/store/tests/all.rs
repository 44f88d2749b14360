//! The store's integration tests, in one binary (see `suite/`).
// A failed unwrap in a test is a failed test, with its message.
#![allow(clippy::unwrap_used, clippy::expect_used)]

mod suite;
