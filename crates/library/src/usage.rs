//! Usage rollups over the deduplicated usage events (`lib_usage`: each model call once,
//! Claude's repeats keyed by message id + request id): per day, week, month, model,
//! agent, account or workspace, and Claude's 5-hour billing blocks. They read
//! `lib_usage_hourly`, which triggers keep as the events are written, replaced or
//! dropped: a dashboard sums hours per session, not every model call.

use std::collections::BTreeMap;

use rusqlite::Connection;
use weft_protocol::{ModelCost, UsageBlock, UsageBy, UsageRow};

use crate::LibraryError;
use weft_agent_spec::prices::{price_of, Tokens};

/// A group's totals, folded one (group, model) sum at a time.
struct Fold {
    row: UsageRow,
    costs: BTreeMap<String, f64>,
}

impl Fold {
    fn new(key: String) -> Self {
        Self {
            row: UsageRow {
                key,
                calls: 0,
                input_tokens: 0,
                output_tokens: 0,
                cache_read_tokens: 0,
                cache_write_tokens: 0,
                cost_usd: None,
                unpriced_models: Vec::new(),
                cost_by_model: Vec::new(),
                cache_hit_rate: None,
                block: None,
            },
            costs: BTreeMap::new(),
        }
    }

    fn add(&mut self, model: &str, t: [u64; 5]) {
        let [calls, input, output, read, write] = t;
        let e = &mut self.row;
        e.calls += calls;
        e.input_tokens += input;
        e.output_tokens += output;
        e.cache_read_tokens += read;
        e.cache_write_tokens += write;
        let name = if model.is_empty() {
            "(unknown)".to_string()
        } else {
            model.to_string()
        };
        match price_of(model) {
            Some(p) => {
                let c = p.cost(Tokens {
                    input,
                    cache_read: read,
                    cache_write: write,
                    output,
                });
                e.cost_usd = Some(e.cost_usd.unwrap_or(0.0) + c);
                *self.costs.entry(name).or_default() += c;
            }
            None => {
                if !e.unpriced_models.contains(&name) {
                    e.unpriced_models.push(name);
                }
            }
        }
    }

    fn finish(self) -> UsageRow {
        let mut r = self.row;
        let all = r.input_tokens + r.cache_read_tokens + r.cache_write_tokens;
        r.cache_hit_rate = (all > 0).then(|| r.cache_read_tokens as f64 / all as f64);
        r.unpriced_models.sort();
        r.cost_by_model = self
            .costs
            .into_iter()
            .map(|(model, cost_usd)| ModelCost { model, cost_usd })
            .collect();
        r
    }
}

fn sums(r: &rusqlite::Row<'_>, from: usize) -> rusqlite::Result<[u64; 5]> {
    let mut t = [0u64; 5];
    for (i, v) in t.iter_mut().enumerate() {
        *v = r.get::<_, i64>(from + i)? as u64;
    }
    Ok(t)
}

/// Usage grouped by `by` since `since` (ms), each model call once.
pub fn usage(
    conn: &Connection,
    by: UsageBy,
    since: Option<i64>,
) -> Result<Vec<UsageRow>, LibraryError> {
    let group = match by {
        UsageBy::Day => "strftime('%Y-%m-%d', u.hour * 3600, 'unixepoch')",
        UsageBy::Week => "strftime('%Y-W%W', u.hour * 3600, 'unixepoch')",
        UsageBy::Month => "strftime('%Y-%m', u.hour * 3600, 'unixepoch')",
        UsageBy::Model => "u.model",
        UsageBy::Agent => "s.agent",
        UsageBy::Account => "COALESCE(s.account, s.home)",
        UsageBy::Workspace => "COALESCE(s.workdir, '')",
        UsageBy::Block => return blocks(conn, since, now_ms()),
    };
    let sql = format!(
        "SELECT {group} AS g, u.model, SUM(u.calls), SUM(u.input), SUM(u.output), SUM(u.cache_read), SUM(u.cache_write)
         FROM lib_usage_hourly u JOIN lib_sessions s ON s.id = u.session_id
         WHERE u.hour >= ?1
         GROUP BY g, u.model"
    );
    let mut stmt = conn.prepare(&sql)?;
    let rows = stmt.query_map([since_hour(since)], |r| {
        Ok((
            r.get::<_, Option<String>>(0)?.unwrap_or_default(),
            r.get::<_, String>(1)?,
            sums(r, 2)?,
        ))
    })?;
    let mut groups: BTreeMap<String, Fold> = BTreeMap::new();
    for row in rows {
        let (g, model, t) = row?;
        groups
            .entry(g.clone())
            .or_insert_with(|| Fold::new(g))
            .add(&model, t);
    }
    let mut out: Vec<UsageRow> = groups.into_values().map(Fold::finish).collect();
    if matches!(
        by,
        UsageBy::Model | UsageBy::Agent | UsageBy::Account | UsageBy::Workspace
    ) {
        out.sort_by(|a, b| {
            b.cost_usd
                .unwrap_or(-1.0)
                .total_cmp(&a.cost_usd.unwrap_or(-1.0))
                .then((b.input_tokens + b.output_tokens).cmp(&(a.input_tokens + a.output_tokens)))
        });
    }
    Ok(out)
}

