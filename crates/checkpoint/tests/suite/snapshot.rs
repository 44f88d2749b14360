//! Snapshots: chains, folders of every kind, what is and is not captured.

use super::{git_in, Repo};
use weft_checkpoint::{ref_name, Checkpoints, Options};

const KEY: &str = "claude:0b1c-4d";

#[test]
fn a_chain_of_pre_and_post_per_turn_on_one_ref() {
    let repo = Repo::with(&[("a.txt", "one\n")]);
    let cp = repo.open();
    assert!(!cp.is_shadow());
    assert!(cp.head(KEY).unwrap().is_none());

    let pre1 = cp.snapshot(KEY, "turn 1 pre").unwrap();
    repo.write("a.txt", "two\n");
    let post1 = cp.snapshot(KEY, "turn 1 post").unwrap();
    let pre2 = cp.snapshot(KEY, "turn 2 pre").unwrap();
    repo.write("b.txt", "new\n");
    let post2 = cp.snapshot(KEY, "turn 2 post").unwrap();

    // The first is parentless; each next one's parent is the one before.
    let parents = |c: &str| repo.git(&["rev-list", "--parents", "-n1", c]);
    assert_eq!(parents(&pre1.commit).split_whitespace().count(), 1);
    for (child, parent) in [(&post1, &pre1), (&pre2, &post1), (&post2, &pre2)] {
        assert_eq!(
            parents(&child.commit).split_whitespace().nth(1),
            Some(parent.commit.as_str())
        );
    }
    assert_eq!(post1.tree, pre2.tree, "nothing changed between the turns");
    assert_eq!(cp.head(KEY).unwrap().unwrap().commit, post2.commit);
    let history = cp.history(KEY).unwrap();
    let messages: Vec<&str> = history.iter().map(|(_, m)| m.as_str()).collect();
    assert_eq!(
        messages,
        ["turn 2 post", "turn 2 pre", "turn 1 post", "turn 1 pre"]
    );
    assert_eq!(
        repo.git(&["rev-parse", &ref_name(KEY)]).trim(),
        post2.commit
    );
    let author = repo.git(&["log", "-1", "--format=%an <%ae> %cn", &post2.commit]);
    assert_eq!(author.trim(), "weft <weft@localhost> weft");

    cp.delete(KEY).unwrap();
    assert!(cp.head(KEY).unwrap().is_none());
    assert!(cp.history(KEY).unwrap().is_empty());
}

#[test]
fn two_sessions_keep_two_chains() {
    let repo = Repo::with(&[("a.txt", "one\n")]);
    let cp = repo.open();
    let a = cp.snapshot("codex:1", "a").unwrap();
    let b = cp.snapshot("codex:2", "b").unwrap();
    assert_ne!(a.commit, b.commit);
    assert_eq!(cp.head("codex:1").unwrap().unwrap().commit, a.commit);
    // A key without a colon never collides with an agent's folder of refs.
    cp.snapshot("codex", "c").unwrap();
    cp.snapshot("x:y/../.lock @{", "d").unwrap();
}

#[test]
fn ref_names_are_legal_for_odd_keys() {
    let repo = Repo::init();
    for key in [
        "claude:0b1c",
        "acp:hermes/a b",
        "x:..",
        ".lock",
        "a:b:c",
        ":",
        "é:ü~^?*[\\",
        "x:@{1}",
    ] {
        let name = ref_name(key);
        git_in(&repo.path, &["check-ref-format", &name]);
    }
}

#[test]
fn a_repository_without_commits() {
    let repo = Repo::init();
    repo.write("a.txt", "one\n");
    let before = repo.fingerprint();
    let cp = repo.open();
    let first = cp.snapshot(KEY, "pre").unwrap();
    assert_eq!(before, repo.fingerprint());
    repo.write("b.txt", "two\n");
    let before = repo.fingerprint();
    let second = cp.snapshot(KEY, "post").unwrap();
    assert_eq!(before, repo.fingerprint());
    let diff = cp.diff(&first.commit, &second.commit).unwrap();
    assert_eq!(diff.files.len(), 1);
    assert_eq!(diff.files[0].path, "b.txt");
    assert!(
        !repo.path.join(".git/index").exists(),
        "the user's index was made"
    );
}

#[test]
fn a_folder_outside_git_uses_a_shadow() {
    let repo = Repo::folder();
    repo.write("notes.md", "hello\n");
    repo.write("src/x.py", "print(1)\n");
    let cp = repo.open();
    assert!(cp.is_shadow());
    let pre = cp.snapshot(KEY, "pre").unwrap();
    repo.write("notes.md", "hello\nworld\n");
    std::fs::remove_file(repo.path.join("src/x.py")).unwrap();
    let post = cp.snapshot(KEY, "post").unwrap();
    assert!(!repo.path.join(".git").exists(), "the folder got a .git");
    let diff = cp.diff(&pre.commit, &post.commit).unwrap();
    let paths: Vec<&str> = diff.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["notes.md", "src/x.py"]);

    // Reopened, it finds the same shadow and the same chain.
    let again = Checkpoints::open(&repo.path, &repo.shadow).unwrap();
    assert_eq!(again.head(KEY).unwrap().unwrap().commit, post.commit);
    again.restore(KEY, &pre.commit, None, None).unwrap();
    assert_eq!(repo.read("notes.md").as_deref(), Some("hello\n"));
    assert_eq!(repo.read("src/x.py").as_deref(), Some("print(1)\n"));
}

