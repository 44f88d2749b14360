//! Each coding tool on real files (a temp git repo for the git tools), and the coding
//! pack's policy.

use serde_json::json;
use weft_native::pack::{coding::Coding, DomainPack};
use weft_native::tools::Workspace;

use super::support::{write, ToolBench};

#[tokio::test]
async fn read_numbers_lines_and_pages() {
    let b = ToolBench::new();
    write(&b.root(), "a.txt", "one\ntwo\nthree\nfour\n");
    let all = b.run("read", json!({"path": "a.txt"})).await;
    assert!(!all.is_error);
    assert!(
        all.content.contains("     1\tone") && all.content.contains("     4\tfour"),
        "{}",
        all.content
    );
    let page = b
        .run("read", json!({"path": "a.txt", "offset": 2, "limit": 2}))
        .await;
    assert!(page.content.contains("two") && page.content.contains("three"));
    assert!(
        !page.content.contains("one") && page.content.contains("offset 4"),
        "{}",
        page.content
    );
    let missing = b.run("read", json!({"path": "nope.txt"})).await;
    assert!(missing.is_error && missing.content.contains("nope.txt"));
    let bad = b.run("read", json!({"offset": 1})).await;
    assert!(
        bad.is_error && bad.content.contains("missing field `path`"),
        "{}",
        bad.content
    );
}

#[tokio::test]
async fn paths_outside_the_workspace_are_refused() {
    let b = ToolBench::new();
    let outside = tempfile::tempdir().unwrap();
    write(outside.path(), "secret.txt", "s");
    for p in [
        "../secret.txt",
        "/etc/passwd",
        &outside.path().join("secret.txt").display().to_string(),
    ] {
        let r = b.run("read", json!({"path": p})).await;
        assert!(
            r.is_error && r.content.contains("outside the workspace"),
            "{p}: {}",
            r.content
        );
    }
    std::os::unix::fs::symlink(outside.path(), b.root().join("link")).unwrap();
    let r = b
        .run("write", json!({"path": "link/new.txt", "content": "x"}))
        .await;
    assert!(
        r.is_error && r.content.contains("outside the workspace"),
        "{}",
        r.content
    );
    assert!(!outside.path().join("new.txt").exists());
}

#[tokio::test]
async fn ls_glob_and_grep() {
    let b = ToolBench::new();
    write(
        &b.root(),
        "src/main.rs",
        "fn main() {\n    println!(\"needle\");\n}\n",
    );
    write(&b.root(), "src/lib/util.rs", "// needle here\n");
    write(&b.root(), "notes.md", "needle in markdown\n");
    write(&b.root(), "target/debug/x.rs", "needle ignored\n");
    write(&b.root(), ".gitignore", "target/\n");
    b.git(&["init", "-q"]);
    let ls = b.run("ls", json!({"path": "."})).await;
    assert_eq!(
        ls.content
            .lines()
            .filter(|l| *l == "src/" || *l == "notes.md")
            .count(),
        2,
        "{}",
        ls.content
    );
    let glob = b.run("glob", json!({"pattern": "**/*.rs"})).await;
    assert_eq!(
        glob.content, "src/lib/util.rs\nsrc/main.rs",
        "{}",
        glob.content
    );
    let grep = b.run("grep", json!({"pattern": "need(le)"})).await;
    assert!(
        grep.content.contains("src/main.rs:2:") && grep.content.contains("notes.md:1:"),
        "{}",
        grep.content
    );
    assert!(!grep.content.contains("target"), "{}", grep.content);
    let only_rs = b
        .run("grep", json!({"pattern": "needle", "glob": "*.rs"}))
        .await;
    assert!(
        !only_rs.content.contains("notes.md") && only_rs.content.contains("util.rs"),
        "{}",
        only_rs.content
    );
    let in_lib = b
        .run("grep", json!({"pattern": "needle", "path": "src/lib"}))
        .await;
    assert_eq!(in_lib.content, "src/lib/util.rs:1:// needle here");
    let bad = b.run("grep", json!({"pattern": "("})).await;
    assert!(bad.is_error);
}

