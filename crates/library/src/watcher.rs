//! The indexer's thread: a first sweep, then the paths a `notify` watcher reports
//! (a burst taken as one pass) and a sweep every [`SWEEP_EVERY`] however busy the
//! watcher is. Folders that appear later (a new project, an account added), and a
//! watched folder removed and made again (its watch went with it), are watched from the
//! next pass that sees them.

use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::{self, RecvTimeoutError};
use std::time::{Duration, Instant};

use notify::{RecursiveMode, Watcher};

use crate::index::Indexer;

/// How often the whole store is stat-swept besides the watcher.
pub const SWEEP_EVERY: Duration = Duration::from_secs(30);

/// Batches of changed paths waiting for the indexer. Past them the watcher's reports
/// are dropped rather than queued without bound (a `git checkout` in a watched home, a
/// tool rewriting thousands of files): the next sweep finds whatever they named.
pub const QUEUED: usize = 1024;

/// Hands the indexer a batch of paths the watcher reported; false when it was dropped
/// (the queue is full, or the indexer gone).
pub(crate) fn report(events: &mpsc::SyncSender<Msg>, paths: Vec<PathBuf>) -> bool {
    events.try_send(Msg::Paths(paths)).is_ok()
}

/// What the thread is told.
pub(crate) enum Msg {
    Paths(Vec<PathBuf>),
    Stop,
}

/// The folder's identity, to tell a watched folder from one made again at its path.
fn inode(dir: &Path) -> Option<u64> {
    std::fs::metadata(dir)
        .ok()
        .filter(|m| m.is_dir())
        .map(|m| m.ino())
}

/// Runs the indexer until `Stop` (or every sender is gone). `events` is the sender the
/// watcher's callback uses; a sweep runs every `sweep_every`, also while the watcher
/// reports changes without a pause (before, a home written to every few seconds kept
/// the sweep from ever running, and what the watcher missed was never read).
pub(crate) fn run(
    mut indexer: Indexer,
    events: mpsc::SyncSender<Msg>,
    rx: mpsc::Receiver<Msg>,
    sweep_every: Duration,
) {
    let watcher = notify::recommended_watcher(move |res: notify::Result<notify::Event>| {
        if let Ok(ev) = res {
            if !ev.kind.is_access() {
                report(&events, ev.paths);
            }
        }
    });
    let mut watcher = match watcher {
        Ok(w) => Some(w),
        Err(e) => {
            tracing::warn!("session library: no file watcher ({e}); sweeping only");
            None
        }
    };
    let mut watched: Vec<(PathBuf, u64)> = Vec::new();
    let mut watch_new = |watched: &mut Vec<(PathBuf, u64)>, indexer: &Indexer| {
        let Some(w) = watcher.as_mut() else { return };
        // A folder removed (and perhaps made again) took its watch with it.
        watched.retain(|(dir, ino)| {
            let same = inode(dir) == Some(*ino);
            if !same {
                let _ = w.unwatch(dir);
            }
            same
        });
        for h in indexer.homes() {
            for (dir, mode) in h
                .session_roots()
                .into_iter()
                .map(|d| (d, RecursiveMode::Recursive))
                .chain([(h.root.clone(), RecursiveMode::NonRecursive)])
            {
                if watched.iter().any(|(d, _)| d == &dir) {
                    continue;
                }
                if let Some(ino) = inode(&dir) {
                    if w.watch(&dir, mode).is_ok() {
                        watched.push((dir, ino));
                    }
                }
            }
        }
    };
    indexer.refresh_homes();
    watch_new(&mut watched, &indexer);
    if let Err(e) = indexer.sweep() {
        tracing::warn!("session library: first index failed: {e}");
    }
    let mut last_sweep = Instant::now();
    loop {
        let due = sweep_every.saturating_sub(last_sweep.elapsed());
        match rx.recv_timeout(due) {
            Ok(Msg::Paths(mut paths)) => {
                // Take everything queued: one pass for a burst of writes.
                let mut stop = false;
                while let Ok(m) = rx.try_recv() {
                    match m {
                        Msg::Paths(p) => paths.extend(p),
                        Msg::Stop => stop = true,
                    }
                }
                paths.sort();
                paths.dedup();
                if paths.iter().any(|p| p.is_dir()) {
                    watch_new(&mut watched, &indexer);
                }
                if let Err(e) = indexer.index_paths(&paths) {
                    tracing::warn!("session library: indexing changes failed: {e}");
                }
                if stop {
                    break;
                }
                if last_sweep.elapsed() >= sweep_every {
                    sweep(&mut indexer, &mut watched, &mut watch_new);
                    last_sweep = Instant::now();
                }
            }
            Ok(Msg::Stop) | Err(RecvTimeoutError::Disconnected) => break,
            Err(RecvTimeoutError::Timeout) => {
                sweep(&mut indexer, &mut watched, &mut watch_new);
                last_sweep = Instant::now();
            }
        }
    }
}

/// A whole pass: the homes again, their folders watched, every file stat-checked.
fn sweep<W: FnMut(&mut Vec<(PathBuf, u64)>, &Indexer)>(
    indexer: &mut Indexer,
    watched: &mut Vec<(PathBuf, u64)>,
    watch_new: &mut W,
) {
    indexer.refresh_homes();
    watch_new(watched, indexer);
    if let Err(e) = indexer.sweep() {
        tracing::warn!("session library: sweep failed: {e}");
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reports_past_the_queue_are_dropped_not_held() {
        // An indexer busy with a long sweep reads nothing meanwhile.
        let (events, _busy) = mpsc::sync_channel(QUEUED);
        let kept = (0..QUEUED * 3)
            .filter(|i| report(&events, vec![PathBuf::from(format!("/h/{i}.jsonl"))]))
            .count();
        assert_eq!(kept, QUEUED);
    }
}
