//! Landing a session's branch: commit what its worktree holds, then merge it into its
//! base in the base repository (a merge commit, a squash, or a rebase and fast-forward),
//! or push it and open a pull request.
//!
//! **A failed merge leaves the base as it was.** On conflicts the files and their
//! conflicting hunks (the blocks between git's markers) are read, then the merge is
//! aborted (`merge --abort`, `reset --merge` for a squash, `rebase --abort` in the
//! worktree for a rebase), so the user's checkout never sits half-merged because of
//! Weft. To make that safe the merge starts only when the base repository has its base
//! branch checked out and no uncommitted changes to tracked files.
//!
//! **Push and pull request instead of a local merge.** `push` pushes the branch to its
//! remote (the base branch's remote, else `origin`, else the only remote), `pr` then runs
//! `gh pr create` with the base, the branch and the message: the merge happens on the
//! forge after review, so nothing is merged locally.

use std::path::Path;
use std::process::{Command, Stdio};

use crate::git::Git;
use crate::{Entry, Error};

/// How the branch lands in its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Mode {
    /// A merge commit (`--no-ff`): the branch's commits stay as they were.
    #[default]
    Merge,
    /// One commit on the base with the branch's changes.
    Squash,
    /// The branch's commits replayed onto the base, which then fast-forwards.
    Rebase,
}

/// What to do.
#[derive(Debug, Clone, Default)]
pub struct Plan {
    /// How to land it locally.
    pub mode: Mode,
    /// The message for the commit of the worktree's changes (and a squash's).
    pub message: String,
    /// Push the branch to its remote instead of merging locally.
    pub push: bool,
    /// Also open a pull request with `gh` (implies `push`).
    pub pr: bool,
}

/// A file that did not merge, with its conflicting blocks as git marked them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Conflict {
    /// Relative to the repository's top.
    pub path: String,
    /// Each block from `<<<<<<<` to `>>>>>>>`, markers included.
    pub hunks: Vec<String>,
}

/// How it went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Outcome {
    /// The base branch.
    pub base: String,
    /// The session's branch.
    pub branch: String,
    /// The commit that landed: the base's new head, or the pushed branch's head; none
    /// on conflicts.
    pub commit: Option<String>,
    /// What did not merge (the merge was aborted).
    pub conflicts: Vec<Conflict>,
    /// What `gh pr create` printed (the pull request's address).
    pub pr: Option<String>,
    /// The pull request's checks as `gh pr checks` listed them just after it was opened
    /// (often none yet, or all pending).
    pub checks: Vec<Check>,
    /// Why the checks could not be listed, in gh's words ("no checks reported…").
    pub checks_note: Option<String>,
}

/// One check of a pull request, as `gh pr checks --json` gives it.
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct Check {
    pub name: String,
    /// gh's state (`PENDING`, `SUCCESS`, `FAILURE`, …).
    #[serde(default)]
    pub state: String,
    /// gh's grouping of the state: `pass`, `fail`, `pending`, `skipping` or `cancel`.
    #[serde(default)]
    pub bucket: String,
    #[serde(default)]
    pub link: String,
}

/// Commits the worktree's changes, then lands the branch as `plan` says.
pub fn land(entry: &Entry, plan: &Plan) -> Result<Outcome, Error> {
    let wt = Git::open(&entry.path)?.with_identity();
    commit_changes(&wt, entry, &plan.message)?;
    let mut outcome = Outcome {
        base: entry.base.clone(),
        branch: entry.branch.clone(),
        commit: None,
        conflicts: Vec::new(),
        pr: None,
        checks: Vec::new(),
        checks_note: None,
    };
    if plan.push || plan.pr {
        push(&wt, entry)?;
        outcome.commit = Some(wt.line(["rev-parse", "HEAD"])?);
        if plan.pr {
            outcome.pr = Some(pull_request(entry, &plan.message)?);
            match pr_checks(entry) {
                Ok(checks) => outcome.checks = checks,
                Err(note) => outcome.checks_note = Some(note),
            }
        }
        return Ok(outcome);
    }
    let base = Git::open(&entry.repo)?.with_identity();
    ready_to_merge(&base, entry)?;
    let conflicts = match plan.mode {
        Mode::Merge => merge_commit(&base, entry, &plan.message)?,
        Mode::Squash => squash(&base, entry, &plan.message)?,
        Mode::Rebase => rebase(&wt, &base, entry)?,
    };
    if conflicts.is_empty() {
        outcome.commit = Some(base.line(["rev-parse", "HEAD"])?);
    }
    outcome.conflicts = conflicts;
    Ok(outcome)
}

