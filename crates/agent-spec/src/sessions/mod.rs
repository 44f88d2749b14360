//! [`NativeSessions`]: an agent's own session files, as the session library reads them.
//!
//! Each agent that keeps its own transcripts (Claude Code's `~/.claude/projects`,
//! Codex's `~/.codex/sessions`, Gemini's `~/.gemini/tmp`) implements this trait in its
//! driver crate; the registry lists the implementations and the daemon hands them to
//! the library, which keeps the index, search and usage and calls the trait. So the
//! library never names an agent, and an agent's file format lives beside its driver.
//!
//! The types the readers produce ([`Batch`], [`Meta`], …) and the pieces they share
//! (the line reader [`lines`], the transcript builder [`transcript::Turns`]) are here
//! too, below both.

pub mod batch;
pub mod lines;
pub mod transcript;

use std::fmt;
use std::io::{BufWriter, Write};
use std::ops::ControlFlow;
use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_protocol::UniversalSnapshot;

pub use batch::{excerpt, title_of, Batch, Doc, DocKind, Meta, TurnStart, UsageEvent};
use lines::{Line, LineReader};
use transcript::Turns;

/// Flush a huge file's excerpts part way once this much text is held.
pub const BATCH_TEXT: usize = 8 << 20;

/// What a read produced, in order: parts of a huge file, then its end.
pub enum Chunk {
    /// Excerpts so far; `done` is the line end read up to.
    Part {
        /// What was read.
        batch: Batch,
        /// The summary so far.
        meta: Meta,
        /// The line end read up to.
        done: u64,
    },
    /// The rest; `error` is the first problem, `bad` how many lines were not records.
    End {
        /// What was read.
        batch: Batch,
        /// The summary after the read.
        meta: Meta,
        /// The line end read up to (a file read whole: its size).
        consumed: u64,
        /// Lines that were not records.
        bad: u32,
        /// The first problem, for the log.
        error: Option<String>,
    },
    /// The file could not be opened or parsed at all (nothing is written).
    Unreadable(String),
}

/// How much of the parent a fork written by [`NativeSessions::fork_file`] keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Keep {
    /// All of it.
    All,
    /// The lines before this byte (a turn's start): for files only appended to.
    Until(u64),
    /// Its first `n` turns, counted as the index counts them: for files rewritten
    /// ([`NativeSessions::rewrites`]), which are not cut by bytes.
    Turns(u32),
}

impl Keep {
    /// The byte a copy of lines stops before, for a file only appended to (`None`:
    /// the whole file).
    pub fn until(self) -> Option<u64> {
        match self {
            Keep::Until(end) => Some(end),
            Keep::All | Keep::Turns(_) => None,
        }
    }
}

/// A fork written to disk.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Forked {
    /// The new session's native id.
    pub native_id: String,
    /// Its file.
    pub path: PathBuf,
}

/// Why a fork could not be written.
#[derive(Debug)]
pub enum SessionsError {
    /// A file could not be read or written.
    Io(std::io::Error),
    /// The fork cannot be made (the message says why).
    Invalid(String),
}

impl fmt::Display for SessionsError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SessionsError::Io(e) => write!(f, "{e}"),
            SessionsError::Invalid(why) => f.write_str(why),
        }
    }
}

impl std::error::Error for SessionsError {}

impl From<std::io::Error> for SessionsError {
    fn from(e: std::io::Error) -> Self {
        SessionsError::Io(e)
    }
}

impl From<serde_json::Error> for SessionsError {
    fn from(e: serde_json::Error) -> Self {
        SessionsError::Io(e.into())
    }
}

