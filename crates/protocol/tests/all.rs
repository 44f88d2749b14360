//! One integration-test binary for the protocol crate (link time on small machines).
mod suite;
