//! The notes and data packs on real files, their policies, and declarative packs from
//! TOML (loaded, offered, refusing what their policies refuse).

use serde_json::{json, Value};
use weft_native::pack::{self, declarative::Declarative, DomainPack};
use weft_native::tools::{ToolOutput, Workspace};
use weft_testkit::{Script, Turn};

use super::support::{anthropic, driver, run_turn, write, Dirs, ToolBench};

struct OnPack<'a> {
    bench: &'a ToolBench,
    pack: std::sync::Arc<dyn DomainPack>,
}

/// The built-in pack `name`, to call its tools on `bench`.
fn on_pack<'a>(bench: &'a ToolBench, name: &str) -> OnPack<'a> {
    OnPack {
        bench,
        pack: pack::builtin(name).unwrap(),
    }
}

impl OnPack<'_> {
    async fn call(&self, name: &str, input: Value) -> ToolOutput {
        self.bench.call(self.pack.as_ref(), name, input).await
    }
}

/// `out` is a refusal saying `why`.
fn assert_refused(out: &ToolOutput, why: &str) {
    assert!(out.is_error && out.content.contains(why), "{}", out.content);
}

#[tokio::test]
async fn notes_list_search_read_add_with_search_before_add() {
    let b = ToolBench::new();
    let notes = on_pack(&b, "notes");
    write(
        b.ws.root(),
        ".notes/rust.md",
        "# Rust\nOwnership moves values.\n",
    );
    let refused = notes
        .call("notes_add", json!({"name": "go", "content": "x"}))
        .await;
    assert_refused(&refused, "search-before-add");
    assert!(!b.ws.root().join(".notes/go.md").exists());
    let list = notes.call("notes_list", json!({})).await;
    assert_eq!(list.content, "rust: # Rust");
    let hit = notes
        .call("notes_search", json!({"query": "ownership MOVES"}))
        .await;
    assert!(
        hit.content.contains("rust:") && hit.content.contains("Ownership moves values."),
        "{}",
        hit.content
    );
    let miss = notes
        .call("notes_search", json!({"query": "goroutines"}))
        .await;
    assert_eq!(miss.content, "no note matches");
    let add = notes
        .call(
            "notes_add",
            json!({"name": "go", "content": "Goroutines are cheap."}),
        )
        .await;
    assert!(!add.is_error, "{}", add.content);
    assert_eq!(
        std::fs::read_to_string(b.ws.root().join(".notes/go.md")).unwrap(),
        "Goroutines are cheap.\n"
    );
    let again = notes
        .call("notes_add", json!({"name": "go", "content": "more"}))
        .await;
    assert!(again.is_error, "a second add needs a new search");
    let read = notes.call("notes_read", json!({"name": "go"})).await;
    assert_eq!(read.content, "Goroutines are cheap.\n");
    let bad = notes
        .call("notes_read", json!({"name": "../../etc/passwd"}))
        .await;
    assert!(bad.is_error);
}

fn make_db(path: &std::path::Path) {
    let c = rusqlite::Connection::open(path).unwrap();
    c.execute_batch(
        "CREATE TABLE people (id INTEGER PRIMARY KEY, name TEXT NOT NULL, age INTEGER);
         INSERT INTO people (name, age) VALUES ('Ada', 36), ('Linus', 54);",
    )
    .unwrap();
}

#[tokio::test]
async fn data_tables_describe_query_exec_with_schema_before_query() {
    let b = ToolBench::new();
    let data = on_pack(&b, "data");
    std::fs::create_dir_all(b.ws.root().join("db")).unwrap();
    make_db(&b.ws.root().join("db/app.sqlite"));
    let q = json!({"db": "db/app.sqlite", "sql": "SELECT name FROM people ORDER BY age"});
    let refused = data.call("query", q.clone()).await;
    assert_refused(&refused, "schema-before-query");
    let dbs = data.call("list_tables", json!({})).await;
    assert_eq!(dbs.content, "db/app.sqlite");
    let tables = data
        .call("list_tables", json!({"db": "db/app.sqlite"}))
        .await;
    assert!(
        tables.content.contains("people\ttable"),
        "{}",
        tables.content
    );
    let desc = data
        .call(
            "describe_table",
            json!({"db": "db/app.sqlite", "table": "people"}),
        )
        .await;
    assert!(
        desc.content.contains("CREATE TABLE people") && desc.content.contains("name\tTEXT\t1"),
        "{}",
        desc.content
    );
    let rows = data.call("query", q).await;
    assert_eq!(rows.content, "name\nAda\nLinus\n[2 row(s)]");
    let sneaky = data
        .call(
            "query",
            json!({"db": "db/app.sqlite", "sql": "DELETE FROM people"}),
        )
        .await;
    assert_refused(&sneaky, "use exec");
    let exec = data
        .call(
            "exec",
            json!({"db": "db/app.sqlite", "sql": "UPDATE people SET age = age + 1"}),
        )
        .await;
    assert_eq!(exec.content, "done; 2 row(s) changed");
    let after = data
        .call(
            "query",
            json!({"db": "db/app.sqlite", "sql": "SELECT sum(age) FROM people"}),
        )
        .await;
    assert!(after.content.contains("92"), "{}", after.content);
    // exec kept the database as it was, for undo.
    assert!(b
        .ws
        .take_originals()
        .contains_key(&b.ws.root().join("db/app.sqlite")));
    let outside = data.call("list_tables", json!({"db": "/etc/hosts"})).await;
    assert!(outside.is_error && outside.content.contains("outside the workspace"));
}