/// One agent's own session files: where they are, how a file is indexed, how a page
/// of its transcript is opened and how it is forked. `home` is always one of the
/// agent's config folders ([`NativeSessions::home`] or
/// [`NativeSessions::account_home`]).
pub trait NativeSessions: Send + Sync + 'static {
    /// The agent's id (`claude`, …): the first part of its sessions' keys.
    fn agent(&self) -> &'static str;

    /// The home of the environment `var` describes (the agent's config-home variable,
    /// else its folder under `HOME`).
    fn home(&self, var: &dyn Fn(&str) -> Option<String>) -> Option<PathBuf>;

    /// The home of a login account whose folder is `folder` (the agent's config-home
    /// variable points there).
    fn account_home(&self, folder: &Path) -> PathBuf {
        folder.to_path_buf()
    }

    /// The folders under `home` that hold sessions (watched recursively).
    fn session_roots(&self, home: &Path) -> Vec<PathBuf>;

    /// Whether `path` is a session file of `home`.
    fn owns(&self, home: &Path, path: &Path) -> bool;

    /// True when the agent rewrites its files rather than only appending: such a file
    /// is always read whole, and its transcript is paged and forked by turns, not bytes.
    fn rewrites(&self) -> bool {
        false
    }

    /// What is known of a file's session before reading it (its id from the file name,
    /// a subagent's parent, the folder it ran in).
    fn seed(&self, _home: &Path, _path: &Path) -> Meta {
        Meta::default()
    }

    /// How a file only appended to, one JSON record a line, is read a line at a time:
    /// an agent that says implements neither [`NativeSessions::index`] nor
    /// [`NativeSessions::open_page`].
    fn line_readers(&self) -> Option<LineReaders> {
        None
    }

    /// Reads `path` from byte `from` (a line end a previous read stopped at, or 0)
    /// with the summary carried from there, handing each chunk to `emit`, which may
    /// stop the read.
    fn index(
        &self,
        path: &Path,
        from: u64,
        meta: Meta,
        emit: &mut dyn FnMut(Chunk) -> ControlFlow<()>,
    ) {
        match self.line_readers() {
            Some(r) => index_lines(r.index, path, from, meta, emit),
            None => {
                let _ = emit(Chunk::Unreadable(format!(
                    "{} names no reader of its files",
                    self.agent()
                )));
            }
        }
    }

    /// The turns of `session_id`'s file `path` whose records lie in bytes
    /// `[from, until)` (a file [`rewritten`](NativeSessions::rewrites): all its turns).
    fn open_page(
        &self,
        session_id: &str,
        path: &Path,
        from: u64,
        until: Option<u64>,
    ) -> std::io::Result<Vec<UniversalSnapshot>> {
        match self.line_readers() {
            Some(r) => open_lines(self.agent(), session_id, path, from, until, r.transcript),
            None => Ok(Vec::new()),
        }
    }

    /// Copies what `keep` names of `source` (session `old_id`) into a new session
    /// beside it, which the agent's own resume then continues.
    fn fork_file(&self, source: &Path, old_id: &str, keep: Keep) -> Result<Forked, SessionsError>;

    /// True when the agent forks a session itself at its first prompt (given the
    /// point [`NativeSessions::fork_point`] names): Weft then records the fork rather
    /// than writing a file.
    fn forks_itself(&self) -> bool {
        false
    }

    /// True when a fork the agent makes takes its new session id from Weft (so the
    /// fork's key and its native id are the same).
    fn fork_takes_id(&self) -> bool {
        false
    }

    /// The agent's own name for the end of the turn in bytes `[from, until)` of
    /// `source`, to fork after; `None` when the turn has none.
    fn fork_point(
        &self,
        _source: &Path,
        _from: u64,
        _until: Option<u64>,
    ) -> std::io::Result<Option<String>> {
        Ok(None)
    }

    /// When a fork's file starts from its parent's rather than copying it: the
    /// parent's native id and the byte offset of the parent's file its history ends at.
    fn history_base(&self, _path: &Path) -> Option<(String, u64)> {
        None
    }

    /// A file of `home` naming sessions (titles the agent keeps apart from them).
    fn names_file(&self, _home: &Path) -> Option<PathBuf> {
        None
    }

    /// The (native id, title) pairs of a [`NativeSessions::names_file`], later ones
    /// winning.
    fn read_names(&self, _file: &Path) -> Vec<(String, String)> {
        Vec::new()
    }
}

