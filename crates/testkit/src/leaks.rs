//! Looking for the suite's secrets where they must never be: every file under a
//! `WEFT_HOME` (the daemon's logs, config, account homes), every row of every SQLite
//! database there (events, snapshots, the library's excerpts) and what the commands
//! printed.
//!
//! Databases are read through SQLite as well as byte by byte: a row longer than a page
//! continues on overflow pages, each starting with a 4-byte link, so a secret that
//! falls across a page boundary is not in the file's bytes as one run, and a recent
//! write may sit in the `-wal` file. Each value of each column is searched whole.

use std::path::{Path, PathBuf};

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};

/// The fixed credentials the suite hands to agents as their ambient environment:
/// Weft passes them on to the agent's process and must write them nowhere. Tests add
/// the secrets they make (`sk-<tag>-<time>` account keys, MCP secrets).
pub const SUITE_SECRETS: &[&str] = &[
    AMBIENT_ANTHROPIC_KEY,
    AMBIENT_OPENAI_KEY,
    "sk-ambient-claude-key",
    "sk-ambient-codex-key",
    "ambient-gemini-key",
    "sk-ambient-native",
    "sk-ambient-must-not-reach-the-login",
];

/// The Anthropic key tests give claude against a scripted server.
pub const AMBIENT_ANTHROPIC_KEY: &str = "sk-ant-weft-suite-ambient";
/// The OpenAI-style key tests give codex and OpenAI-compatible agents.
pub const AMBIENT_OPENAI_KEY: &str = "sk-openai-weft-suite-ambient";

/// Where a secret was found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Leak {
    /// The secret (tests print it: it is a test value).
    pub secret: String,
    /// `<file>`, `<db> table T column C rowid N`, or `printed output`.
    pub place: String,
}

/// Every place under `roots`, or in `printed`, holding one of `secrets`. A database
/// that cannot be read counts as a leak (it was not searched).
pub fn scan(roots: &[&Path], printed: &[u8], secrets: &[&str]) -> Vec<Leak> {
    let secrets: Vec<&str> = secrets.iter().copied().filter(|s| !s.is_empty()).collect();
    let mut out = Vec::new();
    let hit = |bytes: &[u8], place: &dyn Fn() -> String, out: &mut Vec<Leak>| {
        for s in &secrets {
            if contains(bytes, s.as_bytes()) {
                out.push(Leak {
                    secret: s.to_string(),
                    place: place(),
                });
            }
        }
    };
    for root in roots {
        for file in files(root) {
            let Ok(bytes) = std::fs::read(&file) else {
                continue;
            };
            hit(&bytes, &|| file.display().to_string(), &mut out);
            if bytes.starts_with(b"SQLite format 3\0") {
                if let Err(e) = rows(&file, &mut |place, value| {
                    hit(value, &|| place.to_string(), &mut out)
                }) {
                    out.push(Leak {
                        secret: String::new(),
                        place: format!("{} could not be searched: {e}", file.display()),
                    });
                }
            }
        }
    }
    hit(printed, &|| "printed output".to_string(), &mut out);
    out
}

/// Panics, naming each place, when [`scan`] finds any of `secrets` (the suite's own
/// are always searched for too).
pub fn assert_none(roots: &[&Path], printed: &[u8], secrets: &[&str]) {
    let mut all: Vec<&str> = SUITE_SECRETS.to_vec();
    all.extend_from_slice(secrets);
    let found = scan(roots, printed, &all);
    assert!(
        found.is_empty(),
        "secrets where they must not be: {found:#?}"
    );
}

fn contains(hay: &[u8], needle: &[u8]) -> bool {
    !needle.is_empty() && hay.windows(needle.len()).any(|w| w == needle)
}

/// Every regular file under `root` (symlinks not followed).
fn files(root: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(kind) = e.file_type() else { continue };
            if kind.is_dir() {
                stack.push(e.path());
            } else if kind.is_file() {
                out.push(e.path());
            }
        }
    }
    out.sort();
    out
}

