mod bench;
mod commands;
mod flows;
mod harness;
mod restart;
mod synapse;
