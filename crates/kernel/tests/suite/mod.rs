mod bad_input;
mod lifecycle;
mod persistence;
mod ports;
mod support;
