//! Git tools of the coding pack: status, diff, log, commit — the `git` program in the
//! workspace, with no pager and no prompts.

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};
use weft_protocol::ToolKind;

use super::{args, field, first_line, Tool, ToolCx, ToolOutput};

async fn git(cx: &ToolCx<'_>, argv: &[&str]) -> ToolOutput {
    let mut cmd = tokio::process::Command::new("git");
    cmd.args(argv)
        .current_dir(cx.root())
        .env_clear()
        .envs(cx.env.iter().map(|(k, v)| (k, v)))
        .env("GIT_PAGER", "cat")
        .env("GIT_TERMINAL_PROMPT", "0")
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
        impl Tool for $ty {
            fn name(&self) -> &str {
                $name
            }
            fn description(&self) -> &str {
                $desc
            }
            fn schema(&self) -> Value {
                json!({"type": "object", "properties": {}})
            }
            fn read_only(&self) -> bool {
                true
            }
            fn kind(&self) -> ToolKind {
                ToolKind::Other
            }
            async fn run(&self, _input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
                git(cx, $argv).await
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
    &["diff", "HEAD", "--no-color"]
);
read_only_git!(
    GitLog,
    "git_log",
    "Show the last 20 commits (git log --oneline).",
    &["log", "--oneline", "-n", "20", "--no-color"]
);

/// `git_commit {message}`: stages every change and commits it.
pub struct GitCommit;

#[derive(Deserialize)]
struct CommitArgs {
    message: String,
}

#[async_trait]
impl Tool for GitCommit {
    fn name(&self) -> &str {
        "git_commit"
    }
    fn description(&self) -> &str {
        "Stage every change in the workspace (git add -A) and commit it with the message."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {"message": {"type": "string"}}, "required": ["message"]})
    }
    fn read_only(&self) -> bool {
        false
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    fn summary(&self, input: &Value) -> String {
        format!("git_commit {}", first_line(field(input, "message"), 60))
    }
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
        let a: CommitArgs = match args("git_commit", input) {
            Ok(a) => a,
            Err(e) => return e,
        };
        if a.message.trim().is_empty() {
            return ToolOutput::error("the commit message is empty");
        }
        let added = git(cx, &["add", "-A"]).await;
        if added.is_error {
            return added;
        }
        git(cx, &["commit", "-m", &a.message]).await
    }
}