/// The summary of `path`, a session file of `home`, read whole as the library first
/// reads it; `None` when it cannot be read.
pub fn summary(sessions: &dyn NativeSessions, home: &Path, path: &Path) -> Option<Meta> {
    let mut out = None;
    sessions.index(path, 0, sessions.seed(home, path), &mut |chunk| {
        if let Chunk::End { meta, .. } = chunk {
            out = Some(meta);
        }
        ControlFlow::Continue(())
    });
    out
}

/// What one line reader of a JSONL transcript does with a line: adds it to `meta` and
/// `batch`, or says why it is not a record.
pub type ReadLine = fn(&mut Meta, u64, &[u8], &mut Batch) -> Result<(), String>;

/// [`NativeSessions::line_readers`]: one line of a file for the index, and for a
/// transcript page.
#[derive(Clone, Copy)]
pub struct LineReaders {
    /// Adds a line to the summary and the excerpts.
    pub index: ReadLine,
    /// Adds a line to a page's turns.
    pub transcript: fn(&mut Turns, &[u8]),
}

/// [`NativeSessions::index`] for a file only appended to: reads its complete lines
/// from `from` with `read_line`, emitting a part each [`BATCH_TEXT`] of excerpts.
pub fn index_lines(
    read_line: ReadLine,
    path: &Path,
    from: u64,
    mut meta: Meta,
    emit: &mut dyn FnMut(Chunk) -> ControlFlow<()>,
) {
    let mut batch = Batch::default();
    let mut reader = match LineReader::open(path, from) {
        Ok(r) => r,
        Err(e) => {
            let _ = emit(Chunk::Unreadable(format!("cannot be read: {e}")));
            return;
        }
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
            let part = std::mem::take(&mut batch);
            let flow = emit(Chunk::Part {
                batch: part,
                meta: meta.clone(),
                done: reader.consumed(),
            });
            if flow.is_break() {
                return;
            }
        }
    }
    let _ = emit(Chunk::End {
        batch,
        meta,
        consumed: reader.consumed(),
        bad,
        error: first_error,
    });
}

/// Calls `each` with every complete line of `path` starting in bytes `[from, until)`
/// (lines past [`lines::MAX_LINE`] are skipped); `each` stops the read by breaking.
pub fn each_line(
    path: &Path,
    from: u64,
    until: Option<u64>,
    each: &mut dyn FnMut(&[u8]) -> ControlFlow<()>,
) -> std::io::Result<()> {
    let mut reader = LineReader::open(path, from)?;
    if let Some(end) = until {
        reader = reader.until(end);
    }
    while let Some(line) = reader.next_line()? {
        if let Line::Text { bytes, .. } = line {
            if each(bytes).is_break() {
                break;
            }
        }
    }
    Ok(())
}

/// Writes a fork of `source` to `path`: its lines (those before `until`), each parsed
/// and passed through `rewrite`, then `trailer`; through a `.part` file renamed into
/// place, one line at a time so memory stays bounded. Lines that are not JSON are
/// dropped.
pub fn copy_lines(
    source: &Path,
    path: &Path,
    until: Option<u64>,
    rewrite: &mut dyn FnMut(&mut Value),
    trailer: Option<Value>,
) -> Result<(), SessionsError> {
    let mut reader = LineReader::open(source, 0)?;
    if let Some(end) = until {
        reader = reader.until(end);
    }
    let tmp = path.with_extension("jsonl.part");
    let mut out = BufWriter::new(std::fs::File::create(&tmp)?);
    while let Some(line) = reader.next_line()? {
        let Line::Text { bytes, .. } = line else {
            continue;
        };
        let Ok(mut v) = serde_json::from_slice::<Value>(bytes) else {
            continue;
        };
        rewrite(&mut v);
        serde_json::to_writer(&mut out, &v)?;
        out.write_all(b"\n")?;
    }
    if let Some(t) = trailer {
        serde_json::to_writer(&mut out, &t)?;
        out.write_all(b"\n")?;
    }
    out.flush()?;
    drop(out);
    std::fs::rename(&tmp, path)?;
    Ok(())
}

