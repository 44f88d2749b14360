//! One integration-test binary for the kernel.
mod suite;
