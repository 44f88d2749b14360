//! The library's reads: the merged list and search (usage is in [`crate::usage`]).
//!
//! Managed sessions come from the store's `sessions` and `turns` tables, native ones
//! from `lib_sessions`; a native session Weft also manages (same agent and agent
//! session id) is listed once, as the managed one, with the native file's figures.
//!
//! Search asks FTS5 for the newest matching excerpts (its own LIMIT, so bm25 never
//! scores the whole hit set under a join), ranks those, then filters and groups them
//! by session. Native excerpts are found through the word index and its vocabulary
//! ([`crate::words`]); managed turns through their trigram index, where words shorter
//! than three characters cannot use it and are checked on the candidates' text.

use std::collections::HashSet;

use rusqlite::{params, Connection, OptionalExtension};
use weft_protocol::{LibraryHit, LibraryQuery, LibrarySearch, LibrarySession, Origin, Phase};

use crate::words;
use crate::LibraryError;

/// Marks where a match starts in a snippet.
pub const OPEN: &str = "«";
/// Marks where a match ends in a snippet.
pub const CLOSE: &str = "»";

const NATIVE_COLUMNS: &str = "s.session_key, s.agent, s.native_id,
    COALESCE(k.title, s.index_title, s.title), s.workdir, s.git_branch, s.model, s.turns,
    s.messages, s.created_at, s.updated_at, s.input_tokens, s.output_tokens,
    s.cache_read_tokens, s.cache_write_tokens, s.source_gone, COALESCE(k.archived, 0),
    COALESCE(k.pinned, 0), COALESCE(k.parent_key, s.parent_key),
    CASE WHEN k.parent_key IS NOT NULL THEN 'fork' ELSE s.relation END, s.home, s.account";

fn native_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LibrarySession> {
    Ok(LibrarySession {
        session_key: r.get(0)?,
        origin: Origin::Native,
        agent: r.get(1)?,
        session_id: r.get(2)?,
        title: r.get(3)?,
        workdir: r.get(4)?,
        git_branch: r.get(5)?,
        model: r.get(6)?,
        phase: None,
        turns: r.get(7)?,
        messages: r.get(8)?,
        created_at: r.get(9)?,
        updated_at: r.get(10)?,
        input_tokens: r.get::<_, i64>(11)? as u64,
        output_tokens: r.get::<_, i64>(12)? as u64,
        cache_read_tokens: r.get::<_, i64>(13)? as u64,
        cache_write_tokens: r.get::<_, i64>(14)? as u64,
        source_gone: r.get(15)?,
        archived: r.get(16)?,
        pinned: r.get(17)?,
        parent_key: r.get(18)?,
        relation: r.get(19)?,
        home: r.get(20)?,
        account: r.get(21)?,
    })
}

/// The folder as given and as the kernel stores it (resolved), to match either.
fn workdir_forms(w: Option<&str>) -> (Option<String>, Option<String>) {
    match w {
        None => (None, None),
        Some(w) => {
            let canon = std::fs::canonicalize(w)
                .map(|p| p.to_string_lossy().into_owned())
                .unwrap_or_else(|_| w.to_string());
            (Some(w.trim_end_matches('/').to_string()), Some(canon))
        }
    }
}

/// One native session by key.
pub fn native_session(
    conn: &Connection,
    key: &str,
) -> Result<Option<LibrarySession>, LibraryError> {
    let sql = format!(
        "SELECT {NATIVE_COLUMNS} FROM lib_sessions s LEFT JOIN lib_marks k ON k.session_key = s.session_key
         WHERE s.session_key = ?1"
    );
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([key], native_row)
        .optional()?)
}

