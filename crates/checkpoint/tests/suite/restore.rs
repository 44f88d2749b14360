//! Restoring a folder to a checkpoint: whole, one file, over newer edits, undone.

use super::Repo;
use weft_checkpoint::Error;

const KEY: &str = "codex:019a";

/// A repository and a turn: `pre` before it, `post` after it edited `a.txt`, added
/// `dir/new.txt` and deleted `b.txt`.
fn turn() -> (Repo, weft_checkpoint::Checkpoints, String, String) {
    let repo = Repo::with(&[("a.txt", "a1\n"), ("b.txt", "b1\n"), ("c.txt", "c1\n")]);
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "turn 1 pre").unwrap();
    repo.write("a.txt", "a2\n");
    repo.write("dir/new.txt", "new\n");
    std::fs::remove_file(repo.path.join("b.txt")).unwrap();
    let post = cp.snapshot(KEY, "turn 1 post").unwrap();
    (repo, cp, pre.commit, post.commit)
}

#[test]
fn restore_the_whole_turn_then_undo_it() {
    let (repo, cp, pre, post) = turn();
    let index_before = std::fs::read(repo.path.join(".git/index")).unwrap();
    let restored = cp.restore(KEY, &pre, None, Some(&post)).unwrap();
    assert_eq!(repo.read("a.txt").as_deref(), Some("a1\n"));
    assert_eq!(repo.read("b.txt").as_deref(), Some("b1\n"));
    assert_eq!(repo.read("dir/new.txt"), None);
    assert!(!repo.path.join("dir").exists(), "the emptied folder stayed");
    assert_eq!(restored.deleted, ["dir/new.txt"]);
    assert_eq!(restored.written, ["a.txt", "b.txt"]);
    // The restore was checkpointed first, on the session's chain.
    assert_eq!(cp.head(KEY).unwrap().unwrap().commit, restored.undo.commit);
    let undo_tree = repo.git(&["rev-parse", &format!("{post}^{{tree}}")]);
    assert_eq!(restored.undo.tree, undo_tree.trim());
    assert_eq!(
        std::fs::read(repo.path.join(".git/index")).unwrap(),
        index_before
    );
    // `git status` agrees the files are what HEAD has, bar the turn's new file.
    assert_eq!(repo.git(&["status", "--porcelain"]), "");

    // Undo: back to what the turn left.
    let undone = cp.restore(KEY, &restored.undo.commit, None, None).unwrap();
    assert_eq!(repo.read("a.txt").as_deref(), Some("a2\n"));
    assert_eq!(repo.read("b.txt"), None);
    assert_eq!(repo.read("dir/new.txt").as_deref(), Some("new\n"));
    assert_ne!(undone.undo.commit, restored.undo.commit);
}

#[test]
fn restore_one_file() {
    let (repo, cp, pre, post) = turn();
    let restored = cp
        .restore(KEY, &pre, Some(&["a.txt"]), Some(&post))
        .unwrap();
    assert_eq!(restored.written, ["a.txt"]);
    assert_eq!(repo.read("a.txt").as_deref(), Some("a1\n"));
    // The rest of the turn stays.
    assert_eq!(repo.read("b.txt"), None);
    assert_eq!(repo.read("dir/new.txt").as_deref(), Some("new\n"));
    // A folder as the path restores what is under it.
    let restored = cp.restore(KEY, &pre, Some(&["dir"]), None).unwrap();
    assert_eq!(restored.deleted, ["dir/new.txt"]);
}

