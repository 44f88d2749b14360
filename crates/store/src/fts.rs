//! The full-text indexes over each turn's prompt and reply.
//!
//! `turns_fts` is a plain FTS5 table whose rowid is `turns.id`; the session library's
//! `lib_fts` (trigram) holds the same turn under rowid `-turns.id`, its reply cut to
//! [`LIB_TEXT_CHARS`]. A turn is indexed with its prompt when it begins (so a running
//! turn is found by what was asked) and again, replacing those rows, with its final text
//! when it finishes or is recovered.
//!
//! A finished turn's text is indexed in a transaction of its own after the one that
//! finished it (see `writer.rs`): tokenizing a long reply took longer than the rest of
//! its turn's writes together, and the turn's end (and every patch waiting on that
//! commit) waited for it. `fts_pending` names a turn finished but not yet indexed, in the
//! finishing transaction, so a crash between the two is caught up at the next open.

use rusqlite::{params, Connection};
use weft_protocol::UniversalSnapshot;

/// How much of a reply the library's trigram index keeps (characters, as SQLite's
/// `substr` counts them in the triggers this replaced).
pub(crate) const LIB_TEXT_CHARS: usize = 65536;

/// Replaces the index rows of turn `id`.
pub(crate) fn index_turn(
    conn: &Connection,
    id: i64,
    prompt: &str,
    text: &str,
) -> rusqlite::Result<()> {
    conn.prepare_cached("DELETE FROM turns_fts WHERE rowid = ?1")?
        .execute([id])?;
    conn.prepare_cached("INSERT INTO turns_fts (rowid, prompt, text) VALUES (?1, ?2, ?3)")?
        .execute(params![id, prompt, text])?;
    let cut = text
        .char_indices()
        .nth(LIB_TEXT_CHARS)
        .map_or(text, |(at, _)| &text[..at]);
    conn.prepare_cached("DELETE FROM lib_fts WHERE rowid = -?1")?
        .execute([id])?;
    conn.prepare_cached("INSERT INTO lib_fts (rowid, text) VALUES (-?1, ?2 || char(10) || ?3)")?
        .execute(params![id, prompt, cut])?;
    Ok(())
}

/// Marks turn `id` as finished but not yet indexed with its final text.
pub(crate) fn mark_due(conn: &Connection, id: i64) -> rusqlite::Result<()> {
    conn.prepare_cached("INSERT OR IGNORE INTO fts_pending (turn_id) VALUES (?1)")?
        .execute([id])?;
    Ok(())
}

/// Indexes a turn marked by [`mark_due`] and clears its mark.
pub(crate) fn index_due(
    conn: &Connection,
    id: i64,
    prompt: &str,
    text: &str,
) -> rusqlite::Result<()> {
    index_turn(conn, id, prompt, text)?;
    conn.prepare_cached("DELETE FROM fts_pending WHERE turn_id = ?1")?
        .execute([id])?;
    Ok(())
}

/// Indexes every turn a previous process finished but did not index (it stopped
/// between the two transactions), from the final snapshot in its row; returns how many.
/// A snapshot that does not parse is indexed by its prompt alone.
pub(crate) fn catch_up(conn: &mut Connection) -> rusqlite::Result<usize> {
    let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
    let due: Vec<(i64, Option<String>, Option<String>)> = tx
        .prepare(
            "SELECT p.turn_id, t.prompt, t.snapshot FROM fts_pending p
             LEFT JOIN turns t ON t.id = p.turn_id ORDER BY p.turn_id",
        )?
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
        .collect::<rusqlite::Result<_>>()?;
    for (id, prompt, snapshot) in &due {
        match prompt {
            Some(prompt) => {
                let text = snapshot
                    .as_deref()
                    .and_then(|s| serde_json::from_str::<UniversalSnapshot>(s).ok())
                    .map(|s| s.text)
                    .unwrap_or_default();
                index_due(&tx, *id, prompt, &text)?;
            }
            // The turn was deleted since.
            None => {
                tx.execute("DELETE FROM fts_pending WHERE turn_id = ?1", [id])?;
            }
        }
    }
    tx.commit()?;
    Ok(due.len())
}

/// Turns what a user typed into an FTS5 query: every word must occur, the last one as a
/// prefix (search as you type). Each word is quoted, so FTS5 operators and punctuation
/// in the input (`-`, `"`, `NEAR`, `:`) are searched for, never parsed as syntax.
/// `None` when there is no word to search for.
pub(crate) fn match_expression(query: &str) -> Option<String> {
    let words: Vec<String> = query
        .split_whitespace()
        .map(|w| format!("\"{}\"", w.replace('"', "\"\"")))
        .collect();
    if words.is_empty() {
        return None;
    }
    Some(format!("{}*", words.join(" ")))
}

#[cfg(test)]
mod tests {
    use super::match_expression;

    #[test]
    fn words_are_quoted_and_the_last_is_a_prefix() {
        assert_eq!(match_expression("  "), None);
        assert_eq!(
            match_expression("fix bug").as_deref(),
            Some("\"fix\" \"bug\"*")
        );
        assert_eq!(
            match_expression("say \"hi\" -x").as_deref(),
            Some("\"say\" \"\"\"hi\"\"\" \"-x\"*")
        );
    }
}