// A managed session's turns: Weft's own, or the native file's when it has more (a
// session Weft adopted or forked has its earlier turns there), or, for a fork whose
// agent has not written its file yet, the turns it keeps of its parent's.
const MANAGED_COLUMNS: &str =
    "m.session_key, m.agent, m.session_id, COALESCE(k.title, m.title), m.workdir,
    COALESCE(m.model, n.model), m.created_at, m.updated_at,
    (SELECT COUNT(*) FROM turns t WHERE t.session_key = m.session_key),
    (SELECT t.status FROM turns t WHERE t.session_key = m.session_key ORDER BY t.n DESC LIMIT 1),
    n.git_branch, COALESCE(n.messages, 0), COALESCE(n.input_tokens, 0),
    COALESCE(n.output_tokens, 0), COALESCE(n.cache_read_tokens, 0),
    COALESCE(n.cache_write_tokens, 0), COALESCE(n.source_gone, 0),
    COALESCE(k.archived, 0), COALESCE(k.pinned, 0), COALESCE(k.parent_key, n.parent_key),
    CASE WHEN k.parent_key IS NOT NULL THEN 'fork' ELSE n.relation END, n.home, m.account,
    COALESCE(n.turns, CASE WHEN json_valid(m.fork) THEN json_extract(m.fork, '$.turns') END, 0)";

const MANAGED_FROM: &str = "FROM sessions m
    LEFT JOIN lib_sessions n ON n.agent = m.agent AND n.native_id = m.session_id
    LEFT JOIN lib_marks k ON k.session_key = m.session_key";

fn managed_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<LibrarySession> {
    let status: Option<String> = r.get(9)?;
    let phase = match status.as_deref() {
        None => Phase::Idle,
        Some("running") => Phase::Streaming,
        Some(_) => Phase::Done,
    };
    let own: u32 = r.get(8)?;
    let native: i64 = r.get(23)?;
    let native = u32::try_from(native).unwrap_or(0);
    let pending = r.get::<_, Option<String>>(2)?.is_none();
    Ok(LibrarySession {
        session_key: r.get(0)?,
        origin: Origin::Managed,
        agent: r.get(1)?,
        session_id: r.get(2)?,
        title: r.get(3)?,
        workdir: r.get(4)?,
        model: r.get(5)?,
        created_at: r.get(6)?,
        updated_at: r.get(7)?,
        turns: if pending {
            own + native
        } else {
            own.max(native)
        },
        phase: Some(phase),
        git_branch: r.get(10)?,
        messages: r.get(11)?,
        input_tokens: r.get::<_, i64>(12)? as u64,
        output_tokens: r.get::<_, i64>(13)? as u64,
        cache_read_tokens: r.get::<_, i64>(14)? as u64,
        cache_write_tokens: r.get::<_, i64>(15)? as u64,
        source_gone: r.get(16)?,
        archived: r.get(17)?,
        pinned: r.get(18)?,
        parent_key: r.get(19)?,
        relation: r.get(20)?,
        home: r.get(21)?,
        account: r.get(22)?,
    })
}

/// One managed session by key, as listed.
pub fn managed_session(
    conn: &Connection,
    key: &str,
) -> Result<Option<LibrarySession>, LibraryError> {
    let sql = format!("SELECT {MANAGED_COLUMNS} {MANAGED_FROM} WHERE m.session_key = ?1");
    Ok(conn
        .prepare_cached(&sql)?
        .query_row([key], managed_row)
        .optional()?)
}

