//! The bridge itself: spawn, read, fan out, write, resize, exit, kill.

use std::collections::VecDeque;
use std::io::{Read, Write};
use std::num::NonZeroU16;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use bytes::Bytes;
use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use parking_lot::{Condvar, Mutex};
use portable_pty::{native_pty_system, ChildKiller, CommandBuilder, MasterPty};
use tokio::sync::{broadcast, watch};

use crate::screen::{MAX_COLS, MAX_ROWS};
use crate::Screen;

/// Lines of scrollback kept for a re-attaching viewer.
const SCROLLBACK: usize = 10_000;
/// Chunks buffered per viewer; one further behind re-attaches from the screen.
const VIEWER_BUFFER: usize = 4096;
const READ_BUF: usize = 64 * 1024;
/// Output read but not yet on the kept screen; beyond it the reader waits for the
/// screen (back-pressure on the child). Viewers never wait for the screen below it.
const BACKLOG_LIMIT: usize = 32 * 1024 * 1024;
/// Most bytes the screen thread takes from the backlog at once.
const SCREEN_BATCH: usize = 256 * 1024;
/// After SIGHUP, how long the group gets before SIGKILL.
const KILL_GRACE: Duration = Duration::from_millis(300);
/// After the child exits, how long the terminal may stay quiet before the exit is
/// reported anyway (a grandchild can hold it open, so EOF may never come).
const DRAIN_GRACE: Duration = Duration::from_millis(500);

/// What to run. Its `Debug` names environment variables without their values.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct PtySpec {
    /// The executable (a bare name is looked up on `PATH`).
    pub program: PathBuf,
    /// Its arguments.
    pub args: Vec<String>,
    /// The environment to start from instead of the parent's (a client's own);
    /// `None` inherits the parent's.
    pub base_env: Option<Vec<(String, String)>>,
    /// Extra environment (on top of the base, plus `TERM=xterm-256color`).
    pub env: Vec<(String, String)>,
    /// Where it runs.
    pub cwd: PathBuf,
    /// Shown before the program's output (what Weft runs, and why), as terminal text.
    pub banner: Option<String>,
    /// Run once the program has exited, before the exit is reported.
    pub after: Option<After>,
}

/// A step that follows a terminal's program (checking what an install left, say): its
/// text is shown after the program's output, and its failure fails the terminal.
#[derive(Clone)]
pub struct After(pub Arc<AfterFn>);

/// See [`After`]: `Ok` text is shown, `Err` text is shown and fails the terminal.
pub type AfterFn = dyn Fn(&ExitInfo) -> Result<String, String> + Send + Sync;

impl PartialEq for After {
    fn eq(&self, other: &Self) -> bool {
        Arc::ptr_eq(&self.0, &other.0)
    }
}

impl Eq for After {}

impl std::fmt::Debug for After {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("After(..)")
    }
}

/// Text for a terminal: its lines end `\r\n`.
fn terminal_text(text: &str) -> Bytes {
    let mut out = text.replace("\r\n", "\n").replace('\n', "\r\n");
    if !out.ends_with("\r\n") {
        out.push_str("\r\n");
    }
    Bytes::from(out)
}

impl std::fmt::Debug for PtySpec {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let names =
            |env: &[(String, String)]| env.iter().map(|(k, _)| k.clone()).collect::<Vec<_>>();
        f.debug_struct("PtySpec")
            .field("program", &self.program)
            .field("args", &self.args)
            .field("base_env", &self.base_env.as_deref().map(names))
            .field("env", &names(&self.env))
            .field("cwd", &self.cwd)
            .field("banner", &self.banner)
            .field("after", &self.after)
            .finish()
    }
}

/// A terminal size in character cells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PtySize {
    /// Rows.
    pub rows: u16,
    /// Columns.
    pub cols: u16,
}

/// Output from the child: `data` starts at byte `offset` of everything it wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Chunk {
    /// Offset of the first byte.
    pub offset: u64,
    /// The bytes.
    pub data: Bytes,
}

/// How the child ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExitInfo {
    /// Exit code (non-zero on failure; portable-pty reports 1 for a signal).
    pub code: u32,
    /// The signal that ended it, if one did.
    pub signal: Option<String>,
    /// True for exit code 0.
    pub success: bool,
}

