//! Tokens for WebSocket clients, each with its scopes, in `WEFT_HOME/tokens` (0600):
//! one `scope[,scope] token` per line. A control token is made on first use; a read
//! token only when asked for (`weft serve --print-token --read-only`). The Unix
//! socket needs none: only its owner can open it.

use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

use weft_protocol::Scope;

/// A token and what it allows.
#[derive(Clone, PartialEq, Eq)]
pub struct Token {
    /// The secret.
    pub value: String,
    /// Its scopes.
    pub scopes: Vec<Scope>,
}

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Token")
            .field("scopes", &self.scopes)
            .finish_non_exhaustive()
    }
}

/// Every token in the file (none when it is missing).
pub fn load(path: &Path) -> Vec<Token> {
    let text = std::fs::read_to_string(path).unwrap_or_default();
    text.lines()
        .filter_map(|line| {
            let (scopes, value) = line.trim().split_once(' ')?;
            let scopes: Vec<Scope> = scopes.split(',').filter_map(Scope::parse).collect();
            (!scopes.is_empty() && !value.is_empty()).then(|| Token {
                value: value.trim().to_string(),
                scopes,
            })
        })
        .collect()
}

/// What tells one version of the tokens file from another: its inode, length and
/// modification time (`None`: no file).
type Stamp = Option<(u64, u64, Option<SystemTime>)>;

fn stamp(path: &Path) -> Stamp {
    let meta = std::fs::metadata(path).ok()?;
    Some((meta.ino(), meta.len(), meta.modified().ok()))
}

/// The tokens file as last read. A token that matches none is looked for again only
/// when the file changed since (a token made meanwhile by `weft serve --print-token`
/// works at once): a peer guessing tokens costs a `stat` each, not a read of the file.
pub struct TokenFile {
    path: PathBuf,
    tokens: Vec<Token>,
    stamp: Stamp,
}

impl TokenFile {
    /// Reads the file at `path` (none: no tokens yet).
    pub fn open(path: &Path) -> TokenFile {
        let mut file = TokenFile {
            path: path.to_path_buf(),
            tokens: Vec::new(),
            stamp: None,
        };
        file.reload();
        file
    }

    /// Reads the file again.
    pub fn reload(&mut self) {
        self.stamp = stamp(&self.path);
        self.tokens = load(&self.path);
    }

    /// The scopes `given` grants (see [`scopes_for`]).
    pub fn scopes_for(&mut self, given: &str) -> Option<Vec<Scope>> {
        if let Some(scopes) = scopes_for(&self.tokens, given) {
            return Some(scopes);
        }
        if stamp(&self.path) == self.stamp {
            return None;
        }
        self.reload();
        scopes_for(&self.tokens, given)
    }
}

/// A fresh random secret: two v4 UUIDs, 244 random bits from the OS.
fn secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The token with exactly `scopes`, made and saved if there is none. Under a lock
/// (`tokens.lock` beside the file): two first uses at once (`weft serve` and a
/// listener) must not each append a token of their own.
pub fn ensure(path: &Path, scopes: &[Scope]) -> std::io::Result<Token> {
    let mut want = scopes.to_vec();
    want.sort();
    let _lock = weft_workspace::files::lock(&path.with_extension("lock"))?;
    if let Some(found) = load(path).into_iter().find(|t| {
        let mut have = t.scopes.clone();
        have.sort();
        have == want
    }) {
        return Ok(found);
    }
    let token = Token {
        value: secret(),
        scopes: want,
    };
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)?;
    let names: Vec<&str> = token.scopes.iter().map(|s| s.as_str()).collect();
    writeln!(file, "{} {}", names.join(","), token.value)?;
    Ok(token)
}

/// The scopes `given` grants, compared with every token in constant time per byte (so
/// the time taken does not say how much of a guess matched).
pub fn scopes_for(tokens: &[Token], given: &str) -> Option<Vec<Scope>> {
    let mut found = None;
    for t in tokens {
        let same = t.value.len() == given.len()
            && t.value
                .bytes()
                .zip(given.bytes())
                .fold(0u8, |acc, (a, b)| acc | (a ^ b))
                == 0;
        if same {
            found = Some(t.scopes.clone());
        }
    }
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_are_made_once_per_scope_set_and_matched_exactly() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("tokens");
        let control =
            ensure(&path, &[Scope::Control, Scope::Read]).unwrap_or_else(|e| panic!("{e}"));
        let again = ensure(&path, &[Scope::Read, Scope::Control]).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(control, again);
        let read = ensure(&path, &[Scope::Read]).unwrap_or_else(|e| panic!("{e}"));
        assert_ne!(read.value, control.value);
        let all = load(&path);
        assert_eq!(scopes_for(&all, &read.value), Some(vec![Scope::Read]));
        assert_eq!(scopes_for(&all, "nope"), None);
        let cut = &control.value[..control.value.len() - 1];
        assert_eq!(scopes_for(&all, cut), None);
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&path).map(|m| m.permissions().mode() & 0o777);
        assert_eq!(mode.ok(), Some(0o600));
        assert!(!format!("{control:?}").contains(&control.value));
    }

    #[test]
    fn concurrent_first_uses_make_one_token() {
        // Rounds of threads let go at once: without the lock most rounds append several.
        for _ in 0..20 {
            let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
            let path = dir.path().join("tokens");
            let start = std::sync::Barrier::new(16);
            let made: Vec<Token> = std::thread::scope(|s| {
                let handles: Vec<_> = (0..16)
                    .map(|_| {
                        s.spawn(|| {
                            start.wait();
                            ensure(&path, &[Scope::Read, Scope::Control])
                        })
                    })
                    .collect();
                handles
                    .into_iter()
                    .map(|h| {
                        h.join()
                            .unwrap_or_else(|_| panic!("panicked"))
                            .unwrap_or_else(|e| panic!("{e}"))
                    })
                    .collect()
            });
            assert!(made.windows(2).all(|w| w[0] == w[1]));
            assert_eq!(load(&path).len(), 1);
        }
    }

    #[test]
    fn a_miss_reads_the_file_again_only_once_it_changed() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let path = dir.path().join("tokens");
        let mut file = TokenFile::open(&path);
        assert_eq!(file.scopes_for("guess"), None);
        let read = ensure(&path, &[Scope::Read]).unwrap_or_else(|e| panic!("{e}"));
        // Made after the file was read: found, the file having changed.
        assert_eq!(file.scopes_for(&read.value), Some(vec![Scope::Read]));
        // A token written behind our back without changing length, inode or time
        // is not looked for: misses cost no read.
        let before = std::fs::metadata(&path).unwrap_or_else(|e| panic!("{e}"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{e}"));
        let swapped = text.replace(&read.value, &"x".repeat(read.value.len()));
        std::fs::write(&path, swapped).unwrap_or_else(|e| panic!("{e}"));
        let times = std::fs::FileTimes::new()
            .set_modified(before.modified().unwrap_or_else(|e| panic!("{e}")));
        std::fs::File::options()
            .write(true)
            .open(&path)
            .and_then(|f| f.set_times(times))
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(file.scopes_for(&"x".repeat(read.value.len())), None);
        file.reload();
        assert_eq!(
            file.scopes_for(&"x".repeat(read.value.len())),
            Some(vec![Scope::Read])
        );
    }
}
