mod cli;
mod conformance;
mod e2e;
mod failures;
mod lifecycle;
mod replay;
mod support;
mod tui;
