//! How far the indexer is, for a progress bar.

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};

use weft_protocol::LibraryProgress;

/// Counters the indexer bumps and any thread reads.
#[derive(Debug, Default)]
pub struct Progress {
    /// A sweep is running.
    pub running: AtomicBool,
    /// Files the running (or last) sweep reads.
    pub files_total: AtomicU64,
    /// Of those, read.
    pub files_done: AtomicU64,
    /// Bytes the running (or last) sweep reads.
    pub bytes_total: AtomicU64,
    /// Of those, read.
    pub bytes_done: AtomicU64,
    /// Sweeps finished since start.
    pub sweeps: AtomicU64,
}

impl Progress {
    /// A copy for the wire.
    pub fn snapshot(&self) -> LibraryProgress {
        LibraryProgress {
            running: self.running.load(Ordering::Relaxed),
            files_total: self.files_total.load(Ordering::Relaxed),
            files_done: self.files_done.load(Ordering::Relaxed),
            bytes_total: self.bytes_total.load(Ordering::Relaxed),
            bytes_done: self.bytes_done.load(Ordering::Relaxed),
            sweeps: self.sweeps.load(Ordering::Relaxed),
        }
    }
}