const DOCS: &str = r#"
description = "Keeps the docs true"
prompt = "You maintain the docs. weft-docs-pack-marker"
context_files = ["STYLE.md"]
tools = ["read", "grep", "edit"]
policies = ["read-before-edit"]
verify = "true"
permission = "auto"
"#;

#[test]
fn a_declarative_pack_loads_from_toml() {
    let dirs = Dirs::with_file(".weft/packs/docs.toml", DOCS);
    let p = pack::find("docs", Some(&dirs.work()), dirs.state.path()).unwrap();
    assert_eq!(p.name(), "docs");
    assert_eq!(
        p.tools()
            .iter()
            .map(|t| t.name().to_string())
            .collect::<Vec<_>>(),
        ["read", "grep", "edit"]
    );
    assert_eq!(p.context_files(), ["STYLE.md"]);
    assert_eq!(
        p.verify_command(&Default::default()).as_deref(),
        Some("true")
    );
    let ws = Workspace::new(&dirs.work());
    write(&dirs.work(), "a.md", "x");
    assert!(p
        .policy(
            "edit",
            &json!({"path": "a.md", "old_text": "x", "new_text": "y"}),
            &ws
        )
        .is_err());
    assert!(pack::all_names(Some(&dirs.work()), dirs.state.path()).contains(&"docs".to_string()));
    // Mistakes are said, with what is known.
    write(
        &dirs.work(),
        "bad.toml",
        "prompt = \"p\"\ntools = [\"rm_rf\"]\n",
    );
    let err = Declarative::load(&dirs.work().join("bad.toml"))
        .err()
        .unwrap();
    assert!(
        err.contains("rm_rf") && err.contains("known: read"),
        "{err}"
    );
    write(&dirs.work(), "typo.toml", "prompt = \"p\"\ntoolz = []\n");
    assert!(Declarative::load(&dirs.work().join("typo.toml")).is_err());
    let missing = pack::find("nope", Some(&dirs.work()), dirs.state.path())
        .err()
        .unwrap();
    assert!(missing.contains("coding, notes, data, docs"), "{missing}");
}

async fn offered(pack_name: &str, dirs: &Dirs) -> (Vec<String>, String) {
    let (server, mut env) =
        anthropic(Script::new().default_reply(Turn::text_reply("ok")), "auto").await;
    env.push(("WEFT_NATIVE_PACK".into(), pack_name.into()));
    let (r, _, _) = run_turn(&driver(), dirs.trusted_input(&env, "hi")).await;
    assert!(r.ok, "{r:?}");
    let req = &server.messages_requests()[0];
    (req.tool_names(), req.body["system"].to_string())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_session_offers_only_its_packs_tools() {
    let dirs = Dirs::with_file(".weft/packs/docs.toml", DOCS);
    let (tools, system) = offered("docs", &dirs).await;
    assert_eq!(
        tools,
        [
            "read",
            "grep",
            "edit",
            "update_plan",
            "ask_user",
            "task",
            "memory_save",
            "memory_list"
        ]
    );
    assert!(system.contains("weft-docs-pack-marker"));
    let (tools, _) = offered("notes", &dirs).await;
    assert!(
        tools
            .iter()
            .all(|t| !["bash", "read", "write"].contains(&t.as_str())),
        "{tools:?}"
    );
    assert!(tools.contains(&"notes_add".to_string()));
    let (tools, _) = offered("data", &dirs).await;
    assert!(tools.contains(&"query".to_string()) && !tools.contains(&"bash".to_string()));
}
