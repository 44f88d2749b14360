mod commands;
mod serve;
