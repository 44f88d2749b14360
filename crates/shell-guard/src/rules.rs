//! Permission rules (next step).
