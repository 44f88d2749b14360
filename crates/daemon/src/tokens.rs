//! Named tokens for WebSocket clients, in `WEFT_HOME/tokens` (0600): one
//! `NAME SCOPE[,SCOPE] sha256:HEX CREATED_MS` per line. Only the token's SHA-256 is
//! kept: the token itself is shown once, when it is made (`weft tokens add NAME`), and
//! can never be read back from the file, a log or the database. A token is revoked by
//! name (`weft tokens revoke NAME`); the daemon reads the file again whenever it
//! changed, so a revoked token is refused at its next connection.
//!
//! A file written by an older Weft (`SCOPES TOKEN` lines, the token in clear) is
//! rewritten hashed the first time it is read under the lock, its tokens named
//! `control` and `read`. The Unix socket needs no token: only its owner can open it.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use sha2::{Digest, Sha256};
use weft_protocol::Scope;

/// A token as made, with its secret: shown once, then only its hash is kept.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// Its name.
    pub name: String,
    /// The secret.
    pub value: String,
    /// Its scopes.
    pub scopes: Vec<Scope>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("name", &self.name)
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// A token as stored: its name, scopes, hash and when it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Entry {
    /// Its name.
    pub name: String,
    /// Its scopes.
    pub scopes: Vec<Scope>,
    /// `sha256:` and the hex SHA-256 of the token.
    pub hash: String,
    /// When it was made (ms since the epoch; 0 when not known).
    pub created_ms: i64,
}

