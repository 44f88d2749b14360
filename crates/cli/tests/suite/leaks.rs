//! The end-of-test search for secrets (`Env`'s drop in support.rs, over
//! `weft_testkit::leaks`) shown to fail a test: a value Weft itself stored — a prompt,
//! in the database's events, turns and snapshots — is found there after the daemon
//! stopped, though nothing printed it.

use std::panic::AssertUnwindSafe;

use super::support::Env;

#[test]
fn a_secret_weft_stored_fails_the_test_at_its_end() {
    let planted = format!("sk-planted-{}-{}", std::process::id(), line!());
    let env = Env::new();
    // Run apart from `Env::weft`, so the value is in no captured output: only stored.
    let out = env
        .cmd(&["run", "--json", &format!("remember {planted}")])
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    env.watch_secret(&planted);
    let caught = std::panic::catch_unwind(AssertUnwindSafe(move || drop(env)));
    let message = caught
        .err()
        .and_then(|e| e.downcast::<String>().ok())
        .map(|m| *m)
        .unwrap_or_default();
    assert!(
        message.contains(&planted) && message.contains(" table "),
        "the search did not find the stored value in the database: {message:?}"
    );
}
