//! Real repositories in temporary folders, driven by the real `git`.

use std::path::{Path, PathBuf};
use std::process::Command;

use super::*;
use crate::merge::{Mode, Plan};

fn git(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .output()
        .unwrap_or_else(|e| panic!("git: {e}"));
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

struct Fixture {
    _tmp: tempfile::TempDir,
    repo: PathBuf,
    wts: Worktrees,
}

fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let repo = tmp.path().join("proj");
    std::fs::create_dir_all(&repo).unwrap_or_else(|e| panic!("{e}"));
    git(&repo, &["init", "-q", "-b", "main"]);
    std::fs::write(repo.join("a.txt"), "one\ntwo\nthree\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(repo.join(".gitignore"), ".env*\nnode_modules/\ncache/\n")
        .unwrap_or_else(|e| panic!("{e}"));
    git(&repo, &["add", "."]);
    git(&repo, &["commit", "-q", "-m", "first"]);
    let repo = repo.canonicalize().unwrap_or_else(|e| panic!("{e}"));
    let wts = Worktrees {
        root: tmp.path().join("worktrees"),
        registry: Registry::new(&tmp.path().join("home")),
        port_base: 41000,
    };
    Fixture {
        _tmp: tmp,
        repo,
        wts,
    }
}

fn write(path: &Path, text: &str) {
    if let Some(p) = path.parent() {
        std::fs::create_dir_all(p).unwrap_or_else(|e| panic!("{e}"));
    }
    std::fs::write(path, text).unwrap_or_else(|e| panic!("{e}"));
}

#[test]
fn a_worktree_gets_its_branch_folder_and_a_port_range_no_other_holds() {
    let f = fixture();
    let a = f
        .wts
        .create(&f.repo, "one", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let b = f
        .wts
        .create(&f.repo, "auto", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(a.entry.path, f.wts.root.join("proj/one"));
    assert_eq!(a.entry.branch, "weft/one");
    assert_eq!(a.entry.base, "main");
    assert!(a.entry.path.join("a.txt").is_file());
    assert_eq!(
        git(&a.entry.path, &["symbolic-ref", "--short", "HEAD"]),
        "weft/one"
    );
    assert_eq!((a.entry.port, b.entry.port), (41000, 41010));
    assert_eq!(b.entry.port_range(), "41010-41019");
    assert!(
        b.entry.name.contains('-') && b.entry.name != "auto",
        "{}",
        b.entry.name
    );
    // The same name again is refused, and a name git cannot take.
    assert!(matches!(
        f.wts.create(&f.repo, "one", None, false),
        Err(Error::Exists(_))
    ));
    assert!(matches!(
        f.wts.create(&f.repo, "../x", None, false),
        Err(Error::BadName(_))
    ));
    // A removed worktree's range is free again; a live one's never is.
    f.wts
        .remove(&a.entry.path, &[])
        .unwrap_or_else(|e| panic!("{e}"));
    let c = f
        .wts
        .create(&f.repo, "three", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.entry.port, 41000);
    assert_eq!(f.wts.registry.list().map(|l| l.len()).unwrap_or(0), 2);
}

#[test]
fn from_starts_the_branch_elsewhere_and_keeps_that_branch_as_its_base() {
    let f = fixture();
    git(&f.repo, &["checkout", "-q", "-b", "dev"]);
    write(&f.repo.join("dev.txt"), "dev");
    git(&f.repo, &["add", "."]);
    git(&f.repo, &["commit", "-q", "-m", "dev"]);
    git(&f.repo, &["checkout", "-q", "main"]);
    let c = f
        .wts
        .create(&f.repo, "x", Some("dev"), false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(c.entry.base, "dev");
    assert!(c.entry.path.join("dev.txt").is_file());
}

#[test]
fn config_acts_only_when_trusted_and_copies_only_ignored_files() {
    let f = fixture();
    write(
        &f.repo.join(".weft/worktree.toml"),
        "include = [\".env*\", \"a.txt\"]\nlink = [\"cache\"]\nsetup = \"echo set up > made.txt\"\n",
    );
    write(&f.repo.join(".env"), "KEY=1\n");
    write(&f.repo.join("sub/.env.local"), "KEY=2\n");
    write(&f.repo.join("cache/blob"), "shared");
    write(&f.repo.join("a.txt"), "local edit\n");
    let untrusted = f
        .wts
        .create(&f.repo, "u", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!untrusted.entry.path.join(".env").exists());
    assert_eq!(untrusted.config, WorktreeConfig::default());
    let t = f
        .wts
        .create(&f.repo, "t", None, true)
        .unwrap_or_else(|e| panic!("{e}"));
    let p = &t.entry.path;
    assert_eq!(
        std::fs::read_to_string(p.join(".env")).unwrap_or_default(),
        "KEY=1\n"
    );
    assert_eq!(
        std::fs::read_to_string(p.join("sub/.env.local")).unwrap_or_default(),
        "KEY=2\n"
    );
    // A tracked file is the branch's own, never overwritten by the main checkout's.
    assert_eq!(
        std::fs::read_to_string(p.join("a.txt")).unwrap_or_default(),
        "one\ntwo\nthree\n"
    );
    assert!(std::fs::symlink_metadata(p.join("cache")).is_ok_and(|m| m.file_type().is_symlink()));
    // Neither the copied ignored files nor the shared folder make it dirty.
    let s = f.wts.status(&t.entry).unwrap_or_else(|e| panic!("{e}"));
    assert!(s.dirty.is_empty(), "{:?}", s.dirty);
    // Setup runs in the worktree with its ports, output in its log.
    let home = f.wts.root.join("../home");
    let line = t.config.setup.clone().unwrap_or_default();
    let run = hook::run(
        &home,
        &t.entry,
        "setup",
        &format!("{line}; echo port=$WEFT_PORT"),
        false,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    assert!(run.ok());
    assert!(p.join("made.txt").is_file());
    let log = std::fs::read_to_string(&run.log).unwrap_or_default();
    assert!(log.contains(&format!("port={}", t.entry.port)), "{log}");
    // Removal takes the symlink with it and leaves the shared folder alone.
    std::fs::remove_file(p.join("made.txt")).unwrap_or_else(|e| panic!("{e}"));
    f.wts.remove(p, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(f.repo.join("cache/blob").is_file());
}

#[test]
fn remove_refuses_changes_a_live_session_and_what_weft_did_not_make_and_keeps_the_branch() {
    let f = fixture();
    let c = f
        .wts
        .create(&f.repo, "w", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let p = c.entry.path.clone();
    write(&p.join("a.txt"), "changed\n");
    let e = f.wts.remove(&p, &[]).err();
    assert!(
        matches!(&e, Some(Error::Dirty { files, .. }) if files == &["a.txt".to_string()]),
        "{e:?}"
    );
    assert!(e
        .map(|e| e.to_string())
        .unwrap_or_default()
        .contains("commit"));
    git(&p, &["commit", "-qam", "work"]);
    assert!(matches!(
        f.wts.remove(&p, &["echo:1".into()]),
        Err(Error::Live { .. })
    ));
    // A worktree made by hand is not Weft's.
    let own = f.wts.root.join("mine");
    git(
        &f.repo,
        &[
            "worktree",
            "add",
            "-q",
            own.to_str().unwrap_or(""),
            "-b",
            "mine",
        ],
    );
    assert!(matches!(f.wts.remove(&own, &[]), Err(Error::NotOurs(_))));
    assert!(own.is_dir());
    let st = f.wts.status(&c.entry).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (st.ahead, st.behind, st.branch.as_deref()),
        (1, 0, Some("weft/w"))
    );
    f.wts.remove(&p, &[]).unwrap_or_else(|e| panic!("{e}"));
    assert!(!p.exists());
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%s", "weft/w"]),
        "work"
    );
}

#[test]
fn the_repositorys_hooks_do_not_run() {
    let f = fixture();
    let hook = f.repo.join(".git/hooks/post-checkout");
    write(
        &hook,
        "#!/bin/sh\necho ran > \"$(git rev-parse --show-toplevel)/HOOK\"\n",
    );
    let _ = Command::new("chmod").arg("+x").arg(&hook).status();
    let c = f
        .wts
        .create(&f.repo, "h", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    assert!(!c.entry.path.join("HOOK").exists());
}

fn edit_and_plan(f: &Fixture, name: &str, text: &str, mode: Mode) -> (Entry, Plan) {
    let c = f
        .wts
        .create(&f.repo, name, None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    write(&c.entry.path.join("a.txt"), text);
    write(&c.entry.path.join("new.txt"), "new\n");
    let plan = Plan {
        mode,
        message: "Edit a\n\nbecause".into(),
        ..Plan::default()
    };
    (c.entry, plan)
}

#[test]
fn merge_commits_the_worktree_and_makes_a_merge_commit() {
    let f = fixture();
    let (e, plan) = edit_and_plan(&f, "m", "one\nTWO\nthree\n", Mode::Merge);
    let out = merge::land(&e, &plan).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.conflicts.is_empty());
    let head = git(&f.repo, &["rev-parse", "HEAD"]);
    assert_eq!(out.commit.as_deref(), Some(head.as_str()));
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%P"])
            .split(' ')
            .count(),
        2
    );
    assert_eq!(
        std::fs::read_to_string(f.repo.join("a.txt")).unwrap_or_default(),
        "one\nTWO\nthree\n"
    );
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%s", "weft/m"]),
        "Edit a"
    );
}

#[test]
fn squash_makes_one_commit_and_rebase_fast_forwards() {
    let f = fixture();
    let (e, plan) = edit_and_plan(&f, "s", "one\nTWO\nthree\n", Mode::Squash);
    let out = merge::land(&e, &plan).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.conflicts.is_empty());
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%P"])
            .split(' ')
            .count(),
        1
    );
    assert_eq!(git(&f.repo, &["log", "-1", "--format=%s"]), "Edit a");
    assert!(f.repo.join("new.txt").is_file());
    // Rebase: main moved on since the branch was made.
    let c = f
        .wts
        .create(&f.repo, "r", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    write(&c.entry.path.join("r.txt"), "r\n");
    write(&f.repo.join("main.txt"), "m\n");
    git(&f.repo, &["add", "."]);
    git(&f.repo, &["commit", "-q", "-m", "main moves"]);
    let plan = Plan {
        mode: Mode::Rebase,
        message: "r".into(),
        ..Plan::default()
    };
    let out = merge::land(&c.entry, &plan).unwrap_or_else(|e| panic!("{e}"));
    assert!(out.conflicts.is_empty());
    assert_eq!(git(&f.repo, &["log", "-1", "--format=%s"]), "r");
    assert_eq!(
        git(&f.repo, &["log", "-1", "--format=%P"])
            .split(' ')
            .count(),
        1
    );
    assert!(f.repo.join("r.txt").is_file() && f.repo.join("main.txt").is_file());
}

#[test]
fn a_conflict_is_reported_with_its_hunks_and_the_base_is_left_clean() {
    let f = fixture();
    for mode in [Mode::Merge, Mode::Squash, Mode::Rebase] {
        let name = format!("c{mode:?}").to_lowercase();
        let (e, plan) = edit_and_plan(&f, &name, "one\nBRANCH\nthree\n", mode);
        write(&f.repo.join("a.txt"), &format!("one\nMAIN {name}\nthree\n"));
        git(&f.repo, &["commit", "-qam", "main edits a"]);
        let before = git(&f.repo, &["rev-parse", "HEAD"]);
        let out = merge::land(&e, &plan).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(out.commit, None, "{mode:?}");
        assert_eq!(out.conflicts.len(), 1, "{mode:?}");
        assert_eq!(out.conflicts[0].path, "a.txt");
        let hunk = out.conflicts[0].hunks.join("");
        assert!(hunk.contains("BRANCH") && hunk.contains("MAIN"), "{hunk}");
        assert!(hunk.starts_with("<<<<<<<"), "{hunk}");
        assert_eq!(git(&f.repo, &["rev-parse", "HEAD"]), before);
        assert_eq!(git(&f.repo, &["status", "--porcelain"]), "", "{mode:?}");
        assert_eq!(git(&e.path, &["status", "--porcelain"]), "", "{mode:?}");
    }
}

#[test]
fn merge_refuses_a_base_with_changes_or_another_branch_checked_out() {
    let f = fixture();
    let (e, plan) = edit_and_plan(&f, "x", "one\nTWO\nthree\n", Mode::Merge);
    write(&f.repo.join("a.txt"), "dirty\n");
    let err = merge::land(&e, &plan)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(
        err.contains("uncommitted") && err.contains("stash"),
        "{err}"
    );
    git(&f.repo, &["checkout", "-q", "--", "a.txt"]);
    git(&f.repo, &["checkout", "-q", "-b", "other"]);
    let err = merge::land(&e, &plan)
        .err()
        .map(|e| e.to_string())
        .unwrap_or_default();
    assert!(err.contains("check out `main`"), "{err}");
}

#[test]
fn push_goes_to_the_remote_and_pr_runs_gh_with_base_head_and_title() {
    let f = fixture();
    let bare = f
        .repo
        .parent()
        .map(|p| p.join("remote.git"))
        .unwrap_or_default();
    git(
        &f.repo,
        &["init", "-q", "--bare", bare.to_str().unwrap_or("")],
    );
    git(
        &f.repo,
        &["remote", "add", "origin", bare.to_str().unwrap_or("")],
    );
    let (e, mut plan) = edit_and_plan(&f, "p", "one\nTWO\nthree\n", Mode::Merge);
    plan.push = true;
    let out = merge::land(&e, &plan).unwrap_or_else(|e| panic!("{e}"));
    let pushed = git(&bare, &["rev-parse", "weft/p"]);
    assert_eq!(out.commit.as_deref(), Some(pushed.as_str()));
    // Nothing merged locally.
    assert_eq!(git(&f.repo, &["log", "-1", "--format=%s"]), "first");
    // The unit tests do not put a fake `gh` on PATH (that is the CLI suite's); a missing
    // `gh` is a typed error naming it.
    plan.pr = true;
    if Command::new("gh").arg("--version").output().is_err() {
        let err = merge::land(&e, &plan)
            .err()
            .map(|e| e.to_string())
            .unwrap_or_default();
        assert!(err.contains("gh pr create"), "{err}");
    }
}

#[test]
fn marked_blocks_are_whole() {
    let text =
        "a\n<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\nc\n<<<<<<< HEAD\n1\n=======\n2\n>>>>>>> b\n";
    let blocks = merge::marked_blocks(text);
    assert_eq!(blocks.len(), 2);
    assert_eq!(blocks[0], "<<<<<<< HEAD\nx\n=======\ny\n>>>>>>> b\n");
}

#[test]
fn a_sandboxed_hook_writes_only_in_its_worktree_or_does_not_run() {
    let f = fixture();
    let c = f
        .wts
        .create(&f.repo, "sb", None, false)
        .unwrap_or_else(|e| panic!("{e}"));
    let outside = f.repo.join("outside.txt");
    let line = format!(
        "echo in > inside.txt; echo out > {}; true",
        outside.display()
    );
    let home = f.wts.root.join("../home");
    let run = hook::run(&home, &c.entry, "setup", &line, true).unwrap_or_else(|e| panic!("{e}"));
    if weft_sandbox::probe().mechanism == weft_sandbox::Mechanism::Unavailable {
        // Fail closed: asked for the sandbox, none here, nothing ran.
        assert!(run.skipped.is_some(), "{run:?}");
        assert!(!c.entry.path.join("inside.txt").exists());
    } else {
        assert!(
            run.ok(),
            "{run:?}: {}",
            std::fs::read_to_string(&run.log).unwrap_or_default()
        );
        assert!(c.entry.path.join("inside.txt").is_file());
    }
    assert!(
        !outside.exists(),
        "a sandboxed setup wrote outside its worktree"
    );
}
