//! Rule files and workspace trust: an untrusted workspace's allow rules are skipped
//! (its deny and ask rules apply), a rule file that would block or exhaust memory is
//! refused, and concurrent "always allow" writes all land.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use weft_shell_guard::rules::{self, Decision, Rules};
use weft_shell_guard::{classify, Context};

fn workspace(rules: &str) -> tempfile::TempDir {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.path().join(".weft")).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(ws.path().join(".weft/permissions.json"), rules)
        .unwrap_or_else(|e| panic!("{e}"));
    ws
}

fn decide(r: &Rules, ws: &Path, line: &str) -> Decision {
    r.decide(&classify(line, &Context::new(ws)))
}

#[test]
fn an_untrusted_workspace_keeps_its_deny_and_ask_rules_not_its_allow_rules() {
    let ws = workspace(
        "{\n  \"deny\": [\"git push\"],\n  \"ask\": [\"npm publish\"],\n  \"allow\": [\"npm test\", \"*\"]\n}\n",
    );
    let untrusted = Rules::load(ws.path(), None, false).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(decide(&untrusted, ws.path(), "npm test"), Decision::None);
    assert!(matches!(
        decide(&untrusted, ws.path(), "git push"),
        Decision::Deny(_)
    ));
    assert!(matches!(
        decide(&untrusted, ws.path(), "npm publish"),
        Decision::Ask(_)
    ));
    let named: Vec<String> = untrusted.problems.iter().map(|p| p.to_string()).collect();
    assert!(
        named.iter().any(|p| p.contains(".weft/permissions.json:4")
            && p.contains("not trusted")
            && p.contains("weft trust")),
        "{named:?}"
    );
    let trusted = Rules::load(ws.path(), None, true).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        decide(&trusted, ws.path(), "npm test"),
        Decision::Allow(_)
    ));
    // The `*` is refused either way, and said where.
    assert!(trusted
        .problems
        .iter()
        .any(|p| p.to_string().contains(":4:")));
}

#[test]
fn the_global_file_is_the_users_own_and_always_applies() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        home.path().join("permissions.json"),
        r#"{"allow": ["npm test"]}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let r = Rules::load(ws.path(), Some(home.path()), false).unwrap_or_else(|e| panic!("{e}"));
    assert!(matches!(
        decide(&r, ws.path(), "npm test"),
        Decision::Allow(_)
    ));
}

/// Loads on a thread of its own: a FIFO opened for reading would block forever.
fn load_or_hang(ws: &Path) -> Result<Rules, String> {
    let ws = ws.to_path_buf();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(Rules::load(&ws, None, true).map_err(|e| e.to_string()));
    });
    rx.recv_timeout(Duration::from_secs(30))
        .unwrap_or_else(|_| panic!("loading the rules blocked"))
}

#[test]
fn a_rule_file_that_is_a_fifo_or_dev_zero_is_refused_without_blocking() {
    let ws = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    std::fs::create_dir_all(ws.path().join(".weft")).unwrap_or_else(|e| panic!("{e}"));
    let file = ws.path().join(".weft/permissions.json");
    let made = std::process::Command::new("mkfifo")
        .arg(&file)
        .status()
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(made.success());
    let e = load_or_hang(ws.path()).err().unwrap_or_default();
    assert!(e.contains("not a regular file"), "{e}");
    std::fs::remove_file(&file).unwrap_or_else(|e| panic!("{e}"));
    std::os::unix::fs::symlink("/dev/zero", &file).unwrap_or_else(|e| panic!("{e}"));
    let e = load_or_hang(ws.path()).err().unwrap_or_default();
    assert!(e.contains("not a regular file"), "{e}");
}

#[test]
fn concurrent_always_allow_writes_never_lose_one() {
    let ws = workspace(r#"{"deny": ["git push"]}"#);
    let threads: Vec<_> = (0..8)
        .map(|t| {
            let root = ws.path().to_path_buf();
            std::thread::spawn(move || {
                for i in 0..6 {
                    rules::add_allow(&root, &format!("make target-{t}-{i}"))
                        .unwrap_or_else(|e| panic!("{e}"));
                }
            })
        })
        .collect();
    for t in threads {
        t.join().unwrap_or_else(|_| panic!("a writer panicked"));
    }
    let r = Rules::load(ws.path(), None, true).unwrap_or_else(|e| panic!("{e}"));
    for t in 0..8 {
        for i in 0..6 {
            let line = format!("make target-{t}-{i}");
            assert!(
                matches!(decide(&r, ws.path(), &line), Decision::Allow(_)),
                "{line} was lost"
            );
        }
    }
    assert!(matches!(
        decide(&r, ws.path(), "git push"),
        Decision::Deny(_)
    ));
    // No temp file is left beside it.
    let left: Vec<String> = std::fs::read_dir(ws.path().join(".weft"))
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".tmp"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}
