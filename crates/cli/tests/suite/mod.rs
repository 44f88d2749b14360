mod accounts;
mod commands;
mod crash;
mod daemon;
mod serve;
mod support;
mod tui;