/// Hands every text and blob value of every table of the database at `db` to `each`.
fn rows(db: &Path, each: &mut dyn FnMut(&str, &[u8])) -> rusqlite::Result<()> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )?;
    let tables: Vec<(String, bool)> = conn
        .prepare("SELECT name, sql LIKE 'CREATE VIRTUAL%' FROM sqlite_master WHERE type = 'table'")?
        .query_map([], |r| {
            Ok((r.get(0)?, r.get::<_, Option<bool>>(1)?.unwrap_or(false)))
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (table, is_virtual) in tables {
        let sql = format!("SELECT * FROM \"{}\"", table.replace('"', "\"\""));
        let mut stmt = match conn.prepare(&sql) {
            Ok(s) => s,
            // A virtual table's module may not be in this build; its shadow tables,
            // plain tables, hold its data and are searched.
            Err(_) if is_virtual => continue,
            Err(e) => return Err(e),
        };
        let names: Vec<String> = stmt.column_names().map(str::to_string).collect();
        let mut q = stmt.query([])?;
        let mut n = 0u64;
        while let Some(row) = q.next()? {
            n += 1;
            for (i, name) in names.iter().enumerate() {
                let bytes = match row.get_ref(i)? {
                    ValueRef::Text(b) | ValueRef::Blob(b) => b,
                    _ => continue,
                };
                each(
                    &format!("{} table {table} column {name} row {n}", db.display()),
                    bytes,
                );
            }
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db_with(dir: &Path, body: &str) {
        let conn = Connection::open(dir.join("weft.db")).unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(
            "PRAGMA page_size = 4096; PRAGMA journal_mode = WAL; PRAGMA synchronous = OFF;
             CREATE TABLE events (id INTEGER PRIMARY KEY, body TEXT);",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        conn.execute("INSERT INTO events (body) VALUES (?1)", [body])
            .unwrap_or_else(|e| panic!("{e}"));
    }

    fn raw(dir: &Path, needle: &str) -> bool {
        files(dir)
            .iter()
            .any(|f| std::fs::read(f).is_ok_and(|b| contains(&b, needle.as_bytes())))
    }

    /// The scanner finds a planted value in a database row spanning overflow pages with
    /// a page boundary inside the value (where a byte search of the files misses it),
    /// in a log file and in printed output; and nothing where there is nothing.
    #[test]
    fn the_scanner_finds_a_planted_secret_wherever_it_is() {
        let secret = "sk-planted-0123456789abcdef";
        let clean = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        db_with(clean.path(), "nothing to see");
        assert!(scan(&[clean.path()], b"clean output", &[secret]).is_empty());

        // Placed so a page boundary falls inside it: with 4096-byte pages a row of P
        // bytes keeps 489 + (P - 489) % 4092 of them on its leaf page and the rest on
        // overflow pages, each starting with a 4-byte link. 600 bytes in, a row of about
        // 4,710 bytes cuts the value there (the record header's few bytes are why the
        // tail is searched): no file then holds it as one run of bytes.
        let mut split = None;
        for tail in 4040..4120 {
            let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            db_with(
                home.path(),
                &format!("{}{secret}{}", "x".repeat(600), "y".repeat(tail)),
            );
            if !raw(home.path(), secret) {
                split = Some(home);
                break;
            }
        }
        let Some(home) = split else {
            panic!("no placement split the value across pages");
        };
        let found = scan(&[home.path()], b"", &[secret]);
        assert!(
            found
                .iter()
                .any(|l| l.place.contains("table events column body")),
            "{found:?}"
        );

        std::fs::write(home.path().join("daemon.log"), format!("key={secret}\n"))
            .unwrap_or_else(|e| panic!("{e}"));
        let printed = format!("weft: using {secret}");
        let found = scan(&[home.path()], printed.as_bytes(), &[secret]);
        assert!(
            found.iter().any(|l| l.place.ends_with("daemon.log")),
            "{found:?}"
        );
        assert!(
            found.iter().any(|l| l.place == "printed output"),
            "{found:?}"
        );
    }
}