/// Why a token could not be added or revoked.
#[derive(Debug, thiserror::Error)]
pub enum TokenError {
    /// A name that is not 1–64 letters, digits, `.`, `_` or `-`.
    #[error("`{0}` is not a token name: use 1 to 64 letters, digits, `.`, `_` or `-`")]
    BadName(String),
    /// The name is taken.
    #[error("a token named `{0}` exists already (revoke it first: `weft tokens revoke {0}`)")]
    Exists(String),
    /// No token has the name.
    #[error("no token is named `{0}`")]
    Missing(String),
    /// The file could not be read or written.
    #[error("{0}")]
    Io(#[from] std::io::Error),
}

/// The stored form of `token`.
pub fn hash(token: &str) -> String {
    let digest = Sha256::digest(token.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!("sha256:{hex}")
}

fn valid_name(name: &str) -> bool {
    (1..=64).contains(&name.len())
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"._-".contains(&b))
}

fn parse_scopes(text: &str) -> Vec<Scope> {
    text.split(',').filter_map(Scope::parse).collect()
}

/// A line of an older Weft's file (`SCOPES TOKEN`, the token in clear), hashed.
fn legacy(fields: &[&str]) -> Option<Entry> {
    let [scopes, value] = fields else {
        return None;
    };
    let scopes = parse_scopes(scopes);
    let name = if scopes.contains(&Scope::Control) {
        "control"
    } else {
        "read"
    };
    (!scopes.is_empty() && !value.is_empty()).then(|| Entry {
        name: name.to_string(),
        scopes,
        hash: hash(value),
        created_ms: 0,
    })
}

/// Every token in the file (none when it is missing), and whether any line was in
/// an older Weft's clear form.
fn read(path: &Path) -> (Vec<Entry>, bool) {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    let mut old = false;
    let entries = text
        .lines()
        .filter_map(|line| {
            let fields: Vec<&str> = line.split_whitespace().collect();
            if fields.len() == 2 {
                old = true;
                return legacy(&fields);
            }
            let [name, scopes, hash, created] = fields[..] else {
                return None;
            };
            let scopes = parse_scopes(scopes);
            (!scopes.is_empty() && hash.starts_with("sha256:")).then(|| Entry {
                name: name.to_string(),
                scopes,
                hash: hash.to_string(),
                created_ms: created.parse().unwrap_or(0),
            })
        })
        .collect();
    (entries, old)
}

/// Every token in the file (none when it is missing).
pub fn list(path: &Path) -> Vec<Entry> {
    read(path).0
}

/// Writes `entries` as the whole file (0600), through a temporary file renamed over it.
fn write(path: &Path, entries: &[Entry]) -> std::io::Result<()> {
    let tmp = path.with_extension("tmp");
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .write(true)
        .truncate(true)
        .mode(0o600)
        .open(&tmp)?;
    for e in entries {
        let scopes: Vec<&str> = e.scopes.iter().map(|s| s.as_str()).collect();
        writeln!(
            file,
            "{} {} {} {}",
            e.name,
            scopes.join(","),
            e.hash,
            e.created_ms
        )?;
    }
    file.sync_all()?;
    std::fs::rename(&tmp, path)
}

/// Runs `change` on the file's entries under its lock (`tokens.lock` beside it) and
/// writes them back: two commands at once must not lose each other's token.
fn edit<T>(
    path: &Path,
    change: impl FnOnce(&mut Vec<Entry>) -> Result<T, TokenError>,
) -> Result<T, TokenError> {
    let _lock = weft_workspace::files::lock(&path.with_extension("lock"))?;
    let (mut entries, _) = read(path);
    let out = change(&mut entries)?;
    write(path, &entries)?;
    Ok(out)
}

/// Rewrites an older Weft's file with its tokens hashed (nothing when it is current).
pub fn migrate(path: &Path) -> std::io::Result<()> {
    if !read(path).1 {
        return Ok(());
    }
    match edit(path, |_| Ok(())) {
        Ok(()) => Ok(()),
        Err(TokenError::Io(e)) => Err(e),
        Err(e) => Err(std::io::Error::other(e.to_string())),
    }
}

/// A fresh random secret: two v4 UUIDs, 244 random bits from the OS.
pub fn secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// Makes a token named `name` with `scopes` and saves its hash; the token is returned
/// once, here.
pub fn add(path: &Path, name: &str, scopes: &[Scope]) -> Result<Token, TokenError> {
    if !valid_name(name) {
        return Err(TokenError::BadName(name.to_string()));
    }
    let token = Token {
        name: name.to_string(),
        value: secret(),
        scopes: scopes.to_vec(),
    };
    edit(path, |entries| {
        if entries.iter().any(|e| e.name == name) {
            return Err(TokenError::Exists(name.to_string()));
        }
        entries.push(Entry {
            name: name.to_string(),
            scopes: scopes.to_vec(),
            hash: hash(&token.value),
            created_ms: weft_kernel::now_ms(),
        });
        Ok(())
    })?;
    Ok(token)
}

/// Makes a token named `name`, revoking one of that name first if there is one.
pub fn replace(path: &Path, name: &str, scopes: &[Scope]) -> Result<Token, TokenError> {
    match revoke(path, name) {
        Ok(()) | Err(TokenError::Missing(_)) => add(path, name, scopes),
        Err(e) => Err(e),
    }
}

/// Forgets the token named `name`: it is refused from now on.
pub fn revoke(path: &Path, name: &str) -> Result<(), TokenError> {
    edit(path, |entries| {
        let before = entries.len();
        entries.retain(|e| e.name != name);
        if entries.len() == before {
            return Err(TokenError::Missing(name.to_string()));
        }
        Ok(())
    })
}

/// The entry `given` is the token of, its hash compared with every entry's in constant
/// time per byte (so the time taken does not say how much of a guess matched).
pub fn find<'a>(entries: &'a [Entry], given: &str) -> Option<&'a Entry> {
    let wanted = hash(given);
    let mut found = None;
    for e in entries {
        let same = e.hash.len() == wanted.len()
            && e.hash
                .bytes()
                .zip(wanted.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            found = Some(e);
        }
    }
    found
}

