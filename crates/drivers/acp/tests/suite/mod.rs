mod conformance;
mod fake;
mod measure;
mod real;
mod replay;
pub mod support;
