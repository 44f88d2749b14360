//! Worktrees on the wire: starting a session in a new git worktree, what the sessions'
//! worktrees are, and landing a session's branch (`mergeSession`).

use serde::{Deserialize, Serialize};
use ts_rs::TS;

/// Start the new session in a new git worktree (branch `weft/<name>`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase", default)]
pub struct WorktreeRequest {
    /// Its name; `auto` picks a free one.
    pub name: String,
    /// The commit or branch it starts from (default: the workspace's HEAD).
    #[ts(optional = nullable)]
    pub from: Option<String>,
}

/// The worktree a session works in.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct SessionWorktree {
    /// Its name.
    pub name: String,
    /// Its folder.
    pub path: String,
    /// Its branch (`weft/<name>`).
    pub branch: String,
    /// The branch it merges into.
    pub base: String,
}

/// A worktree Weft made, as it stands.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct WorktreeInfo {
    /// Its name.
    pub name: String,
    /// The repository's folder it was made from.
    pub repo: String,
    /// Its folder.
    pub path: String,
    /// The branch checked out there (null: a detached HEAD).
    pub branch: Option<String>,
    /// The branch it merges into.
    pub base: String,
    /// Commits on it its base has not.
    pub ahead: u32,
    /// Commits on its base it has not.
    pub behind: u32,
    /// It has uncommitted changes.
    pub dirty: bool,
    /// Its ports, `first-last` (`WEFT_PORT_RANGE`).
    pub ports: String,
    /// Sessions started in it (keys).
    pub sessions: Vec<String>,
    /// The log of its `setup` command, when one ran.
    #[ts(optional = nullable)]
    pub setup_log: Option<String>,
}

/// How `mergeSession` lands a branch in its base.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub enum MergeMode {
    /// A merge commit.
    #[default]
    Merge,
    /// One commit with the branch's changes.
    Squash,
    /// The branch's commits replayed onto the base, which fast-forwards.
    Rebase,
}

/// A file that did not merge.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MergeConflict {
    /// Relative to the repository's top.
    pub path: String,
    /// Each conflicting block as git marked it (`<<<<<<<` … `>>>>>>>`).
    pub hunks: Vec<String>,
}

/// What `mergeSession` did.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct MergeOutcome {
    /// The base branch.
    pub base: String,
    /// The session's branch.
    pub branch: String,
    /// The base's new head (or, with push, the pushed head); null on conflicts.
    pub commit: Option<String>,
    /// What did not merge; the merge was aborted and the base left as it was.
    pub conflicts: Vec<MergeConflict>,
    /// What `gh pr create` printed (the pull request's address), with `pr`.
    #[ts(optional = nullable)]
    pub pr: Option<String>,
    /// The pull request's checks, as `gh pr checks` listed them just after it was
    /// opened (often none yet, or all pending), with `pr`.
    #[serde(default)]
    pub checks: Vec<PrCheck>,
    /// Why the checks could not be listed, in gh's words, with `pr`.
    #[serde(default)]
    #[ts(optional = nullable)]
    pub checks_note: Option<String>,
}

/// One check of a pull request (`gh pr checks --json name,state,bucket,link`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PrCheck {
    /// The check's name (a CI job's).
    pub name: String,
    /// gh's state: `PENDING`, `SUCCESS`, `FAILURE`, …
    pub state: String,
    /// gh's grouping: `pass`, `fail`, `pending`, `skipping` or `cancel`.
    pub bucket: String,
    /// The check's page.
    pub link: String,
}
