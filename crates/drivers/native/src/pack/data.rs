//! The data pack: SQLite databases in the workspace — `list_tables`, `describe_table`,
//! `query` (read-only: the database is opened read-only and the statement must be
//! one that reads), `exec` (mutating) — with schema-before-query as its policy.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use async_trait::async_trait;
use rusqlite::{types::ValueRef, Connection, OpenFlags};
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use super::{DomainPack, PermissionMode};
use crate::tools::{field, first_line, Native, Spec, ToolCx, ToolOutput, ToolRef, Workspace};

/// The data pack.
pub struct Data;

const MAX_ROWS: usize = 200;

impl DomainPack for Data {
    fn name(&self) -> &str {
        "data"
    }

    fn prompt(&self) -> String {
        "You answer questions from the SQLite databases in the workspace. Look at the schema \
         (list_tables, describe_table) before you query; prefer query (read-only) and use exec \
         only when the user asked for a change. Show the SQL you ran with the answer."
            .into()
    }

    fn tools(&self) -> Vec<ToolRef> {
        vec![
            Arc::new(ListTables),
            Arc::new(Describe),
            Arc::new(Query),
            Arc::new(Exec),
        ]
    }

    /// query and exec need the database's schema seen first.
    fn policy(&self, tool: &str, input: &Value, ws: &Workspace) -> Result<(), String> {
        if !matches!(tool, "query" | "exec") {
            return Ok(());
        }
        let db = ws.resolve(field(input, "db"))?;
        if ws.was_read(&db) {
            Ok(())
        } else {
            Err(format!(
                "look at the schema of {} first (list_tables or describe_table): the data pack's schema-before-query rule",
                field(input, "db")
            ))
        }
    }

    fn permission_default(&self) -> PermissionMode {
        PermissionMode::Ask
    }
}

fn databases(root: &Path) -> Vec<String> {
    let mut out: Vec<String> = ignore::WalkBuilder::new(root)
        .max_depth(Some(4))
        .build()
        .flatten()
        .filter(|e| e.file_type().is_some_and(|t| t.is_file()))
        .filter(|e| {
            let n = e.file_name().to_string_lossy();
            n.ends_with(".db") || n.ends_with(".sqlite") || n.ends_with(".sqlite3")
        })
        .map(|e| {
            e.path()
                .strip_prefix(root)
                .unwrap_or(e.path())
                .display()
                .to_string()
        })
        .collect();
    out.sort();
    out
}

fn open(path: &Path, write: bool) -> Result<Connection, String> {
    if !path.is_file() {
        return Err(format!("there is no database at {}", path.display()));
    }
    let flags = if write {
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX
    } else {
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX
    };
    Connection::open_with_flags(path, flags)
        .map_err(|e| format!("cannot open {}: {e}", path.display()))
}

fn cell(v: ValueRef<'_>) -> String {
    match v {
        ValueRef::Null => "NULL".into(),
        ValueRef::Integer(i) => i.to_string(),
        ValueRef::Real(f) => f.to_string(),
        ValueRef::Text(t) => String::from_utf8_lossy(t).into_owned(),
        ValueRef::Blob(b) => format!("<{} bytes>", b.len()),
    }
}

fn rows(conn: &Connection, sql: &str, read_only: bool) -> Result<String, String> {
    let mut stmt = conn.prepare(sql).map_err(|e| format!("bad SQL: {e}"))?;
    if read_only && !stmt.readonly() {
        return Err("query only reads; this statement would change the database (use exec)".into());
    }
    let names: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let n = names.len();
    let mut out = vec![names.join("\t")];
    let mut rows = stmt
        .query([])
        .map_err(|e| format!("the query failed: {e}"))?;
    let mut count = 0;
    while let Some(row) = rows.next().map_err(|e| format!("the query failed: {e}"))? {
        count += 1;
        if count > MAX_ROWS {
            continue;
        }
        let cells: Vec<String> = (0..n)
            .map(|i| row.get_ref(i).map(cell).unwrap_or_default())
            .collect();
        out.push(cells.join("\t"));
    }
    if count > MAX_ROWS {
        out.push(format!("[{count} rows; the first {MAX_ROWS} shown]"));
    } else {
        out.push(format!("[{count} row(s)]"));
    }
    Ok(out.join("\n"))
}

#[derive(Deserialize, JsonSchema)]
struct DbArgs {
    #[serde(default)]
    #[schemars(description = "database file, relative to the workspace")]
    db: Option<String>,
}

