//! The stat sweep: every file of every home is stat'ed (size, mtime, inode; no
//! hashing of unchanged files) and what changed is read, parsed on a second thread
//! while this one writes (parsing is about half the work of a cold index), and files
//! that are gone are marked.

use std::collections::HashSet;
use std::path::PathBuf;
use std::sync::atomic::Ordering;
use std::sync::mpsc;
use std::time::Instant;

use crate::index::{Indexer, SweepStats, SWEEP_TX_BUDGET, TX_BUDGET};
use crate::read::{self, stat, Chunk, Plan};
use crate::LibraryError;

/// What the parsing thread hands the writer.
enum Parsed {
    Start(Box<Plan>),
    Chunk(Box<Chunk>),
}

/// A sweep that read this much compacts the word index after it.
const COMPACT_AFTER: u64 = 64 << 20;

/// Parsed chunks held between the threads at most (each up to `BATCH_TEXT` of text).
const IN_FLIGHT: usize = 4;

impl Indexer {
    /// Every session file of every home, with its home's index.
    fn walk(&self) -> Vec<(usize, PathBuf)> {
        let mut out = Vec::new();
        for (i, home) in self.homes.iter().enumerate() {
            for root in home.session_roots() {
                if !root.is_dir() {
                    continue;
                }
                for entry in walkdir::WalkDir::new(&root)
                    .max_depth(6)
                    .into_iter()
                    .filter_map(Result::ok)
                {
                    if entry.file_type().is_file() && home.owns(entry.path()) {
                        out.push((i, entry.into_path()));
                    }
                }
            }
        }
        out
    }

    /// Stats every file of every home and reads what changed; marks what is gone.
    pub fn sweep(&mut self) -> Result<SweepStats, LibraryError> {
        let started = Instant::now();
        let files = self.walk();
        let rows = self.file_rows()?;
        let mut todo = Vec::new();
        let mut seen = HashSet::new();
        for (home, path) in files {
            let key = path.to_string_lossy().into_owned();
            let Some(st) = stat(&path) else { continue };
            seen.insert(key.clone());
            let row = rows.get(&key);
            let unchanged = row.is_some_and(|r| {
                r.size == st.size
                    && r.mtime_ns == st.mtime_ns
                    && r.inode == st.inode
                    && r.status != "gone"
            });
            if !unchanged {
                todo.push((home, path, st, row.cloned()));
            }
        }
        let mut stats = SweepStats {
            files: seen.len() as u64,
            ..Default::default()
        };
        let p = &self.progress;
        p.files_total.store(todo.len() as u64, Ordering::Relaxed);
        p.files_done.store(0, Ordering::Relaxed);
        p.bytes_total.store(
            todo.iter().map(|t| t.2.size as u64).sum(),
            Ordering::Relaxed,
        );
        p.bytes_done.store(0, Ordering::Relaxed);
        p.running.store(true, Ordering::Relaxed);
        self.budget = SWEEP_TX_BUDGET;
        let homes = self.homes.clone();
        let result = std::thread::scope(|scope| -> Result<(), LibraryError> {
            let (tx, rx) = mpsc::sync_channel::<Parsed>(IN_FLIGHT);
            scope.spawn(move || {
                for (home, path, st, row) in todo {
                    let plan = read::plan(&homes, home, &path, st, row);
                    if tx.send(Parsed::Start(Box::new(plan.clone()))).is_err() {
                        return;
                    }
                    let sent = read::parse(&plan, &mut |c| {
                        tx.send(Parsed::Chunk(Box::new(c)))
                            .map_err(|_| LibraryError::Invalid("the writer stopped".into()))
                    });
                    if sent.is_err() {
                        return;
                    }
                }
            });
            self.write_parsed(&rx, &mut stats)?;
            for (path, row) in &rows {
                if !seen.contains(path) && row.status != "gone" {
                    self.begin()?;
                    self.mark_gone(row.id)?;
                    stats.gone += 1;
                }
            }
            self.load_names()?;
            self.commit()?;
            Ok(())
            // Returning drops `rx`: a parser still sending stops at its next chunk.
        });
        if result.is_err() {
            self.rollback();
        }
        let result = result.and_then(|()| {
            if stats.bytes >= COMPACT_AFTER {
                self.compact_words()?;
            }
            Ok(())
        });
        self.budget = TX_BUDGET;
        self.progress.running.store(false, Ordering::Relaxed);
        self.progress.sweeps.fetch_add(1, Ordering::Relaxed);
        result?;
        tracing::debug!(
            ?stats,
            ms = started.elapsed().as_millis() as u64,
            "library sweep"
        );
        Ok(stats)
    }

    /// Writes what the parser sends. A file whose row changed since it was planned
    /// (another indexer read it meanwhile) is read again here, from its row as it is.
    fn write_parsed(
        &mut self,
        rx: &mpsc::Receiver<Parsed>,
        stats: &mut SweepStats,
    ) -> Result<(), LibraryError> {
        let mut current: Option<(Box<Plan>, Option<i64>, bool)> = None;
        while let Ok(msg) = rx.recv() {
            match msg {
                Parsed::Start(plan) => {
                    self.begin()?;
                    let row = self.file_row(&plan.path.to_string_lossy())?;
                    let stale = row != plan.basis;
                    current = Some((plan, None, stale));
                }
                Parsed::Chunk(chunk) => {
                    let chunk = *chunk;
                    let Some((plan, file_id, stale)) = current.as_mut() else {
                        continue;
                    };
                    let end = !matches!(chunk, Chunk::Part { .. });
                    if *stale {
                        if end {
                            let read = self.index_file(plan.home, &plan.path, Some(plan.st))?;
                            stats.read += 1;
                            stats.bytes += read;
                        }
                    } else {
                        let unreadable = matches!(chunk, Chunk::Unreadable(_));
                        self.apply(plan, file_id, chunk)?;
                        if end {
                            stats.read += 1;
                            if !unreadable {
                                stats.bytes += (plan.st.size as u64).saturating_sub(plan.from);
                            }
                        }
                    }
                    if end {
                        current = None;
                        self.progress.files_done.fetch_add(1, Ordering::Relaxed);
                        self.maybe_commit()?;
                    }
                }
            }
        }
        Ok(())
    }
}