/// What tells one version of the tokens file from another: its inode, length and
/// modification time (`None`: no file).
type Stamp = Option<(u64, u64, Option<SystemTime>)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.ino(), meta.len(), meta.modified().ok()))
}

/// The tokens file as last read, read again whenever it changed (a `stat` per
/// lookup): a token added meanwhile works at once, a revoked one is refused at once.
pub struct TokenFile {
    path: PathBuf,
    entries: Vec<Entry>,
    stamp: Stamp,
}

impl TokenFile {
    /// Reads the file at `path` (none: no tokens yet), hashing an older Weft's tokens.
    pub fn open(path: &Path) -> TokenFile {
        if let Err(e) = migrate(path) {
            tracing::warn!("cannot rewrite {} with hashed tokens: {e}", path.display());
        }
        let mut file = TokenFile {
            path: path.to_path_buf(),
            entries: Vec::new(),
            stamp: None,
        };
        file.reload();
        file
    }

    /// Reads the file again.
    pub fn reload(&mut self) {
        self.stamp = stamp(&self.path);
        self.entries = read(&self.path).0;
    }

    /// The entry `given` is the token of (see [`find`]).
    pub fn find(&mut self, given: &str) -> Option<Entry> {
        if stamp(&self.path) != self.stamp {
            self.reload();
        }
        find(&self.entries, given).cloned()
    }

    /// True while a token with this hash is in the file.
    pub fn holds(&mut self, hash: &str) -> bool {
        if stamp(&self.path) != self.stamp {
            self.reload();
        }
        self.entries.iter().any(|e| e.hash == hash)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn tokens_are_named_hashed_and_revoked() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("tokens");
        let phone =
            add(&path, "phone", &[Scope::Read, Scope::Control]).unwrap_or_else(|e| panic!("{e}"));
        let viewer = add(&path, "viewer", &[Scope::Read]).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(phone.value, viewer.value);
        assert!(matches!(
            add(&path, "phone", &[Scope::Read]),
            Err(TokenError::Exists(_))
        ));
        assert!(matches!(
            add(&path, "a phone", &[Scope::Read]),
            Err(TokenError::BadName(_))
        ));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(!text.contains(&phone.value) && !text.contains(&viewer.value));
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
        let mut file = TokenFile::open(&path);
        assert_eq!(
            file.find(&viewer.value).map(|e| e.scopes),
            Some(vec![Scope::Read])
        );
        assert_eq!(file.find("nope"), None);
        let cut = &phone.value[..phone.value.len() - 1];
        assert_eq!(file.find(cut), None);
        revoke(&path, "phone").unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            file.find(&phone.value),
            None,
            "a revoked token still let in"
        );
        assert!(file.find(&viewer.value).is_some());
        assert!(matches!(
            revoke(&path, "phone"),
            Err(TokenError::Missing(_))
        ));
        assert!(!format!("{phone:?}").contains(&phone.value));
    }

    #[test]
    fn an_older_clear_file_is_rewritten_hashed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("tokens");
        std::fs::write(&path, "read,control abc123\nread def456\n")
            .unwrap_or_else(|e| panic!("{e}"));
        let mut file = TokenFile::open(&path);
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        assert!(
            !text.contains("abc123") && !text.contains("def456"),
            "{text}"
        );
        assert_eq!(file.find("abc123").map(|e| e.name), Some("control".into()));
        assert_eq!(
            file.find("def456").map(|e| e.scopes),
            Some(vec![Scope::Read])
        );
    }

    #[test]
    fn concurrent_adds_keep_every_token() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("tokens");
        let start = std::sync::Barrier::new(8);
        std::thread::scope(|s| {
            for i in 0..8 {
                let (path, start) = (&path, &start);
                s.spawn(move || {
                    start.wait();
                    add(path, &format!("t{i}"), &[Scope::Read]).unwrap_or_else(|e| panic!("{e}"));
                });
            }
        });
        assert_eq!(list(&path).len(), 8);
    }
}
