//! Search over native excerpts and managed turns in one query.
//!
//! FTS5 is asked for the newest matching excerpts (its own LIMIT, so nothing scores the
//! whole hit set under a join); those are ordered, then filtered and grouped by session.
//! Native excerpts are found through the word index and its vocabulary
//! ([`crate::words`]); managed turns through their trigram index, where words shorter
//! than three characters cannot use it and are checked on the candidates' text.
//!
//! Words rank by bm25. A phrase (an identifier like `tokio::spawn` is one) lists its
//! most recently indexed matches first (rowid order; an appended line is the newest),
//! native excerpts and managed turns interleaved by time: bm25 would first count every row holding the phrase, checking
//! word positions in each (70 of 100 ms for `"parser config"` over a 2 GB store), where
//! the newest matches are found by walking rowids back and stopping at the probe.

use std::collections::{HashSet, VecDeque};

use rusqlite::{params, CachedStatement, Connection, OptionalExtension};
use weft_protocol::{LibraryHit, LibrarySearch, Origin};

use crate::query::{contains_ci, fts_phrase, snippet, terms, workdir_forms};
use crate::words;
use crate::LibraryError;

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

/// Whether `term` is a phrase (more than one word).
fn is_phrase(term: &str) -> bool {
    words::words(term).nth(1).is_some()
}

/// Reads a candidate's session and text.
struct Lookup<'c> {
    native: CachedStatement<'c>,
    managed: CachedStatement<'c>,
    native_text: CachedStatement<'c>,
    managed_text: CachedStatement<'c>,
}

impl<'c> Lookup<'c> {
    fn new(conn: &'c Connection) -> Result<Self, LibraryError> {
        Ok(Lookup {
            native: conn.prepare_cached(
                "SELECT s.session_key, s.agent, COALESCE(k.title, s.index_title, s.title), s.workdir, d.turn, d.off, d.kind, d.at,
                        (SELECT m.session_key FROM sessions m WHERE m.agent = s.agent AND m.session_id = s.native_id)
                 FROM lib_docs d JOIN lib_sessions s ON s.id = d.session_id
                 LEFT JOIN lib_marks k ON k.session_key = s.session_key
                 WHERE d.id = ?1 AND COALESCE(k.hidden, 0) = 0",
            )?,
            managed: conn.prepare_cached(
                "SELECT m.session_key, m.agent, COALESCE(k.title, m.title), m.workdir, t.n, t.task_id, t.started_at
                 FROM turns t JOIN sessions m ON m.session_key = t.session_key
                 LEFT JOIN lib_marks k ON k.session_key = m.session_key
                 WHERE t.id = ?1 AND COALESCE(k.hidden, 0) = 0",
            )?,
            native_text: conn.prepare_cached("SELECT text FROM lib_docs WHERE id = ?1")?,
            managed_text: conn.prepare_cached("SELECT text FROM lib_fts WHERE rowid = ?1")?,
        })
    }

