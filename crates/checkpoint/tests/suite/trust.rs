//! The user's repository state is untouched, and a workspace's git config runs no code.

use super::{git_in, Repo};
use weft_checkpoint::Checkpoints;

const KEY: &str = "claude:trust";

#[test]
fn index_stash_head_and_files_stay_byte_identical() {
    let repo = Repo::with(&[("a.txt", "a\n"), ("b.txt", "b\n"), ("c.txt", "c\n")]);
    // A stash, a staged change, an unstaged one on top, an untracked file.
    repo.write("c.txt", "stashed\n");
    repo.git(&["stash", "-q"]);
    repo.write("a.txt", "staged\n");
    repo.git(&["add", "a.txt"]);
    repo.write("a.txt", "staged then edited\n");
    repo.write("b.txt", "unstaged\n");
    repo.write("untracked.txt", "u\n");
    let before = repo.fingerprint();

    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    let post = cp.snapshot(KEY, "post").unwrap();
    cp.diff(&pre.commit, &post.commit).unwrap();
    cp.history(KEY).unwrap();
    // The checkpoint has the working tree's contents, not the staged ones.
    let a = repo.git(&["show", &format!("{}:a.txt", pre.commit)]);
    assert_eq!(a, "staged then edited\n");
    assert_eq!(before, repo.fingerprint());

    // A restore changes files, by design, but never the index, HEAD, refs or stash.
    let restored = cp
        .restore(KEY, "HEAD", Some(&["b.txt"]), Some(&post.commit))
        .unwrap();
    assert_eq!(repo.read("b.txt").as_deref(), Some("b\n"));
    let mut after = repo.fingerprint();
    let mut expected = before.clone();
    for map in [&mut after, &mut expected] {
        map.retain(|k, _| k != "status" && k != "file b.txt");
    }
    assert_eq!(expected, after);
    cp.restore(KEY, &restored.undo.commit, None, None).unwrap();
    assert_eq!(before, repo.fingerprint());
    cp.delete(KEY).unwrap();
    assert_eq!(before, repo.fingerprint());
    // While open, the checkpoints keep one index of their own (the folder as the last
    // snapshot saw it); closed, they leave no index behind in the git dir.
    drop(cp);
    let left: Vec<String> = std::fs::read_dir(repo.path.join(".git"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("weft-"))
        .collect();
    assert!(left.is_empty(), "{left:?}");
}

#[test]
fn a_workspace_fsmonitor_and_hooks_never_run() {
    let repo = Repo::with(&[("a.txt", "a\n")]);
    let marker = repo.root.join("marker");
    let hooks = repo.root.join("hooks");
    std::fs::create_dir(&hooks).unwrap();
    let script = format!("#!/bin/sh\necho \"$0\" >> '{}'\n", marker.display());
    let mut trap = Vec::new();
    for name in [
        "fsmonitor",
        "reference-transaction",
        "post-index-change",
        "post-checkout",
        "pre-commit",
        "post-commit",
        "pre-auto-gc",
    ] {
        let path = hooks.join(name);
        std::fs::write(&path, &script).unwrap();
        super::sh(&hooks, &format!("chmod +x {name}"));
        trap.push(path);
    }
    repo.git(&["config", "core.fsmonitor", trap[0].to_str().unwrap()]);
    repo.git(&["config", "core.hooksPath", hooks.to_str().unwrap()]);
    repo.git(&["config", "core.untrackedCache", "true"]);

    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    repo.write("a.txt", "b\n");
    repo.write("new.txt", "n\n");
    let post = cp.snapshot(KEY, "post").unwrap();
    // With the untracked cache on, too, the user's index stays byte-identical.
    let before = repo.fingerprint();
    cp.diff(&pre.commit, &post.commit).unwrap();
    let restored = cp
        .restore(KEY, &pre.commit, None, Some(&post.commit))
        .unwrap();
    cp.restore(KEY, &restored.undo.commit, Some(&["a.txt"]), None)
        .unwrap();
    cp.restore(KEY, &restored.undo.commit, None, None).unwrap();
    cp.history(KEY).unwrap();
    cp.delete(KEY).unwrap();
    Checkpoints::open(&repo.path.join("."), &repo.shadow).unwrap();
    assert_eq!(before, repo.fingerprint());
    assert!(
        !marker.exists(),
        "workspace code ran: {:?}",
        std::fs::read_to_string(&marker)
    );

    // The trap is armed: plain git without the guard springs it.
    let out = std::process::Command::new("git")
        .args(["update-ref", "refs/heads/sprung", "HEAD"])
        .current_dir(&repo.path)
        .output()
        .unwrap();
    assert!(out.status.success());
    assert!(
        marker.exists(),
        "the test's hook never runs, so it proves nothing"
    );
}

#[test]
fn a_workspace_content_filter_never_runs() {
    let repo = Repo::with(&[("a.txt", "a\n"), (".gitattributes", "*.txt filter=trap\n")]);
    let marker = repo.root.join("filter-ran");
    let trap = repo.root.join("trap.sh");
    std::fs::write(
        &trap,
        format!("#!/bin/sh\necho \"$0\" >> '{}'\ncat\n", marker.display()),
    )
    .unwrap();
    super::sh(&repo.root, "chmod +x trap.sh");
    for part in ["clean", "smudge"] {
        repo.git(&[
            "config",
            &format!("filter.trap.{part}"),
            trap.to_str().unwrap(),
        ]);
    }
    let cp = repo.open();
    let pre = cp.snapshot(KEY, "pre").unwrap();
    repo.write("a.txt", "edited\n");
    repo.write("new.txt", "new\n");
    let post = cp.snapshot(KEY, "post").unwrap();
    cp.diff(&pre.commit, &post.commit).unwrap();
    cp.restore(KEY, &pre.commit, None, Some(&post.commit))
        .unwrap();
    assert_eq!(repo.read("a.txt").as_deref(), Some("a\n"));
    assert!(
        !marker.exists(),
        "the workspace's filter ran: {:?}",
        std::fs::read_to_string(&marker)
    );
    // The trap is armed: plain git runs the filter.
    repo.write("b.txt", "b\n");
    repo.git(&["add", "b.txt"]);
    assert!(
        marker.exists(),
        "the test's filter never runs, so it proves nothing"
    );
}

#[test]
fn the_daemons_own_git_variables_do_not_leak_in() {
    // A child with GIT_INDEX_FILE pointing at the user's index: checkpoints must ignore it.
    // Run as a child process so the variable never touches the other tests' environment.
    if std::env::var_os("WEFT_CHECKPOINT_CHILD").is_some() {
        let dir = std::path::PathBuf::from(std::env::var_os("WEFT_CHECKPOINT_DIR").unwrap());
        let cp = Checkpoints::open(&dir, &dir.join("../shadow")).unwrap();
        cp.snapshot(KEY, "pre").unwrap();
        return;
    }
    let repo = Repo::with(&[("a.txt", "a\n")]);
    repo.write("new.txt", "n\n");
    let before = repo.fingerprint();
    let other = repo.root.join("elsewhere");
    git_in(&repo.root, &["init", "-q", other.to_str().unwrap()]);
    let status = std::process::Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "suite::trust::the_daemons_own_git_variables_do_not_leak_in",
        ])
        .env("WEFT_CHECKPOINT_CHILD", "1")
        .env("WEFT_CHECKPOINT_DIR", &repo.path)
        .env("GIT_INDEX_FILE", repo.path.join(".git/index"))
        .env("GIT_DIR", other.join(".git"))
        .env("GIT_WORK_TREE", &other)
        .status()
        .unwrap();
    assert!(status.success());
    assert_eq!(before, repo.fingerprint());
    assert!(
        !repo.git(&["for-each-ref", "refs/weft/"]).is_empty(),
        "the checkpoint went to another repository"
    );
}

#[test]
fn a_live_temporary_index_is_never_taken_for_a_stale_one() {
    // A live copy carries the real index's mtime, which may be days old; only its ctime
    // says it is new. Opening the folder again (another session) must leave it alone.
    let repo = Repo::with(&[("a.txt", "a\n")]);
    let git_dir = repo.path.join(".git");
    let live = git_dir.join("weft-index.99999.1");
    std::fs::copy(git_dir.join("index"), &live).unwrap();
    let days_ago = std::time::SystemTime::now() - std::time::Duration::from_secs(3 * 86400);
    std::fs::File::options()
        .write(true)
        .open(&live)
        .unwrap()
        .set_modified(days_ago)
        .unwrap();
    repo.open();
    assert!(live.exists());
}
