mod cli;
mod e2e;
mod failures;
mod lifecycle;
mod loom;
mod replay;
mod support;