/// A viewer joining: the screen as escape codes, current at `offset`; then `chunks`
/// (skip any whose bytes end at or before `offset`).
pub struct Attach {
    /// Escape codes that bring a fresh terminal of the bridge's size to the state at
    /// `offset`: scrollback (from [`PtyBridge::attach`]), screen, cursor, input modes.
    pub screen: Vec<u8>,
    /// The output offset `screen` is current at.
    pub offset: u64,
    /// Live output after that.
    pub chunks: broadcast::Receiver<Chunk>,
}

/// Why the bridge failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum PtyError {
    /// The program is not there.
    #[error("`{0}` was not found (not a file, and not on PATH)")]
    NotFound(String),
    /// The folder to run in is not there.
    #[error("cannot run in `{0}`: not a folder")]
    BadCwd(String),
    /// A size with a zero dimension.
    #[error("a terminal needs at least one row and one column")]
    BadSize,
    /// A size past [`MAX_COLS`] × [`MAX_ROWS`].
    #[error(
        "a terminal of {cols} columns × {rows} rows is too large: at most {} columns × {} rows",
        MAX_COLS,
        MAX_ROWS
    )]
    TooLarge {
        /// Columns asked for.
        cols: u16,
        /// Rows asked for.
        rows: u16,
    },
    /// The PTY could not be made or the child would not start.
    #[error("cannot start `{program}` in a terminal: {message}")]
    Spawn {
        /// What was run.
        program: String,
        /// Why it failed.
        message: String,
    },
    /// Writing or resizing failed (the child is gone).
    #[error("terminal I/O: {0}")]
    Io(String),
}

/// The kept screen and the output offset it is current at.
struct Kept {
    screen: Screen,
    offset: u64,
}

/// Output read and sent to viewers but not yet on the kept screen.
#[derive(Default)]
struct Backlog {
    chunks: VecDeque<Chunk>,
    bytes: usize,
    /// Every byte read so far.
    read: u64,
    /// The reader saw the end of output.
    closed: bool,
}

struct Shared {
    backlog: Mutex<Backlog>,
    /// The screen thread waits on it for output.
    readable: Condvar,
    /// The reader waits on it for the backlog to shrink.
    room: Condvar,
    kept: Mutex<Kept>,
    chunks: broadcast::Sender<Chunk>,
    exit: watch::Sender<Option<ExitInfo>>,
    /// The child has been reaped. Its exit is reported only once its last output is
    /// on the screen, which can take a while (a grandchild still writing); meanwhile
    /// its pid, and its group's once empty, are free for the kernel to reuse, so a
    /// kill must look here, not at the exit.
    reaped: std::sync::atomic::AtomicBool,
}

/// One child in a PTY. Dropping the bridge kills the child's process group.
pub struct PtyBridge {
    shared: Arc<Shared>,
    master: Mutex<Box<dyn MasterPty + Send>>,
    writer: Mutex<Box<dyn Write + Send>>,
    killer: Mutex<Box<dyn ChildKiller + Send + Sync>>,
    pid: Option<u32>,
    threads: Vec<JoinHandle<()>>,
}

/// Checks a size against the limits (see [`MAX_COLS`]).
pub fn check_size(size: PtySize) -> Result<(), PtyError> {
    dims(size).map(drop)
}

fn dims(size: PtySize) -> Result<(NonZeroU16, NonZeroU16), PtyError> {
    if size.cols > MAX_COLS || size.rows > MAX_ROWS {
        return Err(PtyError::TooLarge {
            cols: size.cols,
            rows: size.rows,
        });
    }
    match (NonZeroU16::new(size.rows), NonZeroU16::new(size.cols)) {
        (Some(r), Some(c)) => Ok((r, c)),
        _ => Err(PtyError::BadSize),
    }
}

fn resolve(program: &Path) -> Result<PathBuf, PtyError> {
    let missing = || PtyError::NotFound(program.display().to_string());
    if program.components().count() > 1 {
        return program
            .is_file()
            .then(|| program.to_path_buf())
            .ok_or_else(missing);
    }
    let path = std::env::var_os("PATH").ok_or_else(missing)?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(program))
        .find(|p| p.is_file())
        .ok_or_else(missing)
}