fn commit_changes(wt: &Git, entry: &Entry, message: &str) -> Result<(), Error> {
    let mut add: Vec<String> = ["add", "-A", "--", "."].map(String::from).to_vec();
    add.extend(
        entry
            .linked
            .iter()
            .map(|l| format!(":(exclude,top,literal){l}")),
    );
    wt.run(&add)?;
    let staged = wt.output(["diff", "--cached", "--quiet"])?;
    if staged.status.success() {
        return Ok(());
    }
    if message.trim().is_empty() {
        return Err(Error::Refused(
            "the worktree has changes to commit and no message was given".into(),
        ));
    }
    wt.run(["commit", "-q", "-m", message])?;
    Ok(())
}

fn ready_to_merge(base: &Git, entry: &Entry) -> Result<(), Error> {
    let head = base
        .line(["symbolic-ref", "--short", "-q", "HEAD"])
        .unwrap_or_default();
    if head != entry.base {
        return Err(Error::Refused(format!(
            "{} has `{}` checked out, not `{}`, the branch {} merges into; check out `{}` there first",
            entry.repo.display(),
            if head.is_empty() { "a detached HEAD" } else { &head },
            entry.base,
            entry.branch,
            entry.base
        )));
    }
    let changed = base.run(["status", "--porcelain", "--untracked-files=no"])?;
    if !changed.trim().is_empty() {
        return Err(Error::Refused(format!(
            "{} has uncommitted changes; commit or stash them before merging {} into it",
            entry.repo.display(),
            entry.branch
        )));
    }
    Ok(())
}

fn merge_commit(base: &Git, entry: &Entry, message: &str) -> Result<Vec<Conflict>, Error> {
    let subject = message.lines().next().unwrap_or("").trim();
    let title = if subject.is_empty() {
        format!("Merge branch '{}'", entry.branch)
    } else {
        format!("Merge branch '{}': {subject}", entry.branch)
    };
    let out = base.output(["merge", "--no-ff", "--no-edit", "-m", &title, &entry.branch])?;
    if out.status.success() {
        return Ok(Vec::new());
    }
    let conflicts = conflicts(base)?;
    let _ = base.output(["merge", "--abort"]);
    if conflicts.is_empty() {
        return Err(crate::git::failed(
            format!("git merge {}", entry.branch),
            &out,
        ));
    }
    Ok(conflicts)
}

fn squash(base: &Git, entry: &Entry, message: &str) -> Result<Vec<Conflict>, Error> {
    let out = base.output(["merge", "--squash", &entry.branch])?;
    if !out.status.success() {
        let conflicts = conflicts(base)?;
        let _ = base.output(["reset", "--merge"]);
        if conflicts.is_empty() {
            return Err(crate::git::failed(
                format!("git merge --squash {}", entry.branch),
                &out,
            ));
        }
        return Ok(conflicts);
    }
    if base
        .output(["diff", "--cached", "--quiet"])?
        .status
        .success()
    {
        return Err(Error::Refused(format!(
            "{} has nothing that {} does not have already",
            entry.branch, entry.base
        )));
    }
    let message = if message.trim().is_empty() {
        format!("Squashed {}", entry.branch)
    } else {
        message.to_string()
    };
    base.run(["commit", "-q", "-m", &message])?;
    Ok(Vec::new())
}

fn rebase(wt: &Git, base: &Git, entry: &Entry) -> Result<Vec<Conflict>, Error> {
    let out = wt.output(["rebase", &entry.base])?;
    if !out.status.success() {
        let conflicts = conflicts(wt)?;
        let _ = wt.output(["rebase", "--abort"]);
        if conflicts.is_empty() {
            return Err(crate::git::failed(
                format!("git rebase {}", entry.base),
                &out,
            ));
        }
        return Ok(conflicts);
    }
    base.run(["merge", "--ff-only", &entry.branch])?;
    Ok(Vec::new())
}

