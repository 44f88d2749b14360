mod conformance;
mod e2e;
mod environment;
mod failures;
mod policy;
mod replay;
mod support;
