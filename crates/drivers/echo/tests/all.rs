//! The echo agent through the kernel, as the app and the CLI use it.
mod suite;
