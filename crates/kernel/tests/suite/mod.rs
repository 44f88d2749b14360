mod bad_input;
mod idle;
mod lifecycle;
mod persistence;
mod ports;
mod support;
