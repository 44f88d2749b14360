mod conformance;
mod environment;
mod fake;
mod measure;
mod real;
mod replay;
pub mod support;
