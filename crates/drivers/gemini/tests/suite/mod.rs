mod attachments;
mod conformance;
mod environment;
mod headless;
mod measure;
mod real;
mod replay;
pub mod support;
