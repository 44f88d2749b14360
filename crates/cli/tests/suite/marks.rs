//! A session the user renames, pins, archives or deletes with `weft sessions …` is
//! shown so everywhere: in the library's list (`weft sessions`) and in what the app's
//! sidebar asks the daemon for (`listSessions`, and `search` for its transcript hits),
//! which the session library now answers for the kernel.

use std::path::Path;

use weft_client::Home;
use weft_protocol::{verb, SearchHit, SessionInfo};

use super::support::{app_hello, strings, Env};

#[tokio::test]
async fn what_the_user_marks_with_weft_sessions_is_what_the_apps_list_and_search_show() {
    let env = Env::new();
    let mut keys = Vec::new();
    for word in ["alpha", "beta", "gamma", "delta"] {
        let (code, run, _) = env.json(&["run", "--json", &format!("pelican {word} turn")]);
        assert_eq!(code, 0, "{run}");
        keys.push(run["sessionKey"].as_str().unwrap_or_default().to_string());
    }
    let [alpha, beta, gamma, delta] = [&keys[0], &keys[1], &keys[2], &keys[3]];
    env.ok(&["sessions", "rename", alpha, "my", "own", "title"]);
    env.ok(&["sessions", "pin", alpha]);
    env.ok(&["sessions", "archive", beta]);
    env.ok(&["sessions", "delete", gamma]);

    let connected = weft_client::start::connect_or_start(
        &Home::at(env.home.path()),
        app_hello(),
        Some(Path::new(env!("CARGO_BIN_EXE_weft"))),
    )
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let client = connected.client;
    let listed: Vec<SessionInfo> = client
        .send(verb::ListSessions {
            workdir: None,
            archived: None,
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let shown: Vec<(&str, &str)> = listed
        .iter()
        .map(|s| (s.session_key.as_str(), s.title.as_str()))
        .collect();
    // Pinned first under its own title; archived and deleted ones are off the list.
    assert_eq!(
        shown,
        [
            (alpha.as_str(), "my own title"),
            (delta.as_str(), "pelican delta turn")
        ]
    );
    assert!(listed[0].pinned && !listed[1].pinned, "{listed:?}");
    // The sidebar's Archived section asks for them too: marked, after the others' order.
    let all: Vec<SessionInfo> = client
        .send(verb::ListSessions {
            workdir: None,
            archived: Some(true),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let marked: Vec<(&str, bool, bool)> = all
        .iter()
        .map(|s| (s.session_key.as_str(), s.pinned, s.archived))
        .collect();
    assert_eq!(
        marked,
        [
            (alpha.as_str(), true, false),
            (delta.as_str(), false, false),
            (beta.as_str(), false, true)
        ]
    );
    let (_, library, _) = env.json(&["sessions", "--json"]);
    let library_keys = strings(&library, "sessionKey");
    assert_eq!(library_keys, [alpha.as_str(), delta.as_str()], "{library}");

    // An archived session is found again by its words; a deleted one is not.
    let hits: Vec<SearchHit> = client
        .send(verb::Search {
            query: "pelican".into(),
            limit: Some(10),
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut found: Vec<&str> = hits.iter().map(|h| h.session_key.as_str()).collect();
    found.sort_unstable();
    let mut want = [alpha.as_str(), beta.as_str(), delta.as_str()];
    want.sort_unstable();
    assert_eq!(found, want, "{hits:?}");

    // Unarchived, it is back where its time puts it.
    env.ok(&["sessions", "archive", beta, "--undo"]);
    let listed: Vec<SessionInfo> = client
        .send(verb::ListSessions {
            workdir: None,
            archived: None,
        })
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let keys: Vec<&str> = listed.iter().map(|s| s.session_key.as_str()).collect();
    assert_eq!(keys, [alpha.as_str(), delta.as_str(), beta.as_str()]);
}