/// Sessions, pinned first then newest first.
pub fn list(conn: &Connection, q: &LibraryQuery) -> Result<Vec<LibrarySession>, LibraryError> {
    let limit = q.limit.unwrap_or(200).clamp(1, 10_000) as usize;
    let offset = q.offset.unwrap_or(0) as usize;
    let want = (limit + offset) as i64;
    let (raw, canon) = workdir_forms(q.workdir.as_deref());
    let mut out = Vec::new();
    if q.origin != Some(Origin::Managed) {
        let sql = format!(
            "SELECT {NATIVE_COLUMNS} FROM lib_sessions s LEFT JOIN lib_marks k ON k.session_key = s.session_key
             WHERE (s.relation IS NULL OR s.relation != 'subagent')
               AND (s.turns > 0 OR s.title != '')
               AND (?1 IS NULL OR s.workdir = ?1 OR s.workdir = ?2)
               AND (?3 IS NULL OR s.agent = ?3)
               AND (?4 OR COALESCE(k.archived, 0) = 0)
               AND COALESCE(k.hidden, 0) = 0
               AND NOT EXISTS (SELECT 1 FROM sessions m WHERE m.agent = s.agent AND m.session_id = s.native_id)
             ORDER BY COALESCE(k.pinned, 0) DESC, s.updated_at DESC LIMIT ?5"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![raw, canon, q.agent, q.archived, want], native_row)?;
        for r in rows {
            out.push(r?);
        }
    }
    if q.origin != Some(Origin::Native) {
        let sql = format!(
            "SELECT {MANAGED_COLUMNS} {MANAGED_FROM}
             WHERE (?1 IS NULL OR m.workdir = ?1 OR m.workdir = ?2)
               AND (?3 IS NULL OR m.agent = ?3)
               AND (?4 OR COALESCE(k.archived, 0) = 0)
               AND COALESCE(k.hidden, 0) = 0
             ORDER BY COALESCE(k.pinned, 0) DESC, m.updated_at DESC, m.session_key LIMIT ?5"
        );
        let mut stmt = conn.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![raw, canon, q.agent, q.archived, want], managed_row)?;
        for r in rows {
            out.push(r?);
        }
    }
    out.sort_by(|a, b| {
        b.pinned
            .cmp(&a.pinned)
            .then(b.updated_at.cmp(&a.updated_at))
            .then(a.session_key.cmp(&b.session_key))
    });
    Ok(out.into_iter().skip(offset).take(limit).collect())
}

/// The terms of a query: `"quoted words"` stay together; the rest split on spaces.
pub fn terms(query: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = query;
    while let Some(start) = rest.find('"') {
        out.extend(rest[..start].split_whitespace().map(str::to_string));
        let after = &rest[start + 1..];
        match after.find('"') {
            Some(end) => {
                let phrase = after[..end].trim();
                if !phrase.is_empty() {
                    out.push(phrase.to_string());
                }
                rest = &after[end + 1..];
            }
            None => {
                rest = after;
            }
        }
    }
    out.extend(rest.split_whitespace().map(str::to_string));
    out
}

fn fts_phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

fn contains_ci(hay: &str, needle: &str) -> bool {
    hay.to_lowercase().contains(&needle.to_lowercase())
}

/// The excerpt around the first match, every match marked.
pub fn snippet(text: &str, terms: &[String]) -> String {
    const AROUND: usize = 90;
    let lower = text.to_lowercase();
    // Lower-casing may change byte lengths outside ASCII: fall back to no window.
    let same = lower.len() == text.len();
    let mut marks: Vec<(usize, usize)> = Vec::new();
    if same {
        for t in terms {
            let t = t.to_lowercase();
            if t.is_empty() {
                continue;
            }
            let mut from = 0;
            while let Some(i) = lower[from..].find(&t) {
                let s = from + i;
                marks.push((s, s + t.len()));
                from = s + t.len();
            }
        }
    }
    marks.sort();
    let first = marks.first().map_or(0, |m| m.0);
    let mut start = first.saturating_sub(AROUND);
    while !text.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (first + AROUND * 2).min(text.len());
    while !text.is_char_boundary(end) {
        end += 1;
    }
    let mut out = String::new();
    if start > 0 {
        out.push('…');
    }
    let mut at = start;
    for (s, e) in marks {
        if s < at || e > end {
            continue;
        }
        out.push_str(&text[at..s]);
        out.push_str(OPEN);
        out.push_str(&text[s..e]);
        out.push_str(CLOSE);
        at = e;
    }
    out.push_str(&text[at..end]);
    if end < text.len() {
        out.push('…');
    }
    out.replace('\n', " ")
}