/// A new v4 UUID (a session id the agents accept).
pub fn new_id() -> String {
    // A v4 UUID from the OS's randomness.
    let mut b = [0u8; 16];
    if let Ok(mut f) = std::fs::File::open("/dev/urandom") {
        use std::io::Read;
        let _ = f.read_exact(&mut b);
    }
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    let h: String = b.iter().map(|x| format!("{x:02x}")).collect();
    format!(
        "{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

/// The folder environment variable `name` names (unset or empty: `None`).
pub fn env_dir(var: &dyn Fn(&str) -> Option<String>, name: &str) -> Option<PathBuf> {
    var(name).filter(|v| !v.is_empty()).map(PathBuf::from)
}

/// An agent's config folder: the one `name` names, else `folder` under `HOME`.
pub fn config_home(
    var: &dyn Fn(&str) -> Option<String>,
    name: &str,
    folder: &str,
) -> Option<PathBuf> {
    env_dir(var, name).or_else(|| env_dir(var, "HOME").map(|h| h.join(folder)))
}

/// For [`NativeSessions::owns`]: `path` relative to `home` and its file name, when it
/// lies in one of the session roots `roots` (folders directly under `home`).
pub fn under_roots<'a>(home: &Path, path: &'a Path, roots: &[&str]) -> Option<(&'a Path, String)> {
    let rel = path.strip_prefix(home).ok()?;
    let first = rel.components().next()?;
    if !roots.iter().any(|r| first.as_os_str() == *r) {
        return None;
    }
    let name = path.file_name()?.to_string_lossy().into_owned();
    Some((rel, name))
}

/// [`NativeSessions::open_page`] for a file only appended to: `agent`'s turns from
/// the lines starting in bytes `[from, until)`, each line added by `read`.
pub fn open_lines(
    agent: &str,
    session_id: &str,
    path: &Path,
    from: u64,
    until: Option<u64>,
    read: fn(&mut Turns, &[u8]),
) -> std::io::Result<Vec<UniversalSnapshot>> {
    let mut turns = Turns::new(agent, session_id);
    each_line(path, from, until, &mut |line| {
        read(&mut turns, line);
        ControlFlow::Continue(())
    })?;
    Ok(turns.out)
}

/// Like [`each_line`], with each line that is JSON parsed (the others skipped).
pub fn each_value(
    path: &Path,
    from: u64,
    until: Option<u64>,
    each: &mut dyn FnMut(Value) -> ControlFlow<()>,
) -> std::io::Result<()> {
    each_line(
        path,
        from,
        until,
        &mut |line| match serde_json::from_slice::<Value>(line) {
            Ok(v) => each(v),
            Err(_) => ControlFlow::Continue(()),
        },
    )
}

/// [`NativeSessions::fork_file`] by [`copy_lines`]: a new session id, the fork's file
/// named by `file_name(id)` beside `source`, each line passed through `rewrite(id, _)`.
pub fn fork_lines(
    source: &Path,
    until: Option<u64>,
    trailer: Option<Value>,
    file_name: &dyn Fn(&str) -> String,
    rewrite: &dyn Fn(&str, &mut Value),
) -> Result<Forked, SessionsError> {
    let id = new_id();
    let dir = source
        .parent()
        .ok_or_else(|| SessionsError::Invalid("the session file has no folder".into()))?;
    let path = dir.join(file_name(&id));
    copy_lines(source, &path, until, &mut |v| rewrite(&id, v), trailer)?;
    Ok(Forked {
        native_id: id,
        path,
    })
}

/// Reads `text` (a recorded session's lines) as [`index_lines`] would from byte 0:
/// the first line that is not a record is the error, with the line.
pub fn read_text(read_line: ReadLine, text: &str, meta: &mut Meta) -> Result<Batch, String> {
    let mut batch = Batch::default();
    let mut off = 0u64;
    for line in text.lines() {
        read_line(meta, off, line.as_bytes(), &mut batch).map_err(|e| format!("{e}: {line}"))?;
        off += line.len() as u64 + 1;
    }
    Ok(batch)
}
