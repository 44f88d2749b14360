//! The agent contract below both its users: the drivers declare what they are here
//! ([`spec`]), and the session library reaches each agent's own session files only
//! through the trait in [`sessions`], with implementations the daemon hands it. A leaf:
//! it depends on the protocol and std only, so neither side imports the other.

pub mod prices;
pub mod sessions;
pub mod spec;
