//! The shell guard's tests, one binary (link time on a 2-core machine).

mod suite;
