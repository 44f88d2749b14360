mod e2e;
mod support;