struct ListTables;

#[async_trait]
impl Native for ListTables {
    const SPEC: Spec = Spec {
        name: "list_tables",
        description: "List the tables and views of a SQLite database in the workspace; without db, list the databases found.",
        read_only: true,
        kind: ToolKind::Read,
    };
    type Args = DbArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("list_tables {}", field(input, "db"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let Some(db) = a.db.filter(|d| !d.is_empty()) else {
            let found = databases(cx.root());
            return ToolOutput::ok(if found.is_empty() {
                "no SQLite databases in the workspace".into()
            } else {
                found.join("\n")
            });
        };
        let path = match cx.workspace.resolve(&db) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let r = open(&path, false).and_then(|c| {
            rows(&c, "SELECT name, type FROM sqlite_master WHERE type IN ('table','view') AND name NOT LIKE 'sqlite_%' ORDER BY name", true)
        });
        match r {
            Ok(t) => {
                cx.workspace.mark_read(&path);
                ToolOutput::ok(t)
            }
            Err(e) => ToolOutput::error(e),
        }
    }
}

struct Describe;

#[derive(Deserialize, JsonSchema)]
struct DescribeArgs {
    db: String,
    table: String,
}

#[async_trait]
impl Native for Describe {
    const SPEC: Spec = Spec {
        name: "describe_table",
        description: "Show a table's columns (name, type, not null, default, primary key) and its CREATE statement.",
        read_only: true,
        kind: ToolKind::Read,
    };
    type Args = DescribeArgs;
    fn summarize(&self, input: &Value) -> String {
        format!(
            "describe_table {} {}",
            field(input, "db"),
            field(input, "table")
        )
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match cx.workspace.resolve(&a.db) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let r = open(&path, false).and_then(|c| {
            let create: Option<String> = c
                .query_row("SELECT sql FROM sqlite_master WHERE name = ?1", [&a.table], |r| r.get(0))
                .ok();
            let Some(create) = create else {
                return Err(format!("there is no table {:?} in {}", a.table, a.db));
            };
            let quoted = a.table.replace('"', "\"\"");
            let cols = rows(&c, &format!("SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(\"{quoted}\")"), true)?;
            Ok(format!("{create}\n\n{cols}"))
        });
        match r {
            Ok(t) => {
                cx.workspace.mark_read(&path);
                ToolOutput::ok(t)
            }
            Err(e) => ToolOutput::error(e),
        }
    }
}

#[derive(Deserialize, JsonSchema)]
struct SqlArgs {
    db: String,
    sql: String,
}

fn db_path(cx: &ToolCx<'_>, db: &str) -> Result<PathBuf, ToolOutput> {
    cx.workspace.resolve(db).map_err(ToolOutput::error)
}

struct Query;

#[async_trait]
impl Native for Query {
    const SPEC: Spec = Spec {
        name: "query",
        description: "Run one read-only SQL statement (SELECT, WITH, PRAGMA that reads) and show the rows (at most 200).",
        read_only: true,
        kind: ToolKind::Other,
    };
    type Args = SqlArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("query {}", first_line(field(input, "sql"), 80))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match db_path(cx, &a.db) {
            Ok(p) => p,
            Err(e) => return e,
        };
        match open(&path, false).and_then(|c| rows(&c, &a.sql, true)) {
            Ok(t) => ToolOutput::ok(t),
            Err(e) => ToolOutput::error(e),
        }
    }
}

struct Exec;

#[async_trait]
impl Native for Exec {
    const SPEC: Spec = Spec {
        name: "exec",
        description: "Run SQL that changes the database (INSERT, UPDATE, DELETE, CREATE …); one or more statements.",
        read_only: false,
        kind: ToolKind::Other,
    };
    type Args = SqlArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("exec {}", first_line(field(input, "sql"), 80))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match db_path(cx, &a.db) {
            Ok(p) => p,
            Err(e) => return e,
        };
        cx.workspace.before_write(&path);
        let r = open(&path, true).and_then(|c| {
            let before = c.total_changes();
            c.execute_batch(&a.sql)
                .map_err(|e| format!("the statement failed: {e}"))?;
            Ok(c.total_changes() - before)
        });
        match r {
            Ok(n) => ToolOutput::ok(format!("done; {n} row(s) changed")),
            Err(e) => ToolOutput::error(e),
        }
    }
}
