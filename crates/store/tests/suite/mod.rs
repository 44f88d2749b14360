mod common;
mod inbox;
mod open;
mod recovery;
mod search;
mod sessions;
mod turns;
mod writes;