#[test]
fn a_subfolder_checkpoints_the_whole_work_tree() {
    let repo = Repo::with(&[("app/main.rs", "fn main() {}\n"), ("Cargo.lock", "v1\n")]);
    let cp = Checkpoints::open(&repo.path.join("app"), &repo.shadow).unwrap();
    assert_eq!(cp.top(), repo.path);
    let pre = cp.snapshot(KEY, "pre").unwrap();
    repo.write("Cargo.lock", "v2\n");
    let post = cp.snapshot(KEY, "post").unwrap();
    let diff = cp.diff(&pre.commit, &post.commit).unwrap();
    assert_eq!(diff.files[0].path, "Cargo.lock");
}

#[test]
fn a_linked_worktree_uses_its_own_index() {
    let repo = Repo::with(&[("a.txt", "one\n")]);
    let wt = repo.root.join("wt");
    repo.git(&[
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        wt.to_str().unwrap(),
    ]);
    let main_before = repo.fingerprint();
    let wt_index = repo.path.join(".git/worktrees/wt/index");
    let wt_index_before = std::fs::read(&wt_index).unwrap();

    let cp = Checkpoints::open(&wt, &repo.shadow).unwrap();
    assert_eq!(cp.top(), wt);
    let pre = cp.snapshot(KEY, "pre").unwrap();
    std::fs::write(wt.join("a.txt"), "changed in the worktree\n").unwrap();
    let post = cp.snapshot(KEY, "post").unwrap();
    let diff = cp.diff(&pre.commit, &post.commit).unwrap();
    assert_eq!(diff.files.len(), 1);
    assert_eq!(diff.files[0].path, "a.txt");

    assert_eq!(std::fs::read(&wt_index).unwrap(), wt_index_before);
    assert_eq!(main_before, repo.fingerprint());
    // The ref lives in the shared repository.
    assert_eq!(repo.git(&["rev-parse", &ref_name(KEY)]).trim(), post.commit);
}

#[test]
fn ignored_files_are_not_captured() {
    let repo = Repo::with(&[(".gitignore", ".env\nnode_modules/\n"), ("a.txt", "a\n")]);
    repo.write(".env", "SECRET=1\n");
    repo.write("node_modules/x/index.js", "x\n");
    let cp = repo.open();
    let c = cp.snapshot(KEY, "pre").unwrap();
    let listed = repo.git(&["ls-tree", "-r", "--name-only", &c.tree]);
    assert_eq!(listed, ".gitignore\na.txt\n");
}

#[test]
fn a_large_untracked_file_is_listed_not_stored() {
    let repo = Repo::with(&[("a.txt", "a\n")]);
    repo.write("big.bin", &"x".repeat(5000));
    repo.write("small.txt", "s\n");
    // Inside a new folder, which `git status` reports as the folder alone.
    repo.write("new/huge.bin", &"y".repeat(3000));
    repo.write("new/ok.txt", "ok\n");
    let options = Options {
        max_untracked_size: 1000,
        ..Options::default()
    };
    let cp = Checkpoints::open_with(&repo.path, &repo.shadow, options).unwrap();
    let c = cp.snapshot(KEY, "pre").unwrap();
    let skipped: Vec<(&str, u64)> = c
        .skipped
        .iter()
        .map(|s| (s.path.as_str(), s.size))
        .collect();
    assert_eq!(skipped, [("big.bin", 5000), ("new/huge.bin", 3000)]);
    let listed = repo.git(&["ls-tree", "-r", "--name-only", &c.tree]);
    assert_eq!(listed, "a.txt\nnew/ok.txt\nsmall.txt\n");
    // Not even as a loose object.
    let oid = repo.git(&["hash-object", "big.bin"]);
    let out = std::process::Command::new("git")
        .args(["cat-file", "-e", oid.trim()])
        .current_dir(&repo.path)
        .output()
        .unwrap();
    assert!(!out.status.success(), "the large file's blob was written");
}

#[test]
fn an_edit_in_the_same_second_as_the_users_index_is_seen() {
    // Racy git: a file rewritten with the same size in the second the index was written
    // looks unchanged by its stat data; git rehashes it only because the index file is not
    // older than it. A copy of the index made later must not hide that.
    let repo = Repo::with(&[("a.txt", "a\n")]);
    repo.git(&["config", "core.trustctime", "false"]);
    let path = repo.path.join("a.txt");
    let stamp = std::fs::metadata(&path).unwrap().modified().unwrap();
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    std::fs::write(&path, "b\n").unwrap();
    let touch = |p: &std::path::Path| {
        std::fs::File::options()
            .write(true)
            .open(p)
            .unwrap()
            .set_modified(stamp)
            .unwrap()
    };
    touch(&path);
    touch(&repo.path.join(".git/index"));
    std::thread::sleep(std::time::Duration::from_millis(1100));
    let post = cp.snapshot(KEY, "post").unwrap();
    assert_ne!(pre.tree, post.tree, "the edit was missed");
}

#[test]
fn a_bare_repository_or_a_missing_folder_is_refused() {
    let repo = Repo::folder();
    git_in(&repo.path, &["init", "-q", "--bare"]);
    let err = Checkpoints::open(&repo.path, &repo.shadow).unwrap_err();
    assert!(
        matches!(err, weft_checkpoint::Error::NotAWorkTree(_)),
        "{err}"
    );
    let err = Checkpoints::open(&repo.path.join("nope"), &repo.shadow).unwrap_err();
    assert!(
        matches!(err, weft_checkpoint::Error::NotAFolder(_)),
        "{err}"
    );
    assert!(!repo.shadow.exists());
}
