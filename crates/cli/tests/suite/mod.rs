mod commands;
mod daemon;
mod serve;
mod support;
mod tui;
