//! `tracing` to a daily file in `<state_dir>/logs` (a week kept), and to stderr.
//! `RUST_LOG` sets the filter (default: info, debug for weft crates).
//!
//! The log names sessions, folders and errors the daemon quoted: it is the user's alone.
//! The app may be the first to create Weft's home (before any daemon makes it private),
//! so it creates the home and the log folder 0700 and each log file 0600 itself
//! (tracing-appender's rolling writer has no say over the mode: the files are ours).

use std::fs::{DirBuilder, File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use anyhow::Context;
use tracing_appender::non_blocking::WorkerGuard;
use tracing_subscriber::prelude::*;
use tracing_subscriber::EnvFilter;

const PREFIX: &str = "weft.";
const SUFFIX: &str = ".log";
/// Log files kept (one a day).
const KEEP: usize = 7;

/// Creates `dir` (and any missing parent) private to the user: 0700, also when it
/// existed before with a wider mode.
pub fn private_dir(dir: &Path) -> std::io::Result<()> {
    DirBuilder::new().recursive(true).mode(0o700).create(dir)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

/// Starts logging; keep the guard alive for the life of the app (it flushes on drop).
pub fn init(log_dir: &Path) -> anyhow::Result<WorkerGuard> {
    private_dir(log_dir).with_context(|| format!("creating {}", log_dir.display()))?;
    let daily = DailyFile::open(log_dir).context("opening the log file")?;
    let (file, guard) = tracing_appender::non_blocking(daily);
    let filter = EnvFilter::try_from_default_env()
        .unwrap_or_else(|_| EnvFilter::new("info,weft_app=debug,weft_kernel=debug"));
    let _ = tracing_subscriber::registry()
        .with(filter)
        .with(
            tracing_subscriber::fmt::layer()
                .with_writer(file)
                .with_ansi(false),
        )
        .with(tracing_subscriber::fmt::layer().with_writer(std::io::stderr))
        .try_init();
    Ok(guard)
}

/// `weft.YYYY-MM-DD.log` for today (UTC), a new file when the day changes, the oldest
/// beyond [`KEEP`] removed; every file 0600.
pub struct DailyFile {
    dir: PathBuf,
    day: time::Date,
    file: File,
}

impl DailyFile {
    /// Opens (appending) today's file in `dir`.
    pub fn open(dir: &Path) -> std::io::Result<DailyFile> {
        let day = today();
        let file = open_private(&dir.join(file_name(day)))?;
        prune(dir, KEEP);
        Ok(DailyFile {
            dir: dir.to_path_buf(),
            day,
            file,
        })
    }

    fn roll(&mut self) -> std::io::Result<()> {
        let day = today();
        if day == self.day {
            return Ok(());
        }
        self.file = open_private(&self.dir.join(file_name(day)))?;
        self.day = day;
        prune(&self.dir, KEEP);
        Ok(())
    }
}

impl Write for DailyFile {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.roll()?;
        self.file.write(buf)
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.file.flush()
    }
}

fn today() -> time::Date {
    time::OffsetDateTime::now_utc().date()
}

fn file_name(day: time::Date) -> String {
    format!("{PREFIX}{day}{SUFFIX}")
}

/// Opens `path` for appending, created 0600; a file an older Weft left wider is narrowed.
fn open_private(path: &Path) -> std::io::Result<File> {
    let file = OpenOptions::new()
        .append(true)
        .create(true)
        .mode(0o600)
        .open(path)?;
    if file.metadata()?.permissions().mode() & 0o077 != 0 {
        file.set_permissions(std::fs::Permissions::from_mode(0o600))?;
    }
    Ok(file)
}

/// Removes the oldest daily files beyond `keep` (their names sort by date).
fn prune(dir: &Path, keep: usize) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    let mut logs: Vec<PathBuf> = entries
        .flatten()
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(PREFIX) && n.ends_with(SUFFIX))
        })
        .collect();
    logs.sort();
    let excess = logs.len().saturating_sub(keep);
    for old in logs.into_iter().take(excess) {
        if let Err(e) = std::fs::remove_file(&old) {
            tracing::warn!("removing the old log {}: {e}", old.display());
        }
    }
}

/// The most recently written log file in `log_dir`.
pub fn newest_log(log_dir: &Path) -> Option<PathBuf> {
    std::fs::read_dir(log_dir)
        .ok()?
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("weft"))
        .filter_map(|e| Some((e.metadata().ok()?.modified().ok()?, e.path())))
        .max()
        .map(|(_, p)| p)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        std::fs::metadata(p)
            .unwrap_or_else(|e| panic!("{}: {e}", p.display()))
            .permissions()
            .mode()
            & 0o777
    }

    #[test]
    fn the_home_and_its_logs_are_private_from_the_start() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = tmp.path().join("nested/.weft");
        private_dir(&home).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&home), 0o700);
        let logs = home.join("logs");
        private_dir(&logs).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&logs), 0o700);
        let mut daily = DailyFile::open(&logs).unwrap_or_else(|e| panic!("{e}"));
        daily
            .write_all(b"a line\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let file = newest_log(&logs).unwrap_or_else(|| panic!("no log in {}", logs.display()));
        assert_eq!(mode(&file), 0o600);
        assert_eq!(
            std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}")),
            "a line\n"
        );
    }

    #[test]
    fn a_home_or_log_left_wide_open_is_narrowed() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let home = tmp.path().join(".weft");
        std::fs::create_dir(&home).unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o755))
            .unwrap_or_else(|e| panic!("{e}"));
        private_dir(&home).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&home), 0o700);
        let old = home.join(file_name(today()));
        std::fs::write(&old, "old\n").unwrap_or_else(|e| panic!("{e}"));
        std::fs::set_permissions(&old, std::fs::Permissions::from_mode(0o644))
            .unwrap_or_else(|e| panic!("{e}"));
        DailyFile::open(&home).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(mode(&old), 0o600);
    }

    #[test]
    fn only_a_week_of_logs_is_kept() {
        let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        for d in 1..=9 {
            std::fs::write(tmp.path().join(format!("weft.2026-01-0{d}.log")), "x")
                .unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(tmp.path().join("other.txt"), "x").unwrap_or_else(|e| panic!("{e}"));
        prune(tmp.path(), KEEP);
        let mut left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        left.sort();
        assert_eq!(left.len(), KEEP + 1);
        assert_eq!(left[0], "other.txt");
        assert_eq!(left[1], "weft.2026-01-03.log");
    }
}