/// The UTC hour `since` (ms) falls in: the rollup's unit.
fn since_hour(since: Option<i64>) -> i64 {
    since.map_or(i64::MIN, |t| t.div_euclid(HOUR_MS))
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_millis() as i64)
}

/// Length of a Claude billing block.
pub const BLOCK_MS: i64 = 5 * HOUR_MS;
const HOUR_MS: i64 = 3_600_000;

/// Claude's 5-hour billing blocks since `since`, oldest first, as ccusage counts them:
/// a block starts at the hour of the first call after the previous block ended and
/// lasts five hours. Calls are summed per hour and model (`lib_usage_hourly`); since a block starts
/// on the hour and lasts whole hours, an hour never straddles two blocks. The burn
/// rate is over the span from the block's first call to its last; the projection
/// (active block only) carries it to the block's end.
pub fn blocks(
    conn: &Connection,
    since: Option<i64>,
    now: i64,
) -> Result<Vec<UsageRow>, LibraryError> {
    let mut stmt = conn.prepare_cached(
        "SELECT u.hour, u.model, SUM(u.calls), SUM(u.input), SUM(u.output), SUM(u.cache_read),
                SUM(u.cache_write), MIN(u.first_at), MAX(u.last_at),
                strftime('%Y-%m-%dT%H:00Z', u.hour * 3600, 'unixepoch')
         FROM lib_usage_hourly u JOIN lib_sessions s ON s.id = u.session_id
         WHERE s.agent = 'claude' AND u.hour >= ?1
         GROUP BY u.hour, u.model ORDER BY u.hour",
    )?;
    let rows = stmt.query_map([since_hour(since)], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            sums(r, 2)?,
            r.get::<_, i64>(7)?,
            r.get::<_, i64>(8)?,
            r.get::<_, String>(9)?,
        ))
    })?;
    struct Open {
        fold: Fold,
        start: i64,
        first: i64,
        last: i64,
    }
    let mut out = Vec::new();
    let close = |b: Open, out: &mut Vec<UsageRow>| {
        let end = b.start + BLOCK_MS;
        let mut row = b.fold.finish();
        let tokens =
            row.input_tokens + row.output_tokens + row.cache_read_tokens + row.cache_write_tokens;
        let minutes = (b.last - b.first) as f64 / 60_000.0;
        let tpm = (minutes > 0.0).then(|| tokens as f64 / minutes);
        let cph = match (row.cost_usd, minutes > 0.0) {
            (Some(c), true) => Some(c / minutes * 60.0),
            _ => None,
        };
        let active = now >= b.start && now < end;
        let left = ((end - now).max(0)) as f64 / 60_000.0;
        row.block = Some(UsageBlock {
            start: b.start,
            end,
            first_at: b.first,
            last_at: b.last,
            active,
            tokens_per_minute: tpm,
            cost_per_hour: cph,
            projected_tokens: if active {
                Some(tokens + tpm.map_or(0.0, |t| t * left) as u64)
            } else {
                None
            },
            projected_cost_usd: match (active, row.cost_usd) {
                (true, Some(c)) => Some(c + cph.map_or(0.0, |r| r * left / 60.0)),
                _ => None,
            },
        });
        out.push(row);
    };
    let mut cur: Option<Open> = None;
    for row in rows {
        let (h, model, t, first, last, key) = row?;
        let hour = h * HOUR_MS;
        if cur.as_ref().is_none_or(|b| hour >= b.start + BLOCK_MS) {
            if let Some(b) = cur.take() {
                close(b, &mut out);
            }
            cur = Some(Open {
                fold: Fold::new(key),
                start: hour,
                first,
                last,
            });
        }
        if let Some(b) = cur.as_mut() {
            b.fold.add(&model, t);
            b.first = b.first.min(first);
            b.last = b.last.max(last);
        }
    }
    if let Some(b) = cur.take() {
        close(b, &mut out);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use rusqlite::params;

    #[test]
    fn billing_blocks_start_on_the_hour_last_five_hours_and_project_the_active_one() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let db = dir.path().join("weft.db");
        drop(weft_store::SqliteStore::open(&db).unwrap_or_else(|e| panic!("{e}")));
        let conn = Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
        conn.execute_batch(
            "INSERT INTO lib_sessions (id, session_key, agent, native_id, home, title, title_src,
                 created_at, updated_at, messages, turns) VALUES
                 (1, 'claude:a', 'claude', 'a', '/h', '', 'none', 0, 0, 0, 0),
                 (2, 'codex:b', 'codex', 'b', '/c', '', 'none', 0, 0, 0, 0);",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let h = |hour: i64, min: i64| hour * HOUR_MS + min * 60_000;
        for (k, (sid, at, out)) in [
            (1, h(10, 15), 100),
            (1, h(10, 45), 100),
            (2, h(11, 0), 5000), // codex: not in Claude's blocks
            (1, h(14, 59), 100), // still the 10:00 block (ends 15:00)
            (1, h(15, 10), 50),  // a new block at 15:00
            (1, h(23, 0), 60),   // after a gap: a block at 23:00
            (1, h(23, 20), 60),
        ]
        .into_iter()
        .enumerate()
        {
            conn.execute(
                "INSERT INTO lib_usage (key, session_id, at, model, input, output, cache_read, cache_write, reasoning)
                 VALUES (?1, ?2, ?3, 'claude-sonnet-4-5', 0, ?4, 0, 0, 0)",
                params![format!("k{k}"), sid, at, out],
            )
            .unwrap_or_else(|e| panic!("{e}"));
        }
        let b = blocks(&conn, None, h(23, 30)).unwrap_or_else(|e| panic!("{e}"));
        let starts: Vec<i64> = b
            .iter()
            .map(|r| r.block.as_ref().map_or(-1, |x| x.start))
            .collect();
        assert_eq!(starts, [h(10, 0), h(15, 0), h(23, 0)]);
        assert_eq!(b[0].key, "1970-01-01T10:00Z");
        assert_eq!((b[0].calls, b[0].output_tokens), (3, 300));
        let first = b[0].block.clone().unwrap_or_else(|| panic!("no block"));
        assert!(!first.active && first.projected_tokens.is_none());
        let tpm = first.tokens_per_minute.unwrap_or_default();
        assert!((tpm - 300.0 / 284.0).abs() < 1e-9, "{tpm}");
        assert!(b[1]
            .block
            .as_ref()
            .is_some_and(|x| x.tokens_per_minute.is_none()));
        let last = b[2].block.clone().unwrap_or_else(|| panic!("no block"));
        assert!(last.active);
        // 120 tokens over 20 minutes = 6/min; 4.5 hours (270 min) left.
        assert_eq!(last.projected_tokens, Some(120 + 6 * 270));
        assert!(last.cost_per_hour.is_some() && last.projected_cost_usd.is_some());

        // The hourly rollup follows a replaced and a dropped event.
        conn.execute_batch(
            "UPDATE lib_usage SET output = 1000, model = 'claude-opus-4-1' WHERE key = 'k0';
             DELETE FROM lib_usage WHERE key = 'k4';",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let raw: Vec<(String, i64, i64)> = conn
            .prepare(
                "SELECT s.agent, COUNT(*), SUM(u.output) FROM lib_usage u JOIN lib_sessions s
                 ON s.id = u.session_id GROUP BY s.agent ORDER BY s.agent",
            )
            .and_then(|mut st| {
                st.query_map([], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?
                    .collect()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let rolled = usage(&conn, UsageBy::Agent, None).unwrap_or_else(|e| panic!("{e}"));
        let mut rolled: Vec<(String, i64, i64)> = rolled
            .iter()
            .map(|r| (r.key.clone(), r.calls as i64, r.output_tokens as i64))
            .collect();
        rolled.sort();
        assert_eq!(rolled, raw);
        let models = usage(&conn, UsageBy::Model, None).unwrap_or_else(|e| panic!("{e}"));
        assert!(models
            .iter()
            .any(|r| r.key == "claude-opus-4-1" && r.output_tokens == 1000));
        let b = blocks(&conn, None, h(23, 30)).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(
            b.len(),
            2,
            "the 15:00 block had one call, now dropped: {b:?}"
        );
    }
}
