//! The library's reads: the merged list, and search's terms and snippets (search
//! itself is in [`crate::search`], usage in [`crate::usage`]).
//!
//! Managed sessions come from the store's `sessions` and `turns` tables, native ones
//! from `lib_sessions`; a native session Weft also manages (same agent and agent
//! session id) is listed once, as the managed one, with the native file's figures.

use rusqlite::{params, Connection, OptionalExtension};
use weft_protocol::{LibraryQuery, LibrarySession, Origin, Phase};

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
        worktree: None,
    })
}

/// The folder as given and as the kernel stores it (resolved), to match either.
pub(crate) fn workdir_forms(w: Option<&str>) -> (Option<String>, Option<String>) {
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
        worktree: None,
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

pub(crate) fn fts_phrase(term: &str) -> String {
    format!("\"{}\"", term.replace('"', "\"\""))
}

pub(crate) fn contains_ci(hay: &str, needle: &str) -> bool {
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
