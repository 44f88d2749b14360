mod common;
mod open;
mod recovery;
mod search;
mod sessions;
mod turns;
mod writes;
