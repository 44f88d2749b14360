// Tests: a failed expectation is a failed test.
#![allow(clippy::expect_used, clippy::unwrap_used)]

mod agent;
mod attachments;
mod cli;
mod commands;
mod conformance;
mod extras;
mod guard;
mod hardening;
mod mcp;
mod packs;
mod protocol;
mod schemas;
mod shell;
mod support;
mod tools;
mod trust;
mod verify;
