mod bench;
mod claude;
mod commands;
mod flows;
mod harness;
mod restart;
mod supervised;
mod synapse;