/// The word-index query for `terms` (all must match), `None` when no term has a word.
/// A one-word term matches any word of the vocabulary holding it (`config` finds
/// `parse_config`, `本語` finds `日本語のテキスト`); a term of several words is a phrase
/// whose first word may end a longer word and whose last may begin one.
fn word_expr(conn: &Connection, terms: &[String]) -> Result<Option<String>, LibraryError> {
    const WIDEN: usize = 64;
    let mut parts = Vec::new();
    for term in terms {
        let toks: Vec<String> = words::words(term).map(str::to_lowercase).collect();
        let Some(first) = toks.first() else { continue };
        let mut alts = vec![first.clone()];
        if toks.len() == 1 {
            for w in words::containing(conn, first, WIDEN)? {
                if !alts.contains(&w) {
                    alts.push(w);
                }
            }
            let any: Vec<String> = alts.iter().map(|a| fts_phrase(a)).collect();
            parts.push(format!("({})", any.join(" OR ")));
        } else {
            for w in words::containing(conn, first, WIDEN * 4)? {
                if w.ends_with(first.as_str()) && !alts.contains(&w) && alts.len() < 16 {
                    alts.push(w);
                }
            }
            let rest = toks[1..].join(" ");
            let any: Vec<String> = alts
                .iter()
                .map(|a| format!("{} *", fts_phrase(&format!("{a} {rest}"))))
                .collect();
            parts.push(format!("({})", any.join(" OR ")));
        }
    }
    Ok((!parts.is_empty()).then(|| parts.join(" AND ")))
}

/// A candidate excerpt, before grouping.
struct Candidate {
    rowid: i64,
}

