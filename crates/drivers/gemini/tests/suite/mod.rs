mod conformance;
mod real;
mod replay;
pub mod support;
