mod conformance;
mod support;
