mod bad_input;
mod eviction;
mod idle;
mod lifecycle;
mod persistence;
mod ports;
mod support;
mod switch;
