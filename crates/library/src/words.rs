//! Words: how native excerpts are split for the word index, and the vocabulary that
//! lets a substring find the words holding it.
//!
//! `lib_words` (FTS5 `unicode61`, `_` a word character) indexes every excerpt by word:
//! about one token per six bytes, where a trigram index writes one per byte (the
//! trigram table was 57% of the index and most of the cold-index time). A query that
//! is not a whole word (`arse_conf`, `本語のテ`, a CJK run inside a longer one) is
//! answered through `lib_terms`: each distinct word once, with a trigram index over the
//! words themselves, so the substring picks the words that contain it and those are
//! looked up in `lib_words`. The vocabulary grows with distinct words, not with text.

use rusqlite::{params, Connection};
use rustc_hash::FxHashSet;

/// Words longer than this stay out of the vocabulary (hashes, base64): they are still
/// in the word index, found by the whole word.
pub const MAX_TERM_CHARS: usize = 48;
/// How many known words the indexer remembers before it forgets them all (a word seen
/// again is then probed once more in `lib_terms`): bounds memory.
const KNOWN_CAP: usize = 200_000;

/// The words of `text`, as `unicode61` with `tokenchars '_'` splits them (letters,
/// digits and `_`), lower-cased.
pub fn words(text: &str) -> impl Iterator<Item = &str> {
    text.split(|c: char| !(c.is_alphanumeric() || c == '_'))
        .filter(|w| !w.is_empty())
}

/// The distinct words of `texts` that belong in the vocabulary, lower-cased: worked
/// out by the reader (on the sweep's parsing thread), so the writer, which holds the
/// write lock, only looks each one up once.
pub fn distinct<'a>(texts: impl IntoIterator<Item = &'a str>) -> Vec<String> {
    let mut seen: FxHashSet<&'a str> = FxHashSet::default();
    let mut folded: FxHashSet<String> = FxHashSet::default();
    for text in texts {
        // Split as `words` does, a byte at a time where the text is ASCII (most of
        // it): decoding every char was most of the cost.
        let bytes = text.as_bytes();
        let mut i = 0;
        while i < bytes.len() {
            let start = i;
            // Lower-case ASCII letters, digits and `_` only: kept as they are.
            let mut plain = true;
            while i < bytes.len() {
                let b = bytes[i];
                if b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'_' {
                    i += 1;
                } else if b.is_ascii_uppercase() {
                    plain = false;
                    i += 1;
                } else if b < 0x80 {
                    break;
                } else {
                    let c = text[i..].chars().next().unwrap_or(' ');
                    if !c.is_alphanumeric() {
                        break;
                    }
                    plain = false;
                    i += c.len_utf8();
                }
            }
            if i == start {
                i += text[i..].chars().next().map_or(1, char::len_utf8);
                continue;
            }
            let w = &text[start..i];
            if w.len() > MAX_TERM_CHARS && w.chars().count() > MAX_TERM_CHARS {
                continue;
            }
            if plain {
                seen.insert(w);
            } else {
                folded.insert(w.to_lowercase());
            }
        }
    }
    folded.extend(seen.into_iter().map(str::to_string));
    folded.into_iter().collect()
}

/// The vocabulary writer: remembers the words written so far, so a common word costs
/// one hash lookup, not a B-tree probe.
#[derive(Default)]
pub struct Vocabulary {
    known: FxHashSet<String>,
    pending: FxHashSet<String>,
}

impl Vocabulary {
    /// Notes words (from [`distinct`]) to write at the next flush.
    pub fn add(&mut self, words: Vec<String>) {
        for w in words {
            if !self.known.contains(&w) {
                self.pending.insert(w);
            }
        }
    }

    /// Writes the words not yet in `lib_terms` (and their trigrams), inside the
    /// caller's transaction.
    pub fn flush(&mut self, conn: &Connection) -> rusqlite::Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        if self.known.len() + self.pending.len() > KNOWN_CAP {
            self.known.clear();
        }
        let mut insert =
            conn.prepare_cached("INSERT OR IGNORE INTO lib_terms (term) VALUES (?1)")?;
        let mut trigrams =
            conn.prepare_cached("INSERT INTO lib_terms_fts (rowid, term) VALUES (?1, ?2)")?;
        for w in self.pending.drain() {
            if insert.execute([&w])? == 1 {
                trigrams.execute(params![conn.last_insert_rowid(), w])?;
            }
            self.known.insert(w);
        }
        Ok(())
    }

    /// Forgets what was not written (a rolled-back transaction).
    pub fn forget_pending(&mut self) {
        self.pending.clear();
    }

    /// Forgets everything remembered (after a rollback the known words may not exist).
    pub fn reset(&mut self) {
        self.pending.clear();
        self.known.clear();
    }
}

/// Words of the vocabulary that contain `part` (lower-cased), shortest first, at most
/// `max`.
pub fn containing(conn: &Connection, part: &str, max: usize) -> rusqlite::Result<Vec<String>> {
    let part = part.to_lowercase();
    let mut out: Vec<String> = if part.chars().count() >= 3 {
        let mut stmt = conn.prepare_cached(
            "SELECT term FROM lib_terms_fts WHERE lib_terms_fts MATCH ?1 LIMIT 5000",
        )?;
        let rows = stmt.query_map([format!("\"{}\"", part.replace('"', "\"\""))], |r| {
            r.get::<_, String>(0)
        })?;
        rows.collect::<rusqlite::Result<_>>()?
    } else {
        let pattern = format!(
            "%{}%",
            part.replace('\\', "\\\\")
                .replace('%', "\\%")
                .replace('_', "\\_")
        );
        let mut stmt = conn.prepare_cached(
            "SELECT term FROM lib_terms WHERE term LIKE ?1 ESCAPE '\\' LIMIT 5000",
        )?;
        let rows = stmt.query_map([pattern], |r| r.get::<_, String>(0))?;
        rows.collect::<rusqlite::Result<_>>()?
    };
    out.retain(|t| t.to_lowercase().contains(&part));
    out.sort_by(|a, b| a.len().cmp(&b.len()).then_with(|| a.cmp(b)));
    out.truncate(max);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_like_unicode61_with_underscores_kept() {
        let w: Vec<&str> =
            words("run parse_config(x) — tokio::spawn 日本語のテキスト, ok").collect();
        assert_eq!(
            w,
            [
                "run",
                "parse_config",
                "x",
                "tokio",
                "spawn",
                "日本語のテキスト",
                "ok"
            ]
        );
    }

    #[test]
    fn distinct_words_are_the_words_split_lower_cased_once_each() {
        let texts = [
            "run parse_config(x) — tokio::spawn 日本語のテキスト, ok",
            "Run PARSE_config Ünïcode café; x_1 ok ok",
            "a\u{2014}b\u{3001}c naïve  \t\n 12ab",
            &"long".repeat(20),
        ];
        let mut fast = distinct(texts);
        fast.sort();
        let mut reference: Vec<String> = texts
            .iter()
            .flat_map(|t| words(t))
            .filter(|w| w.chars().count() <= MAX_TERM_CHARS)
            .map(str::to_lowercase)
            .collect();
        reference.sort();
        reference.dedup();
        assert_eq!(fast, reference);
        assert!(fast.contains(&"ünïcode".to_string()));
        assert!(!fast.iter().any(|w| w.starts_with("longlong")));
    }
}
