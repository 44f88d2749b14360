mod conformance;
mod e2e;
mod failures;
mod replay;
mod support;
