mod accounts;
mod commands;
mod crash;
mod daemon;
mod library;
mod serve;
mod support;
mod tui;