/// Sessions matching every term, best first, each at its best excerpt.
pub fn search(conn: &Connection, s: &LibrarySearch) -> Result<Vec<LibraryHit>, LibraryError> {
    let terms = terms(&s.query);
    if terms.is_empty() {
        return Ok(Vec::new());
    }
    let limit = s.limit.unwrap_or(50).clamp(1, 500) as usize;
    let filtered =
        s.agent.is_some() || s.workdir.is_some() || s.since.is_some() || s.until.is_some();
    let long: Vec<&String> = terms.iter().filter(|t| t.chars().count() >= 3).collect();
    let short: Vec<&String> = terms.iter().filter(|t| t.chars().count() < 3).collect();
    // bm25 is computed for the newest PROBE matches only (FTS5 walks rowids in order
    // and stops at the LIMIT): a word found in 200,000 excerpts costs 4,000 scorings,
    // not 200,000. Native excerpts (positive rowids) and managed turns (negative) are
    // probed apart so neither crowds out the other.
    let probe: i64 = if filtered || !short.is_empty() {
        20_000
    } else {
        4_000
    };
    let mut scored: Vec<(i64, f64)> = Vec::new();
    // Native excerpts: the word index, each term widened to the words that hold it.
    if let Some(expr) = word_expr(conn, &terms)? {
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, bm25(lib_words) FROM lib_words WHERE lib_words MATCH ?1 ORDER BY rowid DESC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![expr, probe], |r| Ok((r.get(0)?, r.get(1)?)))?;
        for r in rows {
            scored.push(r?);
        }
    }
    // Managed turns: the trigram index they keep.
    if !long.is_empty() {
        let expr = long
            .iter()
            .map(|t| fts_phrase(t))
            .collect::<Vec<_>>()
            .join(" AND ");
        let mut stmt = conn.prepare_cached(
            "SELECT rowid, bm25(lib_fts) FROM lib_fts WHERE lib_fts MATCH ?1 AND rowid < 0 ORDER BY rowid ASC LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![expr, probe], |r| Ok((r.get(0)?, r.get(1)?)))?;
        for r in rows {
            scored.push(r?);
        }
    } else {
        let pattern = format!("%{}%", short[0].replace(['%', '_'], ""));
        let mut stmt = conn.prepare_cached(
            "SELECT rowid FROM lib_fts WHERE text LIKE ?1 AND rowid < 0 LIMIT ?2",
        )?;
        let rows = stmt.query_map(params![pattern, probe], |r| Ok((r.get(0)?, 0.0)))?;
        for r in rows {
            scored.push(r?);
        }
    }
    scored.sort_by(|a, b| a.1.total_cmp(&b.1));
    let candidates: Vec<Candidate> = scored
        .into_iter()
        .map(|(rowid, _)| Candidate { rowid })
        .collect();
    let (raw, canon) = workdir_forms(s.workdir.as_deref());
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let mut native_text = conn.prepare_cached("SELECT text FROM lib_docs WHERE id = ?1")?;
    let mut managed_text = conn.prepare_cached("SELECT text FROM lib_fts WHERE rowid = ?1")?;
    // A term of several words must appear as written (the word index matched its
    // words in order, whatever stood between them).
    let phrases: Vec<&String> = terms
        .iter()
        .filter(|t| words::words(t).nth(1).is_some())
        .collect();
    let mut native = conn.prepare_cached(
        "SELECT s.session_key, s.agent, COALESCE(k.title, s.index_title, s.title), s.workdir, d.turn, d.off, d.kind, d.at,
                (SELECT m.session_key FROM sessions m WHERE m.agent = s.agent AND m.session_id = s.native_id)
         FROM lib_docs d JOIN lib_sessions s ON s.id = d.session_id
         LEFT JOIN lib_marks k ON k.session_key = s.session_key
         WHERE d.id = ?1 AND COALESCE(k.hidden, 0) = 0",
    )?;
    let mut managed = conn.prepare_cached(
        "SELECT m.session_key, m.agent, COALESCE(k.title, m.title), m.workdir, t.n, t.task_id, t.started_at
         FROM turns t JOIN sessions m ON m.session_key = t.session_key
         LEFT JOIN lib_marks k ON k.session_key = m.session_key
         WHERE t.id = ?1 AND COALESCE(k.hidden, 0) = 0",
    )?;
    for c in candidates {
        let hit = if c.rowid > 0 {
            native
                .query_row([c.rowid], |r| {
                    let twin: Option<String> = r.get(8)?;
                    let origin = if twin.is_some() {
                        Origin::Managed
                    } else {
                        Origin::Native
                    };
                    Ok(LibraryHit {
                        session_key: twin.unwrap_or(r.get(0)?),
                        origin,
                        agent: r.get(1)?,
                        title: r.get(2)?,
                        workdir: r.get(3)?,
                        task_id: None,
                        turn: Some(r.get(4)?),
                        offset: Some(r.get::<_, i64>(5)? as u64),
                        kind: r.get(6)?,
                        snippet: String::new(),
                        at: r.get(7)?,
                    })
                })
                .optional()?
        } else {
            managed
                .query_row([-c.rowid], |r| {
                    Ok(LibraryHit {
                        session_key: r.get(0)?,
                        origin: Origin::Managed,
                        agent: r.get(1)?,
                        title: r.get(2)?,
                        workdir: r.get(3)?,
                        task_id: Some(r.get(5)?),
                        turn: Some(r.get(4)?),
                        offset: None,
                        kind: "turn".into(),
                        snippet: String::new(),
                        at: r.get(6)?,
                    })
                })
                .optional()?
        };
        let Some(mut hit) = hit else { continue };
        if seen.contains(&hit.session_key) {
            continue;
        }
        if s.agent.as_ref().is_some_and(|a| *a != hit.agent)
            || s.since.is_some_and(|t| hit.at < t)
            || s.until.is_some_and(|t| hit.at >= t)
        {
            continue;
        }
        if raw.is_some() && hit.workdir != raw && hit.workdir != canon {
            continue;
        }
        let text: String = if c.rowid > 0 {
            native_text.query_row([c.rowid], |r| r.get(0))?
        } else {
            managed_text.query_row([c.rowid], |r| r.get(0))?
        };
        let must: &[&String] = if c.rowid > 0 { &phrases } else { &short };
        if !must.iter().all(|t| contains_ci(&text, t)) {
            continue;
        }
        hit.snippet = snippet(&text, &terms);
        seen.insert(hit.session_key.clone());
        out.push(hit);
        if out.len() >= limit {
            break;
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn quoted_words_stay_together() {
        assert_eq!(
            terms("fix \"the parser\" now"),
            ["fix", "the parser", "now"]
        );
        assert_eq!(terms("\"open"), ["open".to_string()]);
    }

    #[test]
    fn snippets_mark_every_match() {
        let s = snippet(
            "we parse_config here and Parse_Config there",
            &["parse_config".into()],
        );
        assert_eq!(s, "we «parse_config» here and «Parse_Config» there");
        let cjk = snippet("日本語のテキスト", &["本語".into()]);
        assert_eq!(cjk, "日«本語»のテキスト");
    }
}