#[test]
fn a_restore_over_newer_edits_is_refused_until_confirmed() {
    let (repo, cp, pre, post) = turn();
    repo.write("c.txt", "the user's newer edit\n");
    repo.write("e.txt", "and a new file\n");
    let head_before = cp.head(KEY).unwrap().unwrap().commit;
    let err = cp.restore(KEY, &pre, None, Some(&post)).unwrap_err();
    let Error::Changed { paths } = err else {
        panic!("{err}")
    };
    assert_eq!(paths, ["c.txt", "e.txt"]);
    // Refused before anything: no file written, no checkpoint taken.
    assert_eq!(repo.read("a.txt").as_deref(), Some("a2\n"));
    assert_eq!(cp.head(KEY).unwrap().unwrap().commit, head_before);
    // One file the user did not touch is still fine with the same expectation.
    cp.restore(KEY, &pre, Some(&["a.txt"]), Some(&post))
        .unwrap();

    // Confirmed: restored, and the newer edit can be had back from the undo checkpoint.
    let restored = cp.restore(KEY, &pre, None, None).unwrap();
    assert_eq!(repo.read("c.txt").as_deref(), Some("c1\n"));
    assert_eq!(repo.read("e.txt"), None);
    cp.restore(KEY, &restored.undo.commit, Some(&["c.txt", "e.txt"]), None)
        .unwrap();
    assert_eq!(
        repo.read("c.txt").as_deref(),
        Some("the user's newer edit\n")
    );
    assert_eq!(repo.read("e.txt").as_deref(), Some("and a new file\n"));
}

#[test]
fn restore_keeps_what_no_checkpoint_captured() {
    let repo = Repo::with(&[(".gitignore", ".env\n"), ("a.txt", "a\n")]);
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    repo.write(".env", "SECRET=1\n");
    repo.write("a.txt", "b\n");
    cp.restore(KEY, &pre.commit, None, None).unwrap();
    assert_eq!(repo.read("a.txt").as_deref(), Some("a\n"));
    assert_eq!(repo.read(".env").as_deref(), Some("SECRET=1\n"));
}

/// The hunks of `unified` (after its `---`/`+++` header), each with its `@@` line.
fn hunks(unified: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for line in unified.lines() {
        if line.starts_with("@@") {
            out.push(String::new());
        }
        if let Some(h) = out.last_mut() {
            h.push_str(line);
            h.push('\n');
        }
    }
    out
}

#[test]
fn revert_one_hunk_of_a_file_and_undo_it() {
    let lines = |edit: &dyn Fn(usize) -> String| (1..=30).map(edit).collect::<String>();
    let repo = Repo::with(&[("p.txt", &lines(&|i| format!("line {i}\n")))]);
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "turn 1 pre").unwrap();
    // Two changes far apart: two hunks.
    let edited = lines(&|i| match i {
        2 => "line two\n".into(),
        28 => "line twenty-eight\n".into(),
        _ => format!("line {i}\n"),
    });
    repo.write("p.txt", &edited);
    let post = cp.snapshot(KEY, "turn 1 post").unwrap();
    let diff = cp.diff(&pre.commit, &post.commit).unwrap();
    let both = hunks(&diff.files[0].unified);
    assert_eq!(both.len(), 2, "{}", diff.files[0].unified);

    let done = cp.revert_hunk(KEY, "p.txt", &both[1]).unwrap();
    assert_eq!(done.written, ["p.txt"]);
    let now = repo.read("p.txt").unwrap();
    assert!(
        now.contains("line two\n") && now.contains("line 28\n"),
        "{now}"
    );
    // Checkpointed first: restoring to the undo point brings the hunk back.
    assert_eq!(cp.head(KEY).unwrap().unwrap().commit, done.undo.commit);
    cp.restore(KEY, &done.undo.commit, None, None).unwrap();
    assert_eq!(repo.read("p.txt").unwrap(), edited);

    // The file edited since, where the hunk was: refused, the file left alone.
    repo.write(
        "p.txt",
        &edited.replace("line twenty-eight", "the user's own"),
    );
    match cp.revert_hunk(KEY, "p.txt", &both[1]) {
        Err(Error::Changed { paths }) => assert_eq!(paths, ["p.txt"]),
        other => panic!("expected Changed, got {other:?}"),
    }
    assert!(repo.read("p.txt").unwrap().contains("the user's own"));
    // Nothing outside the folder, nothing that is not a hunk.
    for (path, hunk) in [
        ("../p.txt", both[0].as_str()),
        ("/etc/passwd", both[0].as_str()),
        ("p.txt", "no hunk here"),
    ] {
        assert!(
            matches!(cp.revert_hunk(KEY, path, hunk), Err(Error::BadHunk(_))),
            "{path} {hunk}"
        );
    }
}
