//! Tokens for WebSocket clients, each with its scopes, in `WEFT_HOME/tokens` (0600):
//! one `scope[,scope] token` per line. A control token is made on first use; a read
//! token only when asked for (`weft serve --print-token --read-only`). The Unix
//! socket needs none: only its owner can open it.

use std::io::Write;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

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

/// A fresh random secret: two v4 UUIDs, 244 random bits from the OS.
fn secret() -> String {
    format!(
        "{}{}",
        uuid::Uuid::new_v4().simple(),
        uuid::Uuid::new_v4().simple()
    )
}

/// The token with exactly `scopes`, made and saved if there is none.
pub fn ensure(path: &Path, scopes: &[Scope]) -> std::io::Result<Token> {
    let mut want = scopes.to_vec();
    want.sort();
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
}
