mod conformance;
mod headless;
mod real;
mod replay;
pub mod support;
