//! The full-text index over each turn's prompt and reply.
//!
//! `turns_fts` is a plain FTS5 table whose rowid is `turns.id`. A turn is indexed with
//! its prompt when it begins (so a running turn is found by what was asked) and again,
//! replacing that row, with its final text when it finishes or is recovered.

use rusqlite::{params, Connection};

/// Replaces the index row of turn `id`.
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
    Ok(())
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
