//! Weft's kernel.
pub mod driver;
pub mod error;
pub mod io;
pub mod ports;
