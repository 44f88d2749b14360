mod conformance;
mod fake;
mod real;
mod replay;
pub mod support;