impl PtyBridge {
    /// Starts `spec` in a new PTY of `size`.
    pub fn spawn(spec: &PtySpec, size: PtySize) -> Result<PtyBridge, PtyError> {
        dims(size)?;
        let program = resolve(&spec.program)?;
        if !spec.cwd.is_dir() {
            return Err(PtyError::BadCwd(spec.cwd.display().to_string()));
        }
        let spawn_err = |e: &dyn std::fmt::Display| PtyError::Spawn {
            program: program.display().to_string(),
            message: e.to_string(),
        };
        let pair = native_pty_system()
            .openpty(portable_pty::PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| spawn_err(&e))?;
        let mut cmd = CommandBuilder::new(&program);
        cmd.args(&spec.args);
        cmd.cwd(&spec.cwd);
        if let Some(base) = &spec.base_env {
            cmd.env_clear();
            for (k, v) in base {
                cmd.env(k, v);
            }
        }
        cmd.env("TERM", "xterm-256color");
        cmd.env("COLORTERM", "truecolor");
        for (k, v) in &spec.env {
            cmd.env(k, v);
        }
        let mut child = pair.slave.spawn_command(cmd).map_err(|e| spawn_err(&e))?;
        // Our copy of the slave must close, or the reader never sees EOF.
        drop(pair.slave);
        let pid = child.process_id();
        let killer = child.clone_killer();
        let mut reader = pair.master.try_clone_reader().map_err(|e| spawn_err(&e))?;
        let writer = pair.master.take_writer().map_err(|e| spawn_err(&e))?;

        let (chunks, _) = broadcast::channel(VIEWER_BUFFER);
        let (exit, _) = watch::channel(None);
        let shared = Arc::new(Shared {
            backlog: Mutex::new(Backlog::default()),
            readable: Condvar::new(),
            room: Condvar::new(),
            kept: Mutex::new(Kept {
                screen: Screen::new(size.rows, size.cols, SCROLLBACK),
                offset: 0,
            }),
            chunks,
            exit,
            reaped: std::sync::atomic::AtomicBool::new(false),
        });
        if let Some(banner) = &spec.banner {
            shared.publish(terminal_text(banner));
        }

        // Output goes to viewers as soon as it is read; the kept screen follows on a
        // thread of its own, so a viewer never waits for the terminal model (which
        // parses more slowly than a PTY delivers a burst).
        let reading = shared.clone();
        let reader_thread = std::thread::Builder::new()
            .name("weft-pty-read".into())
            .spawn(move || {
                let mut buf = vec![0u8; READ_BUF];
                loop {
                    match reader.read(&mut buf) {
                        Ok(0) => break,
                        Ok(n) => reading.publish(Bytes::copy_from_slice(&buf[..n])),
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
                        // EIO once the child side is gone: the end of output.
                        Err(_) => break,
                    }
                }
                reading.backlog.lock().closed = true;
                reading.readable.notify_all();
            })
            .map_err(|e| spawn_err(&e))?;
        let (drained_tx, drained_rx) = std::sync::mpsc::channel::<()>();
        let keeping = shared.clone();
        let screen_thread = std::thread::Builder::new()
            .name("weft-pty-screen".into())
            .spawn(move || {
                while keeping.keep_up() {}
                let _ = drained_tx.send(());
            })
            .map_err(|e| spawn_err(&e))?;

        let waiting = shared.clone();
        let after = spec.after.clone();
        let waiter_thread = std::thread::Builder::new()
            .name("weft-pty-wait".into())
            .spawn(move || {
                let status = child.wait();
                waiting
                    .reaped
                    .store(true, std::sync::atomic::Ordering::SeqCst);
                // Let the last output land on the screen before reporting the exit: all of
                // it (however far behind the screen is), unless a grandchild keeps the
                // terminal open — then stop once nothing new arrived for DRAIN_GRACE.
                let mut seen = waiting.backlog.lock().read;
                let mut quiet_since = Instant::now();
                while let Err(std::sync::mpsc::RecvTimeoutError::Timeout) =
                    drained_rx.recv_timeout(Duration::from_millis(10))
                {
                    let (now_read, behind) = {
                        let backlog = waiting.backlog.lock();
                        (backlog.read, !backlog.chunks.is_empty())
                    };
                    if now_read != seen || behind {
                        seen = now_read;
                        quiet_since = Instant::now();
                    } else if quiet_since.elapsed() >= DRAIN_GRACE {
                        break;
                    }
                }
                let mut info = match status {
                    Ok(s) => ExitInfo {
                        code: s.exit_code(),
                        signal: s.signal().map(str::to_string),
                        success: s.success(),
                    },
                    Err(e) => ExitInfo {
                        code: 1,
                        signal: Some(format!("wait failed: {e}")),
                        success: false,
                    },
                };
                if let Some(After(after)) = after {
                    let (text, failed) = match after(&info) {
                        Ok(text) => (text, false),
                        Err(text) => (text, true),
                    };
                    if !text.is_empty() {
                        waiting.publish(terminal_text(&text));
                        // The screen's thread may be done: the text is on the kept
                        // screen before the exit is reported, as the output is.
                        waiting.settle();
                    }
                    if failed && info.success {
                        info = ExitInfo {
                            code: 1,
                            signal: None,
                            success: false,
                        };
                    }
                }
                waiting.exit.send_replace(Some(info));
            })
            .map_err(|e| spawn_err(&e))?;

        Ok(PtyBridge {
            shared,
            master: Mutex::new(pair.master),
            writer: Mutex::new(writer),
            killer: Mutex::new(killer),
            pid,
            threads: vec![reader_thread, screen_thread, waiter_thread],
        })
    }

