//! The indexer over recorded files of the three real formats: incremental reads, a
//! rewritten or vanished file, bad input, the watcher, links out of an agent's home. The
//! fixture here serves the search and records tests too.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use weft_library::{Home, Library};
use weft_protocol::{LibraryQuery, LibrarySearch, Origin, UsageBy};
use weft_store::SqliteStore;

pub(super) const CLAUDE_ID: &str = "2beba834-ea9e-4d74-9e9f-b4a9f23cf57b";
const CODEX_ID: &str = "01a22a6b-1a33-73c2-8da3-697eac086135";
pub(super) const GEMINI_ID: &str = "6f1fd193-c4e2-4471-acd0-fc646b5f1f76";

pub(super) struct Fixture {
    _dir: tempfile::TempDir,
    pub(super) root: PathBuf,
    pub(super) store: Arc<SqliteStore>,
    pub(super) library: Arc<Library>,
}

pub(super) fn fixture_text(name: &str) -> String {
    let p = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/fixtures")
        .join(name);
    std::fs::read_to_string(p).unwrap_or_else(|e| panic!("{e}"))
}

impl Fixture {
    pub(super) fn new() -> Self {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let root = dir.path().to_path_buf();
        let claude = root.join(".claude/projects/-home-dev-probe-claude-work");
        let codex = root.join(".codex/sessions/2026/11/30");
        let gemini = root.join(".gemini/tmp/work/chats");
        for d in [&claude, &codex, &gemini] {
            std::fs::create_dir_all(d).unwrap_or_else(|e| panic!("{e}"));
        }
        std::fs::write(
            claude.join(format!("{CLAUDE_ID}.jsonl")),
            fixture_text("claude_session.jsonl"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            codex.join(format!("rollout-2026-11-30T03-06-31-{CODEX_ID}.jsonl")),
            fixture_text("codex_rollout.jsonl"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            gemini.join("session-2026-11-30T03-08-6f1fd193.jsonl"),
            fixture_text("gemini_chat.jsonl"),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        std::fs::write(
            root.join(".gemini/tmp/work/.project_root"),
            "/home/dev/probe/gemini/work\n",
        )
        .unwrap_or_else(|e| panic!("{e}"));
        let store =
            Arc::new(SqliteStore::open(&root.join("weft.db")).unwrap_or_else(|e| panic!("{e}")));
        let homes = vec![
            Home {
                agent: super::agent("claude"),
                root: root.join(".claude"),
                account: None,
            },
            Home {
                agent: super::agent("codex"),
                root: root.join(".codex"),
                account: None,
            },
            Home {
                agent: super::agent("gemini"),
                root: root.join(".gemini"),
                account: None,
            },
        ];
        let library = Library::open(
            &root.join("weft.db"),
            super::agents(),
            homes,
            Some(store.clone()),
        )
        .unwrap_or_else(|e| panic!("{e}"));
        Self {
            _dir: dir,
            root,
            store,
            library,
        }
    }

    pub(super) fn claude_file(&self) -> PathBuf {
        self.root
            .join(".claude/projects/-home-dev-probe-claude-work")
            .join(format!("{CLAUDE_ID}.jsonl"))
    }

    pub(super) fn all(&self) -> Vec<weft_protocol::LibrarySession> {
        self.library
            .list(&LibraryQuery::default())
            .unwrap_or_else(|e| panic!("{e}"))
    }

    pub(super) fn search(&self, q: &str) -> Vec<weft_protocol::LibraryHit> {
        self.library
            .search(&LibrarySearch {
                query: q.into(),
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{e}"))
    }
}

fn append(path: &Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .append(true)
        .open(path)
        .unwrap_or_else(|e| panic!("{e}"));
    f.write_all(text.as_bytes())
        .unwrap_or_else(|e| panic!("{e}"));
}

pub(super) fn user_line(text: &str) -> String {
    format!(
        "{{\"type\":\"user\",\"message\":{{\"role\":\"user\",\"content\":{}}},\"uuid\":\"u-{}\",\"timestamp\":\"2026-11-30T04:00:00.000Z\",\"cwd\":\"/home/dev/probe/claude/work\",\"sessionId\":\"{CLAUDE_ID}\"}}\n",
        serde_json::to_string(text).unwrap_or_default(),
        text.len()
    )
}

fn assistant_line(id: &str, req: &str, text: &str, output: u64) -> String {
    format!(
        "{{\"type\":\"assistant\",\"requestId\":\"{req}\",\"message\":{{\"id\":\"{id}\",\"role\":\"assistant\",\"model\":\"claude-sonnet-4-5\",\"content\":[{{\"type\":\"text\",\"text\":{}}}],\"usage\":{{\"input_tokens\":100,\"output_tokens\":{output},\"cache_read_input_tokens\":0,\"cache_creation_input_tokens\":0}}}},\"timestamp\":\"2026-11-30T04:00:01.000Z\",\"sessionId\":\"{CLAUDE_ID}\"}}\n",
        serde_json::to_string(text).unwrap_or_default()
    )
}

#[test]
fn the_three_formats_are_listed_with_titles_folders_models_and_usage() {
    let f = Fixture::new();
    let stats = f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.read, 3);
    let all = f.all();
    let by = |agent: &str| {
        all.iter()
            .find(|s| s.agent == agent)
            .unwrap_or_else(|| panic!("no {agent} in {all:?}"))
    };
    let claude = by("claude");
    assert_eq!(claude.session_key, format!("claude:{CLAUDE_ID}"));
    assert_eq!(claude.origin, Origin::Native);
    assert_eq!(claude.title, "hello turn one");
    assert_eq!(
        claude.workdir.as_deref(),
        Some("/home/dev/probe/claude/work")
    );
    assert_eq!(claude.turns, 3);
    assert_eq!(claude.model.as_deref(), Some("claude-opus-4-8"));
    // msg_4's two lines carry one usage; msg_5 is repeated in a resumed turn: once each.
    assert_eq!(claude.output_tokens, 5 * 3);
    let codex = by("codex");
    assert_eq!(codex.session_key, format!("codex:{CODEX_ID}"));
    assert_eq!(codex.title, "USE_TOOL please");
    assert_eq!(codex.output_tokens, 28);
    let gemini = by("gemini");
    assert_eq!(gemini.session_key, format!("gemini:{GEMINI_ID}"));
    assert_eq!(
        gemini.workdir.as_deref(),
        Some("/home/dev/probe/gemini/work")
    );
    assert_eq!(gemini.turns, 3);

    // An unchanged store is not read again.
    let again = f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((again.files, again.read), (3, 0));

    let page = f
        .library
        .open_transcript(&claude.session_key, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.total, 3);
    assert_eq!(page.turns.len(), 3);
    assert_eq!(page.turns[1].prompt, "USE_TOOL turn two");
    let call = &page.turns[1].tool_calls[0];
    assert_eq!(
        (call.name.as_str(), call.result.as_deref()),
        ("Bash", Some("hi-from-tool"))
    );
    assert!(page.turns[1].text.contains("tool said"));
    // A page: just the middle turn, read from its own offset.
    let middle = f
        .library
        .open_transcript(&claude.session_key, Some(1), Some(1))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(middle.turns.len(), 1);
    assert_eq!(middle.turns[0].prompt, "USE_TOOL turn two");
    for key in [&codex.session_key, &gemini.session_key] {
        let page = f
            .library
            .open_transcript(key, None, None)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(page.turns.len() as u32, page.total, "{key}");
        assert!(
            page.turns.iter().any(|t| t.text.contains("MOCK-REPLY")),
            "{key}: {page:?}"
        );
    }
}

/// The agent writes a turn the index has not read yet: the transcript is the turns the
/// index counts, so an adopted session's earlier turns never take in the turn Weft is
/// recording itself (a `weft history` listed it twice under load).
#[test]
fn a_turn_written_after_the_last_index_is_not_in_the_transcript_until_indexed() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let key = format!("claude:{CLAUDE_ID}");
    append(
        &f.claude_file(),
        &format!(
            "{}{}",
            user_line("a fourth prompt not indexed yet"),
            assistant_line("msg_9", "req_9", "an answer not indexed yet", 40)
        ),
    );
    let page = f
        .library
        .open_transcript(&key, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let prompts: Vec<&str> = page.turns.iter().map(|t| t.prompt.as_str()).collect();
    assert_eq!(page.total, 3);
    assert_eq!(
        prompts,
        ["hello turn one", "USE_TOOL turn two", "resumed message"],
        "{page:?}"
    );
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let page = f
        .library
        .open_transcript(&key, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!((page.total, page.turns.len()), (4, 4));
}

#[test]
fn appended_lines_are_read_from_where_reading_stopped_and_rewrites_are_read_again() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let path = f.claude_file();
    let added = format!(
        "{}{}{}",
        user_line("fourth prompt about 日本語のテキスト"),
        assistant_line("msg_9", "req_9", "capybara answer", 40),
        assistant_line("msg_9", "req_9", "capybara answer", 40)
    );
    append(&path, &added);
    let stats = f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.read, 1);
    assert_eq!(
        stats.bytes,
        added.len() as u64,
        "only the appended bytes are read"
    );
    let claude = f
        .all()
        .into_iter()
        .find(|s| s.agent == "claude")
        .unwrap_or_else(|| panic!("gone"));
    assert_eq!(claude.turns, 4);
    assert_eq!(
        claude.output_tokens,
        15 + 40,
        "a repeated message id + request id counts once"
    );
    let hits = f.search("本語のテ");
    assert_eq!(hits.len(), 1, "CJK substring: {hits:?}");
    assert!(hits[0].snippet.contains("«本語のテ»"), "{hits:?}");
    assert_eq!(hits[0].turn, Some(4));

    // Rewritten shorter (compaction, a tool rewriting it): read again from the start.
    let text = fixture_text("claude_session.jsonl");
    let first_turn: String = text.lines().take(7).map(|l| format!("{l}\n")).collect();
    std::fs::write(&path, first_turn).unwrap_or_else(|e| panic!("{e}"));
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let claude = f
        .all()
        .into_iter()
        .find(|s| s.agent == "claude")
        .unwrap_or_else(|| panic!("gone"));
    assert_eq!(claude.turns, 1);
    assert!(
        f.search("capybara").is_empty(),
        "the rewritten file's old text is gone"
    );
}

#[test]
fn a_vanished_file_keeps_its_session_marked_source_gone_and_searchable() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    std::fs::remove_file(f.claude_file()).unwrap_or_else(|e| panic!("{e}"));
    let stats = f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.gone, 1);
    let claude = f
        .all()
        .into_iter()
        .find(|s| s.agent == "claude")
        .unwrap_or_else(|| panic!("dropped"));
    assert!(claude.source_gone);
    assert_eq!(f.search("hi-from-tool").len(), 1);
    let page = f
        .library
        .open_transcript(&claude.session_key, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(page.source_gone);
    assert_eq!(page.turns[0].prompt, "hello turn one");
}

/// gemini 0.61.0 leaves a header-only `session-<minute>-<id8>.jsonl` beside a session
/// it resumed in a later minute; it must not take the session from the chat's file.
#[test]
fn a_header_only_gemini_file_beside_a_chat_does_not_take_its_session() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let key = format!("gemini:{GEMINI_ID}");
    let row = |f: &Fixture| {
        f.all()
            .into_iter()
            .find(|s| s.session_key == key)
            .unwrap_or_else(|| panic!("{key} not listed"))
    };
    let before = row(&f);
    assert!(before.turns > 0 && !before.title.is_empty(), "{before:?}");
    let chats = f.root.join(".gemini/tmp/work/chats");
    std::fs::write(
        chats.join("session-2026-12-01T09-30-6f1fd193.jsonl"),
        format!(
            "{{\"sessionId\":\"{GEMINI_ID}\",\"projectHash\":\"ae5d\",\"startTime\":\"2026-12-01T09:30:00.000Z\",\"lastUpdated\":\"2026-12-01T09:30:00.000Z\",\"kind\":\"main\"}}\n"
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let after = row(&f);
    assert_eq!(
        (after.turns, after.messages, &after.title, after.source_gone),
        (before.turns, before.messages, &before.title, false),
        "{after:?}"
    );
    let page = f
        .library
        .open_transcript(&key, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.turns.len() as u32, before.turns);

    // The chat's own file gone: the session says so, the header beside it no help.
    std::fs::remove_file(chats.join("session-2026-11-30T03-08-6f1fd193.jsonl"))
        .unwrap_or_else(|e| panic!("{e}"));
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert!(row(&f).source_gone);
}

#[test]
fn an_index_built_before_the_word_index_is_carried_over() {
    let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let db = dir.path().join("weft.db");
    let migrations = weft_store::schema::MIGRATIONS;
    {
        // The database as the previous build left it: excerpts in the trigram table.
        let conn = rusqlite::Connection::open(&db).unwrap_or_else(|e| panic!("{e}"));
        let before = migrations
            .iter()
            .position(|m| m.contains("CREATE VIRTUAL TABLE lib_words"))
            .unwrap_or_else(|| panic!("no word-index migration"));
        for (i, sql) in migrations[..before].iter().enumerate() {
            conn.execute_batch(sql).unwrap_or_else(|e| panic!("{e}"));
            conn.pragma_update(None, "user_version", i as i64 + 1)
                .unwrap_or_else(|e| panic!("{e}"));
        }
        conn.execute_batch(
            "INSERT INTO lib_files (id, agent, home, path, size, mtime_ns, inode, head, indexed_off, meta, status)
                 VALUES (1, 'claude', '/gone', '/gone/projects/-w/old.jsonl', 10, 1, 1, 1, 10, '{}', 'gone');
             INSERT INTO lib_sessions (id, session_key, agent, native_id, file_id, home, title, title_src,
                 created_at, updated_at, messages, turns, workdir, source_gone)
                 VALUES (1, 'claude:old', 'claude', 'old', 1, '/gone', 'old one', 'prompt', 1, 2, 1, 1, '/w', 1);
             INSERT INTO lib_turns (session_id, n, off, at) VALUES (1, 1, 0, 1);
             INSERT INTO lib_docs (id, session_id, turn, off, at, kind) VALUES (7, 1, 1, 0, 1, 'prompt');
             INSERT INTO lib_fts (rowid, text) VALUES (7, 'the wombat_migrator ran 日本語のテキスト');",
        )
        .unwrap_or_else(|e| panic!("{e}"));
    }
    let store = Arc::new(SqliteStore::open(&db).unwrap_or_else(|e| panic!("{e}")));
    let library = Library::open(&db, super::agents(), Vec::new(), Some(store))
        .unwrap_or_else(|e| panic!("{e}"));
    for q in ["wombat_migrator", "bat_mig", "本語"] {
        let hits = library
            .search(&LibrarySearch {
                query: q.into(),
                ..Default::default()
            })
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(hits.len(), 1, "`{q}`: {hits:?}");
        assert_eq!(hits[0].session_key, "claude:old");
    }
    let page = library
        .open_transcript("claude:old", None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(page.turns[0].prompt.contains("wombat_migrator"), "{page:?}");
}

#[test]
fn account_homes_and_codex_archived_sessions_are_indexed_with_their_account() {
    let f = Fixture::new();
    // A Claude login account's home (CLAUDE_CONFIG_DIR=<WEFT_HOME>/homes/claude/work1),
    // made after the library was opened, and a rollout Codex archived.
    let accounts = f.root.join("weft-home/homes");
    let project = accounts.join("claude/work1/projects/-home-dev-acct");
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    let text = fixture_text("claude_session.jsonl")
        .replace(CLAUDE_ID, "7a7a7a7a-0000-4000-8000-000000000001")
        .replace("hello turn one", "account turn one")
        // Other model calls than the ambient session's (a copy's would count once).
        .replace("\"id\":\"msg_", "\"id\":\"msg_acct_");
    std::fs::write(
        project.join("7a7a7a7a-0000-4000-8000-000000000001.jsonl"),
        text,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let archived = f.root.join(".codex/archived_sessions");
    std::fs::create_dir_all(&archived).unwrap_or_else(|e| panic!("{e}"));
    let old = "01a22a6b-0000-7000-8000-00000000aaaa";
    std::fs::write(
        archived.join(format!("rollout-2026-10-01T00-00-00-{old}.jsonl")),
        fixture_text("codex_rollout.jsonl").replace(CODEX_ID, old),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    f.library.index_accounts(&accounts);
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let all = f.all();
    let acct = all
        .iter()
        .find(|s| s.session_key == "claude:7a7a7a7a-0000-4000-8000-000000000001")
        .unwrap_or_else(|| panic!("the account's session is not listed: {all:?}"));
    assert_eq!(acct.account.as_deref(), Some("work1"));
    assert_eq!(acct.title, "account turn one");
    assert!(acct
        .home
        .as_deref()
        .is_some_and(|h| h.ends_with("homes/claude/work1")));
    let ambient = all
        .iter()
        .find(|s| s.session_key == format!("claude:{CLAUDE_ID}"))
        .unwrap_or_else(|| panic!("gone"));
    assert_eq!(ambient.account, None);
    assert!(
        all.iter().any(|s| s.session_key == format!("codex:{old}")),
        "the archived rollout is listed: {all:?}"
    );
    let by_account = f
        .library
        .usage(UsageBy::Account, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        by_account.iter().any(|r| r.key == "work1"),
        "{by_account:?}"
    );
}

#[test]
fn bad_input_is_indexed_as_far_as_it_is_valid() {
    let f = Fixture::new();
    let dir = f.root.join(".claude/projects/-bad");
    std::fs::create_dir_all(&dir).unwrap_or_else(|e| panic!("{e}"));
    // A truncated last line (the agent still writing, or a crash): left for later.
    let cut = dir.join("cut.jsonl");
    let half = user_line("gecko complete line");
    let partial = user_line("gecko partial line");
    std::fs::write(&cut, format!("{half}{}", &partial[..partial.len() / 2]))
        .unwrap_or_else(|e| panic!("{e}"));
    // Invalid UTF-8 in one line, good lines around it.
    let utf = dir.join("utf.jsonl");
    let mut bytes = user_line("iguana before").into_bytes();
    bytes.extend_from_slice(b"{\"type\":\"user\",\"message\":{\"content\":\"\xff\xfe bad\"}}\n");
    bytes.extend_from_slice(user_line("iguana after").as_bytes());
    std::fs::write(&utf, bytes).unwrap_or_else(|e| panic!("{e}"));
    // A 50 MB single line, then a good one.
    let huge = dir.join("huge.jsonl");
    let mut text = String::with_capacity(51 << 20);
    text.push_str("{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":[{\"type\":\"tool_result\",\"tool_use_id\":\"t\",\"content\":\"");
    text.push_str(&"x".repeat(50 << 20));
    text.push_str("\"}]}}\n");
    text.push_str(&user_line("marmot after the huge line"));
    std::fs::write(&huge, text).unwrap_or_else(|e| panic!("{e}"));
    // Not a transcript at all.
    std::fs::write(dir.join("notes.jsonl"), b"\x00\x01 not json\nplain text\n")
        .unwrap_or_else(|e| panic!("{e}"));

    let stats = f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(stats.read, 7);
    assert_eq!(f.search("gecko complete").len(), 1);
    assert!(
        f.search("gecko partial").is_empty(),
        "a partial line is not read"
    );
    assert_eq!(f.search("iguana").len(), 1, "utf.jsonl is found");
    let utf_hits = f.search("iguana after");
    assert_eq!(utf_hits.len(), 1, "the line after the bad one is indexed");
    assert_eq!(
        f.search("marmot").len(),
        1,
        "the line after the 50 MB one is indexed"
    );
    let listed: Vec<String> = f.all().into_iter().map(|s| s.session_key).collect();
    assert!(!listed.contains(&"claude:notes".to_string()), "{listed:?}");

    // The agent finishes the cut line: it is read from where reading stopped.
    append(&cut, &partial[partial.len() / 2..]);
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.search("gecko partial").len(), 1);
    // A file removed between the walk and its read is marked gone, not a failure.
    std::fs::remove_file(&utf).unwrap_or_else(|e| panic!("{e}"));
    f.library
        .index_paths(std::slice::from_ref(&utf))
        .unwrap_or_else(|e| panic!("{e}"));
    let utf_session = f
        .library
        .list(&LibraryQuery {
            archived: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"))
        .into_iter()
        .find(|s| s.session_key == "claude:utf")
        .unwrap_or_else(|| panic!("utf session dropped"));
    assert!(utf_session.source_gone);
}

#[test]
fn the_watcher_makes_an_appended_turn_searchable_without_a_sweep() {
    let f = Fixture::new();
    f.library.start().unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while f.all().len() < 3 {
        assert!(std::time::Instant::now() < deadline, "first index");
        std::thread::sleep(Duration::from_millis(20));
    }
    append(
        &f.claude_file(),
        &user_line("platypus appended while watched"),
    );
    while f.search("platypus").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the appended turn was not indexed"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    f.library.stop();
}

/// A link in an agent's home to a transcript elsewhere (security-3 L3): the watcher
/// reports the link's path, and what it leads to must not become searchable; a file
/// read before it was replaced by such a link is dropped.
#[test]
fn a_link_out_of_an_agents_home_is_not_read_and_one_read_before_is_dropped() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let outside = f.root.join("elsewhere");
    std::fs::create_dir_all(&outside).unwrap_or_else(|e| panic!("{e}"));
    let target = outside.join("secret.jsonl");
    std::fs::write(&target, user_line("outsidemarker in a private file"))
        .unwrap_or_else(|e| panic!("{e}"));
    let project = f.root.join(".claude/projects/-home-dev-x");
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    let link = project.join("linked.jsonl");
    std::os::unix::fs::symlink(&target, &link).unwrap_or_else(|e| panic!("{e}"));
    f.library
        .index_paths(std::slice::from_ref(&link))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        f.search("outsidemarker").is_empty(),
        "a linked file was read"
    );
    // A folder linked out of the home: a file through it is not read either.
    let linked_dir = f.root.join(".claude/projects/-home-dev-y");
    std::os::unix::fs::symlink(&outside, &linked_dir).unwrap_or_else(|e| panic!("{e}"));
    f.library
        .index_paths(&[linked_dir.join("secret.jsonl")])
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        f.search("outsidemarker").is_empty(),
        "a file through a linked folder was read"
    );
    // A real transcript read, then replaced by a link: dropped, not kept as gone.
    let real = project.join("real.jsonl");
    std::fs::write(&real, user_line("insidemarker of a real transcript"))
        .unwrap_or_else(|e| panic!("{e}"));
    f.library
        .index_paths(std::slice::from_ref(&real))
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(f.search("insidemarker").len(), 1);
    std::fs::remove_file(&real).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink(&target, &real).unwrap_or_else(|e| panic!("{e}"));
    f.library
        .index_paths(std::slice::from_ref(&real))
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(f.search("insidemarker").is_empty());
    assert!(f.search("outsidemarker").is_empty());
    let listed = f
        .library
        .list(&LibraryQuery {
            archived: true,
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        !listed.iter().any(|s| s.session_key == "claude:real"),
        "{listed:?}"
    );
}

/// A home written to without a pause (a busy agent) still gets its sweep, and what only
/// a sweep can find — a project folder moved in whole, its files never reported one by
/// one — is read. Before, the sweep ran only after 30 s without a change.
#[test]
fn a_busy_home_still_gets_its_sweep() {
    let f = Fixture::new();
    f.library
        .start_sweeping_every(Duration::from_millis(400))
        .unwrap_or_else(|e| panic!("{e}"));
    let deadline = std::time::Instant::now() + Duration::from_secs(20);
    while f.all().len() < 3 {
        assert!(std::time::Instant::now() < deadline, "first index");
        std::thread::sleep(Duration::from_millis(20));
    }
    let made = f.root.join("made-elsewhere");
    std::fs::create_dir_all(&made).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        made.join("moved.jsonl"),
        user_line("wombat in a folder moved in"),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    std::fs::rename(&made, f.root.join(".claude/projects/-home-dev-moved"))
        .unwrap_or_else(|e| panic!("{e}"));
    let busy = f.root.join(".claude/busy.txt");
    let mut n = 0;
    while f.search("wombat").is_empty() {
        assert!(
            std::time::Instant::now() < deadline,
            "the moved-in folder's session was never read"
        );
        n += 1;
        std::fs::write(&busy, format!("{n}")).unwrap_or_else(|e| panic!("{e}"));
        std::thread::sleep(Duration::from_millis(50));
    }
    f.library.stop();
}
