//! The built `weft` binary, run as a user would.
mod suite;