/// The unmerged files of the checkout `git` runs in, with their marked blocks.
fn conflicts(git: &Git) -> Result<Vec<Conflict>, Error> {
    let names = git.run(["diff", "--name-only", "--diff-filter=U", "-z"])?;
    let top = git.line(["rev-parse", "--show-toplevel"])?;
    Ok(names
        .split('\0')
        .filter(|p| !p.is_empty())
        .map(|path| Conflict {
            path: path.to_string(),
            hunks: std::fs::read(Path::new(&top).join(path))
                .map(|b| marked_blocks(&String::from_utf8_lossy(&b)))
                .unwrap_or_default(),
        })
        .collect())
}

/// The blocks between conflict markers (`<<<<<<< ` … `>>>>>>> `), each whole.
pub(crate) fn marked_blocks(text: &str) -> Vec<String> {
    let mut blocks = Vec::new();
    let mut current: Option<String> = None;
    for line in text.split_inclusive('\n') {
        if line.starts_with("<<<<<<< ") || line.trim_end() == "<<<<<<<" {
            current = Some(String::new());
        }
        if let Some(block) = current.as_mut() {
            block.push_str(line);
            if line.starts_with(">>>>>>> ") || line.trim_end() == ">>>>>>>" {
                blocks.extend(current.take());
            }
        }
    }
    blocks
}

/// The remote the branch goes to: the base branch's, else `origin`, else the only one.
fn remote(wt: &Git, entry: &Entry) -> Result<String, Error> {
    if let Ok(r) = wt.line(["config", "--get", &format!("branch.{}.remote", entry.base)]) {
        if !r.is_empty() && r != "." {
            return Ok(r);
        }
    }
    let remotes = wt.run(["remote"])?;
    let remotes: Vec<&str> = remotes.lines().filter(|l| !l.is_empty()).collect();
    if remotes.contains(&"origin") {
        return Ok("origin".into());
    }
    match remotes.as_slice() {
        [one] => Ok((*one).to_string()),
        [] => Err(Error::Refused(format!(
            "{} has no remote to push {} to (git remote add origin URL)",
            entry.repo.display(),
            entry.branch
        ))),
        _ => Err(Error::Refused(format!(
            "{} has several remotes and none is origin; set branch.{}.remote",
            entry.repo.display(),
            entry.base
        ))),
    }
}

fn push(wt: &Git, entry: &Entry) -> Result<(), Error> {
    let remote = remote(wt, entry)?;
    wt.run(["push", "-q", "--set-upstream", &remote, &entry.branch])?;
    Ok(())
}

/// `gh pr create` in the worktree; what it printed (the pull request's address).
fn pull_request(entry: &Entry, message: &str) -> Result<String, Error> {
    let mut lines = message.lines();
    let title = lines
        .next()
        .map(str::trim)
        .filter(|t| !t.is_empty())
        .unwrap_or(&entry.branch)
        .to_string();
    let body = lines.collect::<Vec<_>>().join("\n").trim().to_string();
    let args = [
        "pr",
        "create",
        "--base",
        &entry.base,
        "--head",
        &entry.branch,
        "--title",
        &title,
        "--body",
        &body,
    ];
    let out = Command::new("gh")
        .args(args)
        .current_dir(&entry.path)
        .stdin(Stdio::null())
        .output()
        .map_err(|source| Error::Spawn {
            command: "gh pr create".into(),
            source,
        })?;
    if !out.status.success() {
        return Err(Error::Git {
            command: "gh pr create".into(),
            status: out.status.code(),
            stderr: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// `gh pr checks BRANCH --json name,state,bucket,link` in the worktree: the pull
/// request's checks, or gh's words when it lists none (it exits non-zero for "no checks
/// reported", and 8 while some are pending, with the list still printed).
fn pr_checks(entry: &Entry) -> Result<Vec<Check>, String> {
    let out = Command::new("gh")
        .args([
            "pr",
            "checks",
            &entry.branch,
            "--json",
            "name,state,bucket,link",
        ])
        .current_dir(&entry.path)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("could not start gh pr checks: {e}"))?;
    let text = String::from_utf8_lossy(&out.stdout);
    if let Ok(checks) = serde_json::from_str::<Vec<Check>>(text.trim()) {
        if out.status.success() || out.status.code() == Some(8) || !checks.is_empty() {
            return Ok(checks);
        }
    }
    let said = String::from_utf8_lossy(&out.stderr).trim().to_string();
    Err(if said.is_empty() {
        format!("gh pr checks exited with {:?}", out.status.code())
    } else {
        said
    })
}
