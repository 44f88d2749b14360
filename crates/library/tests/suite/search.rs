//! One search over managed turns and native excerpts: substrings and phrases, newest
//! first, filters, and what the user's marks do to what is found.

use weft_protocol::{
    LibrarySearch, Origin, Phase, SessionAction, SessionRecord, UniversalSnapshot, UsageBy,
};

use super::index::{fixture_text, user_line, Fixture, CLAUDE_ID};

#[test]
fn substrings_inside_words_and_across_them_are_found() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let key = format!("claude:{CLAUDE_ID}");
    for q in [
        "from-to",
        "rom-to",
        "i-from",
        "hi-from-tool",
        "echo hi",
        "-from-",
    ] {
        let hits = f.search(q);
        assert!(
            hits.iter().any(|h| h.session_key == key),
            "`{q}` finds the tool call: {hits:?}"
        );
    }
    // Inside one word, shorter than a trigram, and CJK inside a longer run.
    let text = fixture_text("claude_session.jsonl");
    let path = f.claude_file();
    std::fs::write(
        &path,
        format!(
            "{text}{}",
            user_line("please call parse_config_v2 then 日本語のテキスト")
        ),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    for q in ["arse_conf", "config_v", "本語", "のテキ", "v2"] {
        let hits = f.search(q);
        assert!(hits.iter().any(|h| h.session_key == key), "`{q}`: {hits:?}");
    }
    assert!(f.search("parse_confog").is_empty());
}

#[test]
fn a_phrase_search_lists_native_and_managed_matches_newest_first() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    // Managed turns on either side of the Claude fixture's `hello turn one`
    // (2026-11-30): the older one says the phrase often, which bm25 would rank first.
    for (key, at, prompt) in [
        (
            "echo:old",
            1_700_000_000_000i64,
            "turn one, turn one, turn one",
        ),
        (
            "echo:new",
            1_800_000_000_000,
            "a long prompt that mentions turn one only once among many other words",
        ),
    ] {
        f.store
            .upsert_session(&SessionRecord {
                session_key: key.into(),
                agent: "echo".into(),
                session_id: None,
                workdir: "/tmp".into(),
                title: key.into(),
                model: None,
                effort: None,
                created_at: at,
                updated_at: at,
                account: None,
                fork: None,
                switch: None,
            })
            .unwrap_or_else(|e| panic!("{e}"));
        let mut snap = UniversalSnapshot {
            prompt: prompt.into(),
            started_at: Some(at),
            ..Default::default()
        };
        let task = format!("t-{key}");
        f.store
            .begin_turn(key, &task, &snap)
            .unwrap_or_else(|e| panic!("{e}"));
        snap.phase = Phase::Done;
        f.store
            .finish_turn(&task, &snap)
            .unwrap_or_else(|e| panic!("{e}"));
    }
    let hits = f.search("\"turn one\"");
    let at = |k: &str| {
        hits.iter()
            .position(|h| h.session_key == k)
            .unwrap_or_else(|| panic!("{k} not found: {hits:?}"))
    };
    let native = format!("claude:{CLAUDE_ID}");
    assert!(
        at("echo:new") < at(&native) && at(&native) < at("echo:old"),
        "{:?}",
        hits.iter()
            .map(|h| (&h.session_key, h.at))
            .collect::<Vec<_>>()
    );
    assert!(hits.windows(2).all(|w| w[0].at >= w[1].at), "{hits:?}");
}

#[test]
fn one_search_covers_managed_turns_and_native_excerpts_and_marks_apply_to_both() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let record = SessionRecord {
        session_key: "echo:m1".into(),
        agent: "echo".into(),
        session_id: None,
        workdir: "/tmp".into(),
        title: "managed one".into(),
        model: None,
        effort: None,
        created_at: 1,
        updated_at: 2,
        account: None,
        fork: None,
        switch: None,
    };
    f.store
        .upsert_session(&record)
        .unwrap_or_else(|e| panic!("{e}"));
    let mut snap = UniversalSnapshot {
        prompt: "tell me about hi-from-tool".into(),
        ..Default::default()
    };
    f.store
        .begin_turn("echo:m1", "t1", &snap)
        .unwrap_or_else(|e| panic!("{e}"));
    snap.text = "managed reply mentions hi-from-tool too".into();
    snap.phase = Phase::Done;
    f.store
        .finish_turn("t1", &snap)
        .unwrap_or_else(|e| panic!("{e}"));
    let hits = f.search("hi-from-tool");
    let keys: Vec<&str> = hits.iter().map(|h| h.session_key.as_str()).collect();
    assert!(
        keys.contains(&"echo:m1") && keys.contains(&format!("claude:{CLAUDE_ID}").as_str()),
        "{hits:?}"
    );
    let managed = hits
        .iter()
        .find(|h| h.session_key == "echo:m1")
        .unwrap_or_else(|| panic!("none"));
    assert_eq!(managed.task_id.as_deref(), Some("t1"));
    assert_eq!(managed.origin, Origin::Managed);
    // Filters.
    let only_codex = f
        .library
        .search(&LibrarySearch {
            query: "MOCK-REPLY".into(),
            agent: Some("codex".into()),
            ..Default::default()
        })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(only_codex.iter().all(|h| h.agent == "codex") && !only_codex.is_empty());

    let key = format!("claude:{CLAUDE_ID}");
    f.library
        .manage(
            &key,
            &SessionAction::Rename {
                title: "my title".into(),
            },
        )
        .unwrap_or_else(|e| panic!("{e}"));
    f.library
        .manage("echo:m1", &SessionAction::Archive)
        .unwrap_or_else(|e| panic!("{e}"));
    let all = f.all();
    assert_eq!(
        all.iter()
            .find(|s| s.session_key == key)
            .map(|s| s.title.as_str()),
        Some("my title")
    );
    assert!(
        all.iter().all(|s| s.session_key != "echo:m1"),
        "archived is hidden"
    );
    f.library
        .manage(&key, &SessionAction::Delete { file: true })
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!f.claude_file().exists());
    assert!(f.all().iter().all(|s| s.session_key != key));

    // Usage: unknown prices are unknown, not $0.
    let usage = f
        .library
        .usage(UsageBy::Model, None)
        .unwrap_or_else(|e| panic!("{e}"));
    let mock = usage
        .iter()
        .find(|r| r.key == "mock-model")
        .unwrap_or_else(|| panic!("{usage:?}"));
    assert_eq!(mock.cost_usd, None);
    assert_eq!(mock.unpriced_models, ["mock-model"]);
}