    /// The hit a candidate excerpt (positive rowid) or managed turn (negative) makes,
    /// without its snippet; `None` for a hidden session's.
    fn hit(&mut self, rowid: i64) -> Result<Option<LibraryHit>, LibraryError> {
        Ok(if rowid > 0 {
            self.native
                .query_row([rowid], |r| {
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
            self.managed
                .query_row([-rowid], |r| {
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
        })
    }

    fn text(&mut self, rowid: i64) -> Result<String, LibraryError> {
        let stmt = if rowid > 0 {
            &mut self.native_text
        } else {
            &mut self.managed_text
        };
        Ok(stmt.query_row([rowid], |r| r.get(0))?)
    }
}

/// Candidates in the order they are judged: by score, or (for a phrase) the newer head
/// of the two lists next (native excerpts by rowid, managed turns newest first). A candidate's hit is read
/// once.
enum Order {
    Scored(std::vec::IntoIter<i64>),
    ByTime {
        native: VecDeque<i64>,
        managed: VecDeque<i64>,
        heads: Box<[Option<(i64, LibraryHit)>; 2]>,
    },
}

impl Order {
    fn next(&mut self, look: &mut Lookup<'_>) -> Result<Option<(i64, LibraryHit)>, LibraryError> {
        match self {
            Order::Scored(rows) => {
                for rowid in rows.by_ref() {
                    if let Some(hit) = look.hit(rowid)? {
                        return Ok(Some((rowid, hit)));
                    }
                }
                Ok(None)
            }
            Order::ByTime {
                native,
                managed,
                heads,
            } => {
                for (head, list) in heads.iter_mut().zip([native, managed]) {
                    while head.is_none() {
                        let Some(rowid) = list.pop_front() else { break };
                        *head = look.hit(rowid)?.map(|h| (rowid, h));
                    }
                }
                let newer = match heads.as_ref() {
                    [Some((_, n)), Some((_, m))] => usize::from(m.at > n.at),
                    [None, Some(_)] => 1,
                    _ => 0,
                };
                Ok(heads[newer].take())
            }
        }
    }
}

/// The (rowid, score) rows `sql` gives for its match argument and probe limit.
fn probe_rows(
    conn: &Connection,
    sql: &str,
    arg: &str,
    probe: i64,
) -> Result<Vec<(i64, f64)>, LibraryError> {
    let mut stmt = conn.prepare_cached(sql)?;
    let rows = stmt.query_map(params![arg, probe], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Sessions matching every term, best first (bm25; for a phrase, the most recently
/// indexed first), each at its best excerpt.
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
    let by_time = terms.iter().any(|t| is_phrase(t));
    let mut native: Vec<(i64, f64)> = Vec::new();
    // Native excerpts: the word index, each term widened to the words that hold it.
    if let Some(expr) = word_expr(conn, &terms)? {
        let sql = if by_time {
            "SELECT rowid, 0.0 FROM lib_words WHERE lib_words MATCH ?1 ORDER BY rowid DESC LIMIT ?2"
        } else {
            "SELECT rowid, bm25(lib_words) FROM lib_words WHERE lib_words MATCH ?1 ORDER BY rowid DESC LIMIT ?2"
        };
        native = probe_rows(conn, sql, &expr, probe)?;
    }
    // Managed turns: the trigram index they keep, newest first (rowid = -turns.id).
    let managed = if !long.is_empty() {
        let expr = long
            .iter()
            .map(|t| fts_phrase(t))
            .collect::<Vec<_>>()
            .join(" AND ");
        let sql = if by_time {
            "SELECT rowid, 0.0 FROM lib_fts WHERE lib_fts MATCH ?1 AND rowid < 0 ORDER BY rowid ASC LIMIT ?2"
        } else {
            "SELECT rowid, bm25(lib_fts) FROM lib_fts WHERE lib_fts MATCH ?1 AND rowid < 0 ORDER BY rowid ASC LIMIT ?2"
        };
        probe_rows(conn, sql, &expr, probe)?
    } else {
        let pattern = format!("%{}%", short[0].replace(['%', '_'], ""));
        probe_rows(
            conn,
            "SELECT rowid, 0.0 FROM lib_fts WHERE text LIKE ?1 AND rowid < 0 ORDER BY rowid ASC LIMIT ?2",
            &pattern,
            probe,
        )?
    };
    let mut order = if by_time {
        Order::ByTime {
            native: native.into_iter().map(|(r, _)| r).collect(),
            managed: managed.into_iter().map(|(r, _)| r).collect(),
            heads: Box::new([None, None]),
        }
    } else {
        let mut scored = native;
        scored.extend(managed);
        scored.sort_by(|a, b| a.1.total_cmp(&b.1));
        Order::Scored(
            scored
                .into_iter()
                .map(|(r, _)| r)
                .collect::<Vec<_>>()
                .into_iter(),
        )
    };
    let (raw, canon) = workdir_forms(s.workdir.as_deref());
    let mut seen: HashSet<String> = HashSet::new();
    let mut out = Vec::new();
    let mut look = Lookup::new(conn)?;
    // A term of several words must appear as written (the word index matched its
    // words in order, whatever stood between them).
    let phrases: Vec<&String> = terms.iter().filter(|t| is_phrase(t)).collect();
    while let Some((rowid, mut hit)) = order.next(&mut look)? {
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
        let text = look.text(rowid)?;
        let must: &[&String] = if rowid > 0 { &phrases } else { &short };
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
