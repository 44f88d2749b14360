//! The watch: a snapshot asks git only about the paths something happened to, and looks
//! at everything whenever that log cannot be trusted; the trees are the same either way.

use super::Repo;
use weft_checkpoint::LookedAt;

const KEY: &str = "codex:watch";

fn many(n: usize) -> Vec<(String, String)> {
    (0..n)
        .map(|i| (format!("d{}/f{i}.txt", i % 5), format!("file {i}\n")))
        .collect()
}

fn repo_of(files: &[(String, String)]) -> Repo {
    let refs: Vec<(&str, &str)> = files
        .iter()
        .map(|(p, t)| (p.as_str(), t.as_str()))
        .collect();
    Repo::with(&refs)
}

fn paths(repo: &Repo, cp: &weft_checkpoint::Checkpoints, from: &str, to: &str) -> Vec<String> {
    let _ = repo;
    cp.diff(from, to)
        .unwrap()
        .files
        .into_iter()
        .map(|f| f.path)
        .collect()
}

#[test]
fn a_turn_asks_git_only_about_what_it_changed() {
    let repo = repo_of(&many(50));
    let cp = repo.open();
    let first = cp.snapshot(KEY, "turn 1 before").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Everything);

    repo.write("d1/f1.txt", "changed\n");
    repo.write("d2/f2.txt", "changed too\n");
    std::fs::remove_file(repo.path.join("d3/f3.txt")).unwrap();
    repo.write("new/deep/n.txt", "new\n");
    let after = cp.snapshot(KEY, "turn 1 after").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Paths(4));
    assert_eq!(
        paths(&repo, &cp, &first.commit, &after.commit),
        ["d1/f1.txt", "d2/f2.txt", "d3/f3.txt", "new/deep/n.txt"]
    );

    // The next turn starts where this one ended: nothing is run, nothing written.
    let next = cp.snapshot_if_changed(KEY, "turn 2 before").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Nothing);
    assert_eq!(next, after);
    assert_eq!(cp.history(KEY).unwrap().len(), 2);

    // A file in the folder made last turn (not watched: named to every snapshot).
    repo.write("new/deep/n.txt", "edited\n");
    let edited = cp.snapshot_if_changed(KEY, "turn 2 before").unwrap();
    assert_ne!(edited.commit, after.commit);
    assert_eq!(
        paths(&repo, &cp, &after.commit, &edited.commit),
        ["new/deep/n.txt"]
    );
    assert_eq!(
        repo.git(&["show", &format!("{}:new/deep/n.txt", edited.commit)]),
        "edited\n"
    );
    // Checkpoints opened anew (the daemon restarted) start with a whole look.
    let again = repo.open();
    assert_eq!(again.snapshot(KEY, "x").unwrap().tree, edited.tree);
    assert_eq!(again.looked_at(), LookedAt::Everything);
}

#[test]
fn what_the_watch_cannot_follow_makes_the_snapshot_look_at_everything() {
    let mut files = many(20);
    files.push((".gitignore".into(), "*.log\nbuild/\n".into()));
    let repo = repo_of(&files);
    repo.write("keep.log", "a log\n");
    repo.write("build/out.bin", "out\n");
    let cp = repo.open();
    let base = cp.snapshot(KEY, "base").unwrap();

    // A folder moved: its watch would name the old path.
    std::fs::rename(repo.path.join("d1"), repo.path.join("moved")).unwrap();
    let moved = cp.snapshot(KEY, "moved").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Everything);
    let changed = paths(&repo, &cp, &base.commit, &moved.commit);
    assert_eq!(changed.len(), 4, "{changed:?}");
    assert!(
        changed.iter().all(|p| p.starts_with("moved/")),
        "{changed:?}"
    );
    // After the whole look, edits inside the moved folder are seen.
    repo.write("moved/f1.txt", "edited after the move\n");
    let edited = cp.snapshot(KEY, "edited").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Tracked(1));
    assert_eq!(
        paths(&repo, &cp, &moved.commit, &edited.commit),
        ["moved/f1.txt"]
    );

    // The ignore rules changed: a file that was ignored is now captured, though nothing
    // happened to the file itself.
    repo.write(".gitignore", "build/\n");
    let unignored = cp.snapshot(KEY, "unignored").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Everything);
    assert_eq!(
        paths(&repo, &cp, &edited.commit, &unignored.commit),
        [".gitignore", "keep.log"]
    );

    // The user's index changed (a `git add`): what is tracked may have changed.
    repo.git(&["add", "-f", "build/out.bin"]);
    let added = cp.snapshot(KEY, "added").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Everything);
    assert_eq!(
        paths(&repo, &cp, &unignored.commit, &added.commit),
        ["build/out.bin"]
    );
}

