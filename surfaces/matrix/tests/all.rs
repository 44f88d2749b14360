// matrix-sdk's futures nest deeply (the SDK sets the same limit).
#![recursion_limit = "256"]

//! The Matrix surface end to end: a real Synapse on loopback, a real `weft` daemon per
//! test, `weft-matrix` logged in and running, and a second Matrix client as the phone.
//! One test binary (link time on a 2-core machine); run under
//! scripts/lib/with-keyring.sh so the bot's secrets have a Secret Service to live in.

mod suite;
