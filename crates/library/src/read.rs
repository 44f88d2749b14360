//! Reading one file into batches, apart from writing them: what to read is decided from
//! the file's row ([`plan`]), the reading itself ([`parse`]) touches no database, so a
//! sweep parses the next file on one thread while the indexer writes the last on its
//! own.

use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

use crate::homes::{Agent, Home};
use crate::lines::{Line, LineReader};
use crate::model::{Batch, Meta};
use crate::{claude, codex, gemini, LibraryError};

/// Flush a huge file's excerpts part way once this much text is held.
pub(crate) const BATCH_TEXT: usize = 8 << 20;
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

/// What a read produced, in order: parts of a huge file, then its end.
pub(crate) enum Chunk {
    /// Excerpts so far; `done` is the line end read up to.
    Part { batch: Batch, meta: Meta, done: u64 },
    /// The rest; `error` is the first problem, `bad` how many lines were not records.
    End {
        batch: Batch,
        meta: Meta,
        consumed: u64,
        bad: u32,
        error: Option<String>,
    },
    /// The file could not be opened or parsed at all (nothing is written).
    Unreadable(String),
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
    let agent = homes[home].agent;
    let append = agent != Agent::Gemini
        && row.as_ref().is_some_and(|r| {
            r.inode == st.inode && r.head == head && st.size >= r.indexed_off && r.status != "gone"
        });
    let (meta, from) = match (&row, append) {
        (Some(r), true) => (r.meta.clone(), r.indexed_off as u64),
        _ => (seed_meta(&homes[home], path), 0),
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

/// Reads the file as planned, handing each chunk to `emit` (which may stop the read by
/// failing).
pub(crate) fn parse(
    plan: &Plan,
    emit: &mut dyn FnMut(Chunk) -> Result<(), LibraryError>,
) -> Result<(), LibraryError> {
    let path = &plan.path;
    let mut meta = plan.meta.clone();
    let mut batch = Batch::default();
    if plan.agent == Agent::Gemini {
        let mut chat = match gemini::read_chat(path) {
            Ok(c) => c,
            Err(e) => return emit(Chunk::Unreadable(format!("cannot be read: {e}"))),
        };
        chat.meta.workdir = meta.workdir.take().or(chat.meta.workdir);
        if chat.meta.native_id.is_none() {
            chat.meta.native_id = meta.native_id.take();
        }
        chat.meta.parent = meta.parent.take().or(chat.meta.parent);
        if meta.relation.is_some() {
            chat.meta.relation = meta.relation.take();
        }
        gemini::index_chat(&mut chat, &mut batch);
        batch.seal();
        return emit(Chunk::End {
            batch,
            bad: chat.bad_lines,
            error: chat.first_error.take(),
            meta: chat.meta,
            consumed: plan.st.size as u64,
        });
    }
    let read_line = match plan.agent {
        Agent::Claude => claude::read_line,
        _ => codex::read_line,
    };
    let mut reader = match LineReader::open(path, plan.from) {
        Ok(r) => r,
        Err(e) => return emit(Chunk::Unreadable(format!("cannot be read: {e}"))),
    };
    let mut bad = 0u32;
    let mut first_error: Option<String> = None;
    loop {
        let line = match reader.next_line() {
            Ok(Some(l)) => l,
            Ok(None) => break,
            Err(e) => {
                first_error.get_or_insert(format!("read failed part way: {e}"));
                break;
            }
        };
        match line {
            Line::Text { off, bytes } => {
                if bytes.iter().all(u8::is_ascii_whitespace) {
                    continue;
                }
                if let Err(e) = read_line(&mut meta, off, bytes, &mut batch) {
                    bad += 1;
                    first_error.get_or_insert_with(|| {
                        format!("a line at byte {off} is not a record: {e}")
                    });
                }
            }
            Line::TooLong { off, len } => {
                bad += 1;
                first_error
                    .get_or_insert_with(|| format!("a {len}-byte line at byte {off} was skipped"));
            }
        }
        if batch.text_bytes >= BATCH_TEXT {
            let mut part = std::mem::take(&mut batch);
            part.seal();
            emit(Chunk::Part {
                batch: part,
                meta: meta.clone(),
                done: reader.consumed(),
            })?;
        }
    }
    batch.seal();
    emit(Chunk::End {
        batch,
        meta,
        consumed: reader.consumed(),
        bad,
        error: first_error,
    })
}

/// What is known of a file's session before reading it: its id from the file name,
/// a subagent's parent, a Gemini chat's folder.
fn seed_meta(home: &Home, path: &Path) -> Meta {
    let mut meta = Meta::default();
    let stem = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let parent_dir = |n: usize| {
        let mut p = path.parent();
        for _ in 0..n {
            p = p.and_then(Path::parent);
        }
        p.and_then(Path::file_name)
            .map(|s| s.to_string_lossy().into_owned())
    };
    match home.agent {
        Agent::Claude => {
            meta.native_id = Some(stem);
            if parent_dir(0).as_deref() == Some("subagents") {
                meta.parent = parent_dir(1);
                meta.relation = Some("subagent".into());
            }
        }
        Agent::Codex => {}
        Agent::Gemini => {
            // tmp/<project>/chats/[<parent>/]session-….jsonl
            let mut dir = path.parent();
            if dir.and_then(Path::file_name).is_some_and(|n| n != "chats") {
                meta.parent = parent_dir(0);
                meta.relation = Some("subagent".into());
                dir = dir.and_then(Path::parent);
            }
            let project = dir.and_then(Path::parent);
            if let Some(project) = project {
                meta.workdir = std::fs::read_to_string(project.join(".project_root"))
                    .ok()
                    .map(|s| s.trim().to_string())
                    .filter(|s| !s.is_empty())
                    .or_else(|| {
                        let name = project.file_name()?.to_string_lossy().into_owned();
                        gemini_projects(&home.root).remove(&name)
                    });
            }
        }
    }
    meta
}

/// Gemini's project name → folder map (`projects.json`).
fn gemini_projects(root: &Path) -> std::collections::HashMap<String, String> {
    let v: serde_json::Value = std::fs::read_to_string(root.join("projects.json"))
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    v["projects"]
        .as_object()
        .map(|m| {
            m.iter()
                .filter_map(|(dir, name)| Some((name.as_str()?.to_string(), dir.clone())))
                .collect()
        })
        .unwrap_or_default()
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
    agent: Agent,
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
        agent,
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
