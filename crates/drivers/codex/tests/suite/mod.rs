mod conformance;
mod e2e;
mod environment;
mod failures;
mod replay;
mod support;
