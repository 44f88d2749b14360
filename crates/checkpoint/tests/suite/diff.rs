//! A turn's diff, from its two checkpoints.

use super::{sh, Repo};
use weft_checkpoint::FileChange;

const KEY: &str = "gemini:7";

#[test]
fn edits_new_files_deletions_and_a_shell_command() {
    let repo = Repo::with(&[
        ("a.txt", "one\ntwo\nthree\n"),
        ("b.txt", "gone soon\n"),
        ("d.txt", "one fish\n"),
    ]);
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "turn 1 pre").unwrap();
    repo.write("a.txt", "one\n2\nthree\nfour\n");
    repo.write("src/new.rs", "fn new() {}\n");
    std::fs::remove_file(repo.path.join("b.txt")).unwrap();
    // What an agent's shell does, not its edit tool.
    sh(
        &repo.path,
        "sed -i s/one/uno/ d.txt && printf 'made by sh\\n' > sh.txt",
    );
    let post = cp.snapshot(KEY, "turn 1 post").unwrap();

    let diff = cp.diff(&pre.commit, &post.commit).unwrap();
    let summary: Vec<(&str, FileChange, usize, usize)> = diff
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.change, f.added, f.removed))
        .collect();
    assert_eq!(
        summary,
        [
            ("a.txt", FileChange::Modified, 2, 1),
            ("b.txt", FileChange::Deleted, 0, 1),
            ("d.txt", FileChange::Modified, 1, 1),
            ("sh.txt", FileChange::Added, 1, 0),
            ("src/new.rs", FileChange::Added, 1, 0),
        ]
    );
    let a = &diff.files[0];
    assert!(!a.binary);
    assert!(
        a.unified.starts_with("--- a/a.txt\n+++ b/a.txt\n@@"),
        "{}",
        a.unified
    );
    assert!(a.unified.contains("-two\n+2\n"), "{}", a.unified);
    assert!(a.unified.contains("+four\n"), "{}", a.unified);
    assert!(diff.files[1].unified.contains("+++ /dev/null"));
    assert!(diff.files[2].unified.contains("+uno fish"));

    // Unchanged: an empty diff.
    let again = cp.snapshot(KEY, "turn 2 pre").unwrap();
    assert!(cp
        .diff(&post.commit, &again.commit)
        .unwrap()
        .files
        .is_empty());
    // Trees work as well as commits.
    assert_eq!(cp.diff(&pre.tree, &post.tree).unwrap(), diff);
}

#[test]
fn renames_binaries_and_modes() {
    let body: String = (0..40).map(|i| format!("line {i}\n")).collect();
    let repo = Repo::with(&[("old/name.txt", &body), ("run.sh", "echo\n")]);
    std::fs::write(repo.path.join("blob.bin"), [0u8, 1, 2, 3]).unwrap();
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    std::fs::create_dir_all(repo.path.join("new")).unwrap();
    std::fs::rename(
        repo.path.join("old/name.txt"),
        repo.path.join("new/name.txt"),
    )
    .unwrap();
    std::fs::write(repo.path.join("blob.bin"), [0u8, 9, 9]).unwrap();
    sh(&repo.path, "chmod +x run.sh");
    let post = cp.snapshot(KEY, "post").unwrap();
    let diff = cp.diff(&pre.commit, &post.commit).unwrap();
    let by = |p: &str| diff.files.iter().find(|f| f.path == p).unwrap();

    let renamed = by("new/name.txt");
    assert_eq!(renamed.change, FileChange::Renamed);
    assert_eq!(renamed.old_path.as_deref(), Some("old/name.txt"));
    assert_eq!((renamed.added, renamed.removed), (0, 0));
    let blob = by("blob.bin");
    assert!(blob.binary);
    assert!(blob.unified.is_empty());
    let mode = by("run.sh");
    assert_eq!(mode.change, FileChange::Modified);
    assert!(mode.unified.is_empty());
    assert_eq!(diff.files.len(), 3);
}

#[test]
fn an_unknown_checkpoint_is_a_typed_error() {
    let repo = Repo::with(&[("a.txt", "a\n")]);
    let cp = repo.open();
    let c = cp.snapshot(KEY, "pre").unwrap();
    let err = cp.diff(&c.commit, "deadbeef").unwrap_err();
    assert!(
        matches!(err, weft_checkpoint::Error::UnknownCheckpoint(_)),
        "{err}"
    );
    let err = cp.diff(&c.commit, "--output=/tmp/x").unwrap_err();
    assert!(
        matches!(err, weft_checkpoint::Error::UnknownCheckpoint(_)),
        "{err}"
    );
}

#[test]
fn a_file_that_became_a_symlink_or_a_folder() {
    let repo = Repo::with(&[("link", "was a file\n"), ("dir", "was a file too\n")]);
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    sh(&repo.path, "rm link && ln -s target link");
    let post = cp.snapshot(KEY, "post").unwrap();
    let modes = repo.git(&["ls-tree", &post.tree, "link"]);
    assert!(modes.starts_with("120000 "), "{modes}");
    sh(&repo.path, "rm dir && mkdir dir && echo inside > dir/file");
    let last = cp.snapshot(KEY, "later").unwrap();
    let listed = repo.git(&["ls-tree", "-r", "--name-only", &last.tree]);
    assert_eq!(listed, "dir/file\nlink\n");
    let diff = cp.diff(&pre.commit, &last.commit).unwrap();
    let summary: Vec<(&str, FileChange)> = diff
        .files
        .iter()
        .map(|f| (f.path.as_str(), f.change))
        .collect();
    assert_eq!(
        summary,
        [
            ("dir", FileChange::Deleted),
            ("dir/file", FileChange::Added),
            ("link", FileChange::Modified),
        ]
    );
    // And back.
    cp.restore(KEY, &pre.commit, None, None).unwrap();
    assert_eq!(repo.read("dir").as_deref(), Some("was a file too\n"));
    assert_eq!(repo.read("link").as_deref(), Some("was a file\n"));
    assert!(!repo.path.join("link").is_symlink());
}
