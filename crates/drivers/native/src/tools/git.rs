//! Git tools of the coding pack: status, diff, log, commit — the `git` program in the
//! workspace, with no pager and no prompts.
//!
//! They run in Weft's own process, outside the sandbox and without a question (status,
//! diff and log are read-only), in a repository whose `.git` a command or a cloned
//! repository may have written. Git runs programs its configuration names, so every
//! such setting the repository could carry is overridden on the command line (which
//! wins over every config file): `core.fsmonitor`, `core.hooksPath` (and `--no-verify`),
//! the pager, external diff and textconv drivers (`--no-ext-diff --no-textconv`),
//! signing (`gpg.program` through `commit.gpgSign` and `log.showSignature`), automatic
//! gc, and every clean/smudge/process filter the repository's own config defines
//! (emptied; the user's global filters, such as git-lfs, stay). A `.git` that is a
//! symbolic link is refused: it would make the repository's config one from anywhere.
//! The environment loses every `GIT_*` variable but the author's and committer's
//! identity (`GIT_DIR` and friends would point git elsewhere), and gets
//! `GIT_TERMINAL_PROMPT=0`, `GIT_PAGER=cat` and, for the read-only tools,
//! `GIT_OPTIONAL_LOCKS=0`. The system config (`/etc/gitconfig`) is the administrator's
//! and stays read.

use std::path::Path;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use super::{field, first_line, Native, NoArgs, Spec, ToolCx, ToolOutput};

/// Settings that would run a program, turned off for every git the tools start.
const HARDENED: &[&str] = &[
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "core.pager=cat",
    "commit.gpgSign=false",
    "tag.gpgSign=false",
    "log.showSignature=false",
    "gc.auto=0",
    "maintenance.auto=false",
];

/// `-c filter.<name>.<key>=` for every filter the repository's own config (local or
/// worktree scope, includes followed) defines: an empty command runs nothing.
async fn repo_filters(root: &Path, env: &[(String, String)]) -> Vec<String> {
    let out = tokio::process::Command::new("git")
        .args(["config", "--includes", "--show-scope", "--name-only"])
        .args(["--get-regexp", r"^filter\..*\.(clean|smudge|process)$"])
        .current_dir(root)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true)
        .output()
        .await;
    let Ok(out) = out else {
        return Vec::new();
    };
    let mut args = Vec::new();
    for line in String::from_utf8_lossy(&out.stdout).lines() {
        let Some((scope, key)) = line.split_once('\t') else {
            continue;
        };
        if !matches!(scope, "local" | "worktree") {
            continue;
        }
        if let Some((name, _)) = key.strip_prefix("filter.").and_then(|k| k.rsplit_once('.')) {
            for k in ["clean", "smudge", "process"] {
                args.push("-c".to_string());
                args.push(format!("filter.{name}.{k}="));
            }
            args.push("-c".to_string());
            args.push(format!("filter.{name}.required=false"));
        }
    }
    args
}

/// The environment git gets: the tools' own, without `GIT_*` but the identity.
fn git_env(env: &[(String, String)], read_only: bool) -> Vec<(String, String)> {
    let mut out: Vec<(String, String)> = env
        .iter()
        .filter(|(k, _)| {
            !k.starts_with("GIT_")
                || k.starts_with("GIT_AUTHOR_")
                || k.starts_with("GIT_COMMITTER_")
        })
        .cloned()
        .collect();
    out.push(("GIT_TERMINAL_PROMPT".into(), "0".into()));
    out.push(("GIT_PAGER".into(), "cat".into()));
    if read_only {
        out.push(("GIT_OPTIONAL_LOCKS".into(), "0".into()));
    }
    out
}

async fn git(cx: &ToolCx<'_>, argv: &[&str], read_only: bool) -> ToolOutput {
    let dotgit = cx.root().join(".git");
    if std::fs::symlink_metadata(&dotgit).is_ok_and(|m| m.file_type().is_symlink()) {
        return ToolOutput::error(format!(
            "the workspace's .git is a symbolic link (to {}); the git tools do not follow it",
            std::fs::read_link(&dotgit).unwrap_or_default().display()
        ));
    }
    let env = git_env(cx.env, read_only);
    let filters = repo_filters(cx.root(), &env).await;
    let mut cmd = tokio::process::Command::new("git");
    cmd.arg("--no-pager");
    for setting in HARDENED {
        cmd.arg("-c").arg(setting);
    }
    cmd.args(&filters)
        .args(argv)
        .current_dir(cx.root())
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::null())
        .kill_on_drop(true);
    let out = tokio::select! {
        o = cmd.output() => o,
        _ = cx.cancel.cancelled() => return ToolOutput::error("stopped"),
    };
    match out {
        Ok(o) => {
            let mut text = String::from_utf8_lossy(&o.stdout).into_owned();
            text.push_str(&String::from_utf8_lossy(&o.stderr));
            if o.status.success() {
                ToolOutput::ok(if text.trim().is_empty() {
                    "(nothing)".into()
                } else {
                    text
                })
            } else {
                ToolOutput::error(format!(
                    "git {} failed: {text}",
                    argv.first().unwrap_or(&"")
                ))
            }
        }
        Err(e) => ToolOutput::error(format!("cannot run git: {e}")),
    }
}

macro_rules! read_only_git {
    ($ty:ident, $name:literal, $desc:literal, $argv:expr) => {
        #[doc = $desc]
        pub struct $ty;

        #[async_trait]
        impl Native for $ty {
            const SPEC: Spec = Spec {
                name: $name,
                description: $desc,
                read_only: true,
                kind: ToolKind::Other,
            };
            type Args = NoArgs;
            async fn call(&self, _: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
                git(cx, $argv, true).await
            }
        }
    };
}

read_only_git!(
    GitStatus,
    "git_status",
    "Show the working tree status (git status).",
    &["status", "--short", "--branch"]
);
read_only_git!(
    GitDiff,
    "git_diff",
    "Show unstaged and staged changes (git diff HEAD).",
    &[
        "diff",
        "HEAD",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv"
    ]
);
read_only_git!(
    GitLog,
    "git_log",
    "Show the last 20 commits (git log --oneline).",
    &[
        "log",
        "--oneline",
        "-n",
        "20",
        "--no-color",
        "--no-ext-diff",
        "--no-textconv",
        "--no-show-signature"
    ]
);

/// `git_commit {message}`: stages every change and commits it.
pub struct GitCommit;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct CommitArgs {
    message: String,
}

#[async_trait]
impl Native for GitCommit {
    const SPEC: Spec = Spec {
        name: "git_commit",
        description:
            "Stage every change in the workspace (git add -A) and commit it with the message.",
        read_only: false,
        kind: ToolKind::Other,
    };
    type Args = CommitArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("git_commit {}", first_line(field(input, "message"), 60))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        if a.message.trim().is_empty() {
            return ToolOutput::error("the commit message is empty");
        }
        let added = git(cx, &["add", "-A"], false).await;
        if added.is_error {
            return added;
        }
        git(
            cx,
            &["commit", "--no-verify", "--no-gpg-sign", "-m", &a.message],
            false,
        )
        .await
    }
}