#[test]
fn an_ignored_folder_costs_nothing_and_the_ignored_files_a_turn_changed_are_named() {
    let mut files = many(10);
    files.push((".gitignore".into(), "node_modules/\n.env\n".into()));
    let repo = repo_of(&files);
    repo.write("node_modules/x/index.js", "x\n");
    let cp = repo.open();
    let before = cp.snapshot(KEY, "before").unwrap();
    assert!(before.ignored.is_empty(), "{:?}", before.ignored);
    // An install rewrites the ignored tree: not watched below its top, so git is not
    // even asked; the folder's new package is seen and named.
    repo.write("node_modules/x/index.js", "y\n");
    repo.write("node_modules/y/index.js", "y\n");
    let after = cp.snapshot_if_changed(KEY, "after").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Nothing);
    assert_eq!(after.commit, before.commit);
    assert_eq!(after.ignored, ["node_modules/"]);
    // An ignored file beside tracked ones is asked about, not captured, and named; a
    // tracked file touched without a change is neither.
    repo.write(".env", "SECRET=1\n");
    repo.write("d1/f1.txt", "file 1\n");
    let after = cp.snapshot_if_changed(KEY, "after").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Paths(2));
    assert_eq!(after.tree, before.tree);
    assert_eq!(after.ignored, [".env"]);
    // Beside a real change, in the turn's "after" checkpoint.
    std::fs::remove_file(repo.path.join(".env")).unwrap();
    repo.write("d2/f2.txt", "changed\n");
    let end = cp.snapshot(KEY, "end").unwrap();
    assert_ne!(end.tree, before.tree);
    assert_eq!(end.ignored, [".env"]);
}

#[test]
fn two_sessions_in_one_folder_each_see_the_others_changes() {
    let repo = repo_of(&many(10));
    let cp = repo.open();
    let a0 = cp.snapshot("a:1", "a before").unwrap();
    let b0 = cp.snapshot_if_changed("b:1", "b before").unwrap();
    assert_eq!(a0.tree, b0.tree);
    repo.write("d0/f0.txt", "by b\n");
    let b1 = cp.snapshot("b:1", "b after").unwrap();
    // Nothing happened since b's snapshot, but a's last checkpoint is older: a's next
    // turn starts with a commit of its own.
    let a1 = cp.snapshot_if_changed("a:1", "a next").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Nothing);
    assert_eq!(a1.tree, b1.tree);
    assert_ne!(a1.commit, a0.commit);
    assert_eq!(cp.head("a:1").unwrap().unwrap().commit, a1.commit);
}

/// The tree a snapshot that looks at everything writes for the folder as it is now.
fn whole_look_tree(repo: &Repo) -> String {
    let shadow = tempfile::tempdir().unwrap();
    let options = weft_checkpoint::Options {
        watch: false,
        ..Default::default()
    };
    let cp = weft_checkpoint::Checkpoints::open_with(&repo.path, shadow.path(), options).unwrap();
    cp.snapshot("whole:look", "whole").unwrap().tree
}

#[test]
fn tracked_files_are_staged_without_git_status_and_anything_else_is_asked_about() {
    use std::os::unix::fs::PermissionsExt;
    let repo = repo_of(&many(20));
    let cp = repo.open();
    cp.snapshot(KEY, "base").unwrap();

    // Edited, deleted, made executable: all tracked, so git is not asked what they are.
    repo.write("d1/f1.txt", "edited\n");
    std::fs::remove_file(repo.path.join("d2/f2.txt")).unwrap();
    let exe = repo.path.join("d3/f3.txt");
    std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
    let one = cp.snapshot(KEY, "tracked").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Tracked(3));
    assert_eq!(one.tree, whole_look_tree(&repo));

    // A new file beside an edit: asked about, and captured.
    repo.write("d1/f1.txt", "edited again\n");
    repo.write("d4/new.txt", "new\n");
    let two = cp.snapshot(KEY, "new file").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Paths(2));
    assert_eq!(two.tree, whole_look_tree(&repo));

    // The new file is tracked now: its next edit needs no question.
    repo.write("d4/new.txt", "newer\n");
    let three = cp.snapshot(KEY, "new file edited").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Tracked(1));
    assert_eq!(three.tree, whole_look_tree(&repo));

    // A deleted file comes back: no longer tracked by the kept index, so asked about.
    repo.write("d2/f2.txt", "back\n");
    let four = cp.snapshot(KEY, "back").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Paths(1));
    assert_eq!(four.tree, whole_look_tree(&repo));

    // A tracked file replaced by a folder: asked about, and the folder's files captured.
    let file = repo.path.join("d0/f0.txt");
    std::fs::remove_file(&file).unwrap();
    std::fs::create_dir(&file).unwrap();
    repo.write("d0/f0.txt/inside.txt", "inside\n");
    let five = cp.snapshot(KEY, "folder").unwrap();
    assert!(
        matches!(cp.looked_at(), LookedAt::Paths(_)),
        "{:?}",
        cp.looked_at()
    );
    assert_eq!(five.tree, whole_look_tree(&repo));
    let changed = paths(&repo, &cp, &four.commit, &five.commit);
    assert_eq!(changed, ["d0/f0.txt", "d0/f0.txt/inside.txt"]);

    // And its file, tracked since, is edited without a question.
    repo.write("d0/f0.txt/inside.txt", "edited inside\n");
    let six = cp.snapshot(KEY, "inside edited").unwrap();
    assert_eq!(cp.looked_at(), LookedAt::Tracked(1));
    assert_eq!(six.tree, whole_look_tree(&repo));
}