    /// Joins as a viewer: the scrollback and current screen, then the live output.
    pub fn attach(&self) -> Attach {
        self.shared.attach(true)
    }

    /// Joins as a viewer that already shows the earlier output (a terminal catching
    /// up after falling behind): the current screen only, then the live output.
    pub fn attach_screen(&self) -> Attach {
        self.shared.attach(false)
    }

    /// Sends keystrokes (or pasted text) to the child.
    pub fn write(&self, bytes: &[u8]) -> Result<(), PtyError> {
        let mut w = self.writer.lock();
        w.write_all(bytes)
            .and_then(|_| w.flush())
            .map_err(|e| PtyError::Io(e.to_string()))
    }

    /// Resizes the terminal (the child gets SIGWINCH) and the kept screen.
    pub fn resize(&self, size: PtySize) -> Result<(), PtyError> {
        let (rows, cols) = dims(size)?;
        self.master
            .lock()
            .resize(portable_pty::PtySize {
                rows: size.rows,
                cols: size.cols,
                pixel_width: 0,
                pixel_height: 0,
            })
            .map_err(|e| PtyError::Io(e.to_string()))?;
        self.shared
            .kept
            .lock()
            .screen
            .resize(rows.get(), cols.get());
        Ok(())
    }

    /// The visible screen as plain text (rows joined by newlines).
    pub fn screen_text(&self) -> String {
        self.shared.kept.lock().screen.text()
    }

    /// The current size.
    pub fn size(&self) -> PtySize {
        let (rows, cols) = self.shared.kept.lock().screen.size();
        PtySize { rows, cols }
    }

    /// Bytes of output so far.
    pub fn output_len(&self) -> u64 {
        self.shared.backlog.lock().read
    }

    /// The child's process id (also its process group id).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    fn reaped(&self) -> bool {
        self.shared.reaped.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How the child ended, once it has.
    pub fn exit_info(&self) -> Option<ExitInfo> {
        self.shared.exit.borrow().clone()
    }

    /// Waits for the child to end.
    pub async fn wait(&self) -> ExitInfo {
        let mut rx = self.shared.exit.subscribe();
        loop {
            if let Some(info) = rx.borrow_and_update().clone() {
                return info;
            }
            if rx.changed().await.is_err() {
                return ExitInfo {
                    code: 1,
                    signal: Some("the bridge closed".into()),
                    success: false,
                };
            }
        }
    }

    /// Ends the child's whole process group: SIGHUP, then SIGKILL after a short grace.
    pub fn kill(&self) {
        if self.reaped() {
            return;
        }
        let group = self
            .pid
            .and_then(|p| i32::try_from(p).ok())
            .map(Pid::from_raw);
        match group {
            Some(pgid) => {
                let _ = killpg(pgid, Signal::SIGHUP);
                let deadline = Instant::now() + KILL_GRACE;
                while Instant::now() < deadline && !self.reaped() {
                    std::thread::sleep(Duration::from_millis(10));
                }
                // The group, stragglers in it, and whatever left it (an agent's tool
                // shells run in sessions of their own).
                if let Some(leader) = self.pid {
                    if self.reaped() {
                        // It went within the grace: what ignored the SIGHUP in its
                        // group goes now, while that id is still the group's.
                        weft_proctree::kill_group(leader);
                    } else {
                        weft_proctree::kill_tree(leader);
                    }
                }
            }
            None => {
                let _ = self.killer.lock().kill();
            }
        }
    }
}

