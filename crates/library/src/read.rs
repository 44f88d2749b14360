//! Reading one file into batches, apart from writing them: what to read is decided from
//! the file's row ([`plan`]), the reading itself ([`parse`]) touches no database, so a
//! sweep parses the next file on one thread while the indexer writes the last on its
//! own.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use std::ops::ControlFlow;

pub(crate) use weft_agent_spec::sessions::Chunk;

use crate::homes::{Agent, Home};
use crate::model::{seal, Batch, Meta};
use crate::LibraryError;

const HEAD_BYTES: usize = 1024;

/// A file's row.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FileRow {
    pub id: i64,
    pub size: i64,
    pub mtime_ns: i64,
    pub inode: i64,
    pub head: i64,
    pub indexed_off: i64,
    pub meta: Meta,
    pub status: String,
}

#[derive(Debug, Clone, Copy)]
pub(crate) struct Stat {
    pub size: i64,
    pub mtime_ns: i64,
    pub inode: i64,
}

pub(crate) fn stat(path: &Path) -> Option<Stat> {
    let m = std::fs::metadata(path).ok()?;
    m.is_file().then(|| Stat {
        size: m.len() as i64,
        mtime_ns: m.mtime() * 1_000_000_000 + m.mtime_nsec(),
        inode: m.ino() as i64,
    })
}

fn head_hash(path: &Path) -> i64 {
    let mut buf = [0u8; HEAD_BYTES];
    let n = std::fs::File::open(path)
        .and_then(|mut f| f.read(&mut buf))
        .unwrap_or(0);
    // FNV-1a: stable across builds (std's hasher is not).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in &buf[..n] {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h as i64
}

/// What reading a file will do, decided from its row.
#[derive(Debug, Clone)]
pub(crate) struct Plan {
    pub home: usize,
    pub agent: Agent,
    pub path: PathBuf,
    pub st: Stat,
    pub head: i64,
    /// The row the plan was made from (the writer checks it is still the row).
    pub basis: Option<FileRow>,
    /// Read on from `from` with the row's meta; else read from the start, replacing
    /// what the file contributed.
    pub append: bool,
    pub from: u64,
    pub meta: Meta,
}

/// Decides how to read `path` given its row.
pub(crate) fn plan(
    homes: &[Home],
    home: usize,
    path: &Path,
    st: Stat,
    row: Option<FileRow>,
) -> Plan {
    let head = head_hash(path);
    let agent = homes[home].agent.clone();
    let append = !agent.sessions().rewrites()
        && row.as_ref().is_some_and(|r| {
            r.inode == st.inode && r.head == head && st.size >= r.indexed_off && r.status != "gone"
        });
    let (meta, from) = match (&row, append) {
        (Some(r), true) => (r.meta.clone(), r.indexed_off as u64),
        _ => (
            homes[home].agent.sessions().seed(&homes[home].root, path),
            0,
        ),
    };
    Plan {
        home,
        agent,
        path: path.to_path_buf(),
        st,
        head,
        basis: row,
        append,
        from,
        meta,
    }
}

/// Reads the file as planned, handing each chunk, sealed, to `emit` (which may stop
/// the read by failing).
pub(crate) fn parse(
    plan: &Plan,
    emit: &mut dyn FnMut(Chunk) -> Result<(), LibraryError>,
) -> Result<(), LibraryError> {
    let mut failed = None;
    let whole = plan.agent.sessions().rewrites();
    plan.agent.sessions().index(
        &plan.path,
        plan.from,
        plan.meta.clone(),
        &mut |mut chunk| {
            match &mut chunk {
                Chunk::Part { batch, .. } => seal(batch),
                Chunk::End {
                    batch, consumed, ..
                } => {
                    seal(batch);
                    // A file read whole counts as read up to the size it was planned at.
                    if whole {
                        *consumed = plan.st.size as u64;
                    }
                }
                Chunk::Unreadable(_) => {}
            }
            match emit(chunk) {
                Ok(()) => ControlFlow::Continue(()),
                Err(e) => {
                    failed = Some(e);
                    ControlFlow::Break(())
                }
            }
        },
    );
    failed.map_or(Ok(()), Err)
}

/// What reading one session file gave, whole: for checks from outside the crate (the
/// fuzz targets compare one read of a file with a read in two steps, as the indexer
/// does when a file grows).
#[derive(Debug, Default)]
pub struct FileRead {
    /// The session's summary after the read.
    pub meta: Meta,
    /// Every excerpt, usage event and turn start read (a huge file's parts joined).
    pub batch: Batch,
    /// The line end read up to: where an appended file is read on from.
    pub consumed: u64,
    /// Lines that were not records.
    pub bad: u32,
    /// Why the file could not be read at all.
    pub unreadable: Option<String>,
}

/// Reads `path` as `agent`'s session file from byte `from` (a line end a previous
/// read stopped at, or 0) with the summary carried from there, as the indexer reads a
/// new file (`from` 0, a fresh summary) or an appended one.
pub fn read_file(
    agent: &Agent,
    path: &Path,
    from: u64,
    meta: Meta,
) -> Result<FileRead, LibraryError> {
    let st = stat(path).unwrap_or(Stat {
        size: 0,
        mtime_ns: 0,
        inode: 0,
    });
    let plan = Plan {
        home: 0,
        agent: agent.clone(),
        path: path.to_path_buf(),
        st,
        head: 0,
        basis: None,
        append: from > 0,
        from,
        meta,
    };
    let mut out = FileRead::default();
    parse(&plan, &mut |chunk| {
        match chunk {
            Chunk::Part { batch, meta, .. } => {
                out.meta = meta;
                join(&mut out.batch, batch);
            }
            Chunk::End {
                batch,
                meta,
                consumed,
                bad,
                ..
            } => {
                out.meta = meta;
                join(&mut out.batch, batch);
                out.consumed = consumed;
                out.bad = bad;
            }
            Chunk::Unreadable(why) => out.unreadable = Some(why),
        }
        Ok(())
    })?;
    Ok(out)
}

fn join(into: &mut Batch, more: Batch) {
    into.docs.extend(more.docs);
    into.usage.extend(more.usage);
    into.turns.extend(more.turns);
    into.text_bytes += more.text_bytes;
    into.words.extend(more.words);
}
