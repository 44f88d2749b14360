//! The native driver's tests: one binary, modules under `suite/`.

mod suite;
