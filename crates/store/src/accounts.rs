//! Account records and their daily usage, on a connection of their own.
//!
//! Accounts change rarely (added, renamed, a limit seen), so they skip the session
//! writer's queue: each call is one short transaction on this table's own connection
//! to the same WAL database. Only public records are kept here — an account's secret
//! lives in the OS secret store, and nothing in this module ever receives one.

use std::path::Path;

use parking_lot::Mutex;
use rusqlite::{params, Connection, OptionalExtension};
use weft_protocol::{AccountInfo, AccountUsageDay};

use crate::{schema, StoreError};

/// The `accounts` and `account_usage` tables.
pub struct AccountTable {
    conn: Mutex<Connection>,
}

impl std::fmt::Debug for AccountTable {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("AccountTable").finish_non_exhaustive()
    }
}

/// What one turn adds to an account's day.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct UsageDelta {
    /// Input tokens.
    pub input_tokens: u64,
    /// Output tokens.
    pub output_tokens: u64,
    /// Cache reads.
    pub cache_read_tokens: u64,
    /// Cache writes.
    pub cache_write_tokens: u64,
    /// Its cost, when known.
    pub cost_usd: Option<f64>,
}

impl AccountTable {
    /// Opens the tables of the database at `path` (creating and migrating it like
    /// [`crate::SqliteStore::open`]).
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut conn = Connection::open(path).map_err(open_err)?;
        schema::configure(&conn).map_err(open_err)?;
        schema::migrate(&mut conn, path)?;
        // A table of this module's own, made here rather than by a shared migration:
        // it holds one flag per session and nothing else reads it.
        conn.execute_batch(
            "CREATE TABLE IF NOT EXISTS account_auto_switch (
                 session_key TEXT PRIMARY KEY NOT NULL,
                 enabled INTEGER NOT NULL
             )",
        )
        .map_err(open_err)?;
        Ok(Self {
            conn: Mutex::new(conn),
        })
    }

    /// Whether session `session_key` switches accounts by itself on a used-up limit.
    pub fn auto_switch(&self, session_key: &str) -> Result<bool, StoreError> {
        let enabled: Option<i64> = self
            .conn
            .lock()
            .query_row(
                "SELECT enabled FROM account_auto_switch WHERE session_key = ?1",
                [session_key],
                |r| r.get(0),
            )
            .optional()?;
        Ok(enabled.unwrap_or(0) != 0)
    }

    /// Turns a session's auto-switch on or off.
    pub fn set_auto_switch(&self, session_key: &str, enabled: bool) -> Result<(), StoreError> {
        self.conn.lock().execute(
            "INSERT INTO account_auto_switch (session_key, enabled) VALUES (?1, ?2)
             ON CONFLICT (session_key) DO UPDATE SET enabled = excluded.enabled",
            params![session_key, i64::from(enabled)],
        )?;
        Ok(())
    }

    /// Creates or replaces an account's record.
    pub fn put(&self, account: &AccountInfo) -> Result<(), StoreError> {
        let record = serde_json::to_string(account)?;
        self.conn.lock().execute(
            "INSERT INTO accounts (id, agent, kind, label, record, created_at, updated_at)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
             ON CONFLICT (id) DO UPDATE SET agent = excluded.agent, kind = excluded.kind,
                 label = excluded.label, record = excluded.record,
                 updated_at = excluded.updated_at",
            params![
                account.id,
                account.agent,
                account.kind,
                account.label,
                record,
                account.created_at,
                account.updated_at
            ],
        )?;
        Ok(())
    }

    /// One account.
    pub fn get(&self, id: &str) -> Result<Option<AccountInfo>, StoreError> {
        let record: Option<String> = self
            .conn
            .lock()
            .query_row("SELECT record FROM accounts WHERE id = ?1", [id], |r| {
                r.get(0)
            })
            .optional()?;
        Ok(record.map(|r| serde_json::from_str(&r)).transpose()?)
    }

    /// Every account, oldest first (a row that no longer parses is skipped).
    pub fn list(&self) -> Result<Vec<AccountInfo>, StoreError> {
        let conn = self.conn.lock();
        let mut statement =
            conn.prepare_cached("SELECT record FROM accounts ORDER BY created_at, id")?;
        let rows = statement.query_map([], |r| r.get::<_, String>(0))?;
        let mut out = Vec::new();
        for row in rows {
            match serde_json::from_str(&row?) {
                Ok(a) => out.push(a),
                Err(e) => tracing::warn!("skipping an account record that does not parse: {e}"),
            }
        }
        Ok(out)
    }

    /// Forgets an account (its usage stays, under its id).
    pub fn delete(&self, id: &str) -> Result<bool, StoreError> {
        Ok(self
            .conn
            .lock()
            .execute("DELETE FROM accounts WHERE id = ?1", [id])?
            > 0)
    }

    /// Adds one turn's usage to `account`'s `day` (`YYYY-MM-DD`).
    pub fn add_usage(&self, account: &str, day: &str, d: &UsageDelta) -> Result<(), StoreError> {
        let cost = d.cost_usd.unwrap_or(0.0);
        let unpriced = i64::from(d.cost_usd.is_none());
        self.conn.lock().execute(
            "INSERT INTO account_usage (account_id, day, input_tokens, output_tokens,
                 cache_read_tokens, cache_write_tokens, cost_usd, unpriced_turns, turns)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, 1)
             ON CONFLICT (account_id, day) DO UPDATE SET
                 input_tokens = input_tokens + excluded.input_tokens,
                 output_tokens = output_tokens + excluded.output_tokens,
                 cache_read_tokens = cache_read_tokens + excluded.cache_read_tokens,
                 cache_write_tokens = cache_write_tokens + excluded.cache_write_tokens,
                 cost_usd = cost_usd + excluded.cost_usd,
                 unpriced_turns = unpriced_turns + excluded.unpriced_turns,
                 turns = turns + 1",
            params![
                account,
                day,
                d.input_tokens as i64,
                d.output_tokens as i64,
                d.cache_read_tokens as i64,
                d.cache_write_tokens as i64,
                cost,
                unpriced
            ],
        )?;
        Ok(())
    }

    /// Usage per account per day, newest day first; only `account`'s when given.
    pub fn usage(&self, account: Option<&str>) -> Result<Vec<AccountUsageDay>, StoreError> {
        let conn = self.conn.lock();
        let mut statement = conn.prepare_cached(
            "SELECT account_id, day, input_tokens, output_tokens, cache_read_tokens,
                    cache_write_tokens, cost_usd, unpriced_turns, turns
             FROM account_usage WHERE ?1 IS NULL OR account_id = ?1
             ORDER BY day DESC, account_id",
        )?;
        let rows = statement.query_map([account], |r| {
            Ok(AccountUsageDay {
                account: r.get(0)?,
                day: r.get(1)?,
                input_tokens: r.get::<_, i64>(2)?.max(0) as u64,
                output_tokens: r.get::<_, i64>(3)?.max(0) as u64,
                cache_read_tokens: r.get::<_, i64>(4)?.max(0) as u64,
                cache_write_tokens: r.get::<_, i64>(5)?.max(0) as u64,
                cost_usd: r.get(6)?,
                unpriced_turns: r.get::<_, i64>(7)?.max(0) as u32,
                turns: r.get::<_, i64>(8)?.max(0) as u32,
            })
        })?;
        Ok(rows.collect::<rusqlite::Result<_>>()?)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn records_round_trip_and_usage_adds_up_per_day() {
        let dir = tempfile::tempdir().unwrap();
        let table = AccountTable::open(&dir.path().join("weft.db")).unwrap();
        let mut a = AccountInfo {
            id: "acct-1".into(),
            agent: "claude".into(),
            kind: "api-key".into(),
            label: "work".into(),
            created_at: 1,
            updated_at: 1,
            ..Default::default()
        };
        table.put(&a).unwrap();
        a.label = "home".into();
        table.put(&a).unwrap();
        assert_eq!(table.list().unwrap(), vec![a.clone()]);
        assert_eq!(table.get("acct-1").unwrap(), Some(a));
        let d = UsageDelta {
            input_tokens: 10,
            output_tokens: 2,
            cost_usd: Some(0.5),
            ..Default::default()
        };
        table.add_usage("acct-1", "2026-12-01", &d).unwrap();
        table
            .add_usage(
                "acct-1",
                "2026-12-01",
                &UsageDelta {
                    cost_usd: None,
                    ..d.clone()
                },
            )
            .unwrap();
        let days = table.usage(Some("acct-1")).unwrap();
        assert_eq!(days.len(), 1);
        assert_eq!(days[0].input_tokens, 20);
        assert_eq!(days[0].turns, 2);
        assert_eq!(days[0].unpriced_turns, 1);
        assert!((days[0].cost_usd - 0.5).abs() < 1e-9);
        assert!(table.delete("acct-1").unwrap());
        assert!(!table.auto_switch("claude:s").unwrap(), "off by default");
        table.set_auto_switch("claude:s", true).unwrap();
        assert!(table.auto_switch("claude:s").unwrap());
        table.set_auto_switch("claude:s", false).unwrap();
        assert!(!table.auto_switch("claude:s").unwrap());
        assert!(table.get("acct-1").unwrap().is_none());
    }
}
