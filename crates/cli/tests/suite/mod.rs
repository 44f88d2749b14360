mod commands;
mod serve;
mod tui;
