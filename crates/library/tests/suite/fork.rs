//! Forks written by the library itself (Gemini): a whole chat, or one rewound to a
//! turn with Gemini's own `$rewindTo` record.

use super::index::{Fixture, GEMINI_ID};

fn prompts(f: &Fixture, key: &str) -> Vec<String> {
    let page = f
        .library
        .open_transcript(key, None, None)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(page.turns.len() as u32, page.total, "{page:?}");
    page.turns.into_iter().map(|t| t.prompt).collect()
}

#[test]
fn a_gemini_chat_forks_at_each_turn_and_at_its_end() {
    let f = Fixture::new();
    f.library.index_now().unwrap_or_else(|e| panic!("{e}"));
    let parent = format!("gemini:{GEMINI_ID}");
    let all = ["USE_TOOL please", "resumed hello", "resumed latest"];
    assert_eq!(prompts(&f, &parent), all);
    let chats = f.root.join(".gemini/tmp/work/chats");
    let parent_file = chats.join("session-2026-11-30T03-08-6f1fd193.jsonl");
    let before = std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}"));

    // The chat's turns 2 and 3 live in `$set` patches that rewrite the whole list on
    // each resume: no byte offset cuts them apart, Gemini's own rewind record does.
    for at in [1u32, 2] {
        let fork = f
            .library
            .fork(&parent, Some(at))
            .unwrap_or_else(|e| panic!("at {at}: {e}"));
        assert_eq!(fork.turns, at, "{fork:?}");
        assert_eq!(fork.parent_key.as_deref(), Some(parent.as_str()));
        assert_eq!(fork.relation.as_deref(), Some("fork"));
        assert_eq!(prompts(&f, &fork.session_key), all[..at as usize]);
        let id = fork.session_id.clone().unwrap_or_default();
        let end = format!("-{}.jsonl", &id[..8]);
        let file = std::fs::read_dir(&chats)
            .unwrap_or_else(|e| panic!("{e}"))
            .flatten()
            .map(|e| e.path())
            .find(|p| {
                p.file_name()
                    .is_some_and(|n| n.to_string_lossy().ends_with(&end))
            })
            .unwrap_or_else(|| panic!("no file of {id}"));
        // Gemini's own name, `session-<YYYY-MM-DDTHH-MM>-<id8>.jsonl`: its CLI finds
        // and deletes a session's files by it.
        let name = file
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        let stamp = &name["session-".len()..name.len() - end.len()];
        assert!(
            stamp.len() == 16 && stamp.as_bytes()[10] == b'T' && stamp.as_bytes()[13] == b'-',
            "{name}"
        );
        let text = std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}"));
        let last: serde_json::Value = text
            .lines()
            .last()
            .and_then(|l| serde_json::from_str(l).ok())
            .unwrap_or_default();
        let next_prompt = [
            "6c75e7ce-8b96-4971-b2d7-4adcdd90ba66",
            "8099adb3-53a4-4e3a-b888-ec18ea0a0ebd",
        ];
        assert_eq!(last["$rewindTo"], next_prompt[at as usize - 1], "{text}");
        assert!(
            !text.contains(GEMINI_ID),
            "the copy keeps none of the parent's id"
        );
    }
    // At its last turn, or with no turn: the whole chat.
    for at in [Some(3), None] {
        let fork = f
            .library
            .fork(&parent, at)
            .unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(prompts(&f, &fork.session_key), all);
    }
    for at in [0, 4] {
        let err = f
            .library
            .fork(&parent, Some(at))
            .map(|s| s.session_key)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains(&format!("no turn {at}")), "{err}");
    }
    assert_eq!(
        std::fs::read(&parent_file).unwrap_or_else(|e| panic!("{e}")),
        before,
        "the parent's chat is left as it was"
    );
}