impl Shared {
    /// Sends freshly read output to the viewers and queues it for the screen.
    fn publish(&self, data: Bytes) {
        let mut backlog = self.backlog.lock();
        while backlog.bytes >= BACKLOG_LIMIT {
            self.room.wait(&mut backlog);
        }
        let chunk = Chunk {
            offset: backlog.read,
            data,
        };
        backlog.read += chunk.data.len() as u64;
        backlog.bytes += chunk.data.len();
        backlog.chunks.push_back(chunk.clone());
        // Sent under the backlog's lock, so `attach` sees every chunk exactly once:
        // either in the backlog it replays or on the channel it subscribes to.
        let _ = self.chunks.send(chunk);
        drop(backlog);
        self.readable.notify_one();
    }

    /// Moves a batch of the backlog onto the kept screen; false once output ended and
    /// everything is on it.
    fn keep_up(&self) -> bool {
        let batch: Vec<Chunk> = {
            let mut backlog = self.backlog.lock();
            while backlog.chunks.is_empty() && !backlog.closed {
                self.readable.wait(&mut backlog);
            }
            let mut taken = 0;
            backlog
                .chunks
                .iter()
                .take_while(|c| {
                    let more = taken < SCREEN_BATCH;
                    taken += c.data.len();
                    more
                })
                .cloned()
                .collect()
        };
        if batch.is_empty() {
            return false;
        }
        {
            let mut kept = self.kept.lock();
            for chunk in &batch {
                // An attach may have taken some of it onto the screen meanwhile.
                kept.take(chunk);
            }
        }
        let mut backlog = self.backlog.lock();
        let done = self.kept.lock().offset;
        backlog.drop_through(done);
        drop(backlog);
        self.room.notify_all();
        true
    }

    /// Takes everything read so far onto the kept screen.
    fn settle(&self) {
        let mut backlog = self.backlog.lock();
        let mut kept = self.kept.lock();
        for chunk in &backlog.chunks {
            kept.take(chunk);
        }
        let done = kept.offset;
        drop(kept);
        backlog.drop_through(done);
        drop(backlog);
        self.room.notify_all();
    }

    fn attach(&self, history: bool) -> Attach {
        // Lock order: backlog, then screen. The screen is brought up to everything read
        // so far right here (the reader waits meanwhile), so the redraw is the screen
        // alone, never a replay of up to BACKLOG_LIMIT bytes of raw output.
        let mut backlog = self.backlog.lock();
        let mut kept = self.kept.lock();
        for chunk in &backlog.chunks {
            kept.take(chunk);
        }
        let done = kept.offset;
        let screen = kept.screen.formatted(history);
        drop(kept);
        backlog.drop_through(done);
        let offset = backlog.read;
        let chunks = self.chunks.subscribe();
        drop(backlog);
        self.room.notify_all();
        Attach {
            screen,
            offset,
            chunks,
        }
    }
}

impl Kept {
    /// Puts the part of `chunk` past what the screen has onto it.
    fn take(&mut self, chunk: &Chunk) {
        let end = chunk.offset + chunk.data.len() as u64;
        if end <= self.offset {
            return;
        }
        let skip = usize::try_from(self.offset.saturating_sub(chunk.offset)).unwrap_or(0);
        self.screen.process(&chunk.data[skip..]);
        self.offset = end;
    }
}

impl Backlog {
    /// Forgets the chunks the screen has taken in (everything up to `offset`).
    fn drop_through(&mut self, offset: u64) {
        while let Some(front) = self.chunks.front() {
            if front.offset + front.data.len() as u64 > offset {
                break;
            }
            self.bytes -= front.data.len();
            self.chunks.pop_front();
        }
    }
}

impl Drop for PtyBridge {
    fn drop(&mut self) {
        // A child that already ended is not signalled: its group id may be reused.
        // Its own background stragglers got SIGHUP from the kernel when it, the
        // session leader, exited.
        self.kill();
        for t in self.threads.drain(..) {
            // The reader ends at EOF once the group is gone; don't hang a drop on a
            // grandchild that kept the terminal open.
            let deadline = Instant::now() + DRAIN_GRACE;
            while !t.is_finished() && Instant::now() < deadline {
                std::thread::sleep(Duration::from_millis(5));
            }
            if t.is_finished() {
                let _ = t.join();
            }
        }
    }
}