#[tokio::test]
async fn write_and_edit_keep_the_originals_for_undo() {
    let b = ToolBench::new();
    write(&b.root(), "a.txt", "alpha beta beta\n");
    let w = b
        .run("write", json!({"path": "deep/new.txt", "content": "fresh"}))
        .await;
    assert!(!w.is_error, "{}", w.content);
    assert_eq!(
        std::fs::read_to_string(b.root().join("deep/new.txt")).unwrap(),
        "fresh"
    );
    let once = b
        .run(
            "edit",
            json!({"path": "a.txt", "old_text": "alpha", "new_text": "ALPHA"}),
        )
        .await;
    assert!(!once.is_error, "{}", once.content);
    let twice = b
        .run(
            "edit",
            json!({"path": "a.txt", "old_text": "beta", "new_text": "B"}),
        )
        .await;
    assert!(
        twice.is_error && twice.content.contains("2 times"),
        "{}",
        twice.content
    );
    let none = b
        .run(
            "edit",
            json!({"path": "a.txt", "old_text": "gamma", "new_text": "G"}),
        )
        .await;
    assert!(none.is_error && none.content.contains("not found"));
    assert_eq!(
        std::fs::read_to_string(b.root().join("a.txt")).unwrap(),
        "ALPHA beta beta\n"
    );
    let originals = b.ws.take_originals();
    assert_eq!(
        originals.get(&b.root().join("a.txt")),
        Some(&Some(b"alpha beta beta\n".to_vec()))
    );
    assert_eq!(originals.get(&b.root().join("deep/new.txt")), Some(&None));
}

#[tokio::test]
async fn bash_runs_reports_exit_codes_and_times_out() {
    let b = ToolBench::new();
    let ok = b
        .run("bash", json!({"command": "echo out; echo err >&2; pwd"}))
        .await;
    assert!(!ok.is_error);
    assert!(
        ok.content.contains("out\nerr\n") && ok.content.contains(&b.root().display().to_string()),
        "{}",
        ok.content
    );
    let fail = b.run("bash", json!({"command": "exit 3"})).await;
    assert!(fail.is_error && fail.content.contains("exit code 3"));
    let slow = b
        .run("bash", json!({"command": "sleep 30", "timeout_secs": 1}))
        .await;
    assert!(
        slow.is_error && slow.content.contains("timed out"),
        "{}",
        slow.content
    );
}

#[tokio::test]
async fn git_tools_on_a_real_repository() {
    let b = ToolBench::new();
    b.git(&["init", "-q"]);
    b.git(&["config", "user.name", "t"]);
    b.git(&["config", "user.email", "t@example.com"]);
    write(&b.root(), "a.txt", "one\n");
    let status = b.run("git_status", json!({})).await;
    assert!(status.content.contains("?? a.txt"), "{}", status.content);
    let commit = b
        .run("git_commit", json!({"message": "first commit"}))
        .await;
    assert!(!commit.is_error, "{}", commit.content);
    let log = b.run("git_log", json!({})).await;
    assert!(log.content.contains("first commit"), "{}", log.content);
    write(&b.root(), "a.txt", "two\n");
    let diff = b.run("git_diff", json!({})).await;
    assert!(
        diff.content.contains("-one") && diff.content.contains("+two"),
        "{}",
        diff.content
    );
    let empty = b.run("git_commit", json!({"message": " "})).await;
    assert!(empty.is_error);
}

#[test]
fn the_coding_policy_wants_a_read_before_an_edit() {
    let dir = tempfile::tempdir().unwrap();
    let ws = Workspace::new(dir.path());
    write(ws.root(), "a.txt", "x");
    let edit = json!({"path": "a.txt", "old_text": "x", "new_text": "y"});
    let refused = Coding.policy("edit", &edit, &ws).unwrap_err();
    assert!(refused.contains("read a.txt before"), "{refused}");
    assert!(Coding
        .policy("write", &json!({"path": "a.txt", "content": "z"}), &ws)
        .is_err());
    // A new file needs no read; a read file may be edited.
    assert!(Coding
        .policy("write", &json!({"path": "b.txt", "content": "z"}), &ws)
        .is_ok());
    ws.mark_read(&ws.root().join("a.txt"));
    assert!(Coding.policy("edit", &edit, &ws).is_ok());
    assert!(Coding
        .policy("read", &json!({"path": "../x"}), &ws)
        .is_err());
}
