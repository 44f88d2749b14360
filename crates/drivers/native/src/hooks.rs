//! Hooks: commands a workspace configures in `.weft/hooks.json` to run around tool
//! calls, given `{"hook", "tool_name", "tool_input"[, "tool_output", "is_error"]}` as
//! JSON on stdin. They run outside the sandbox, so only in a workspace the user trusted
//! (an untrusted one's file is not even read), with the tools' environment (no model
//! key: [`crate::secrets`]). A PreToolUse hook that exits non-zero blocks the call; its stderr is
//! the reason the model is told. PostToolUse hooks are told the outcome.
//!
//! ```json
//! { "PreToolUse":  [{ "matcher": "bash|write", "command": "./scripts/check-call.sh" }],
//!   "PostToolUse": [{ "command": "logger -t weft" }] }
//! ```
//! `matcher` is tool names separated by `|`, or `*` / absent for every tool.

use std::path::Path;
use std::time::Duration;

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};
use tokio::io::AsyncWriteExt;

use crate::guard::{Call, GuardCx, GuardStep, Verdict};

#[derive(Debug, Clone, Default, Deserialize)]
struct Hook {
    #[serde(default)]
    matcher: Option<String>,
    command: String,
}

#[derive(Debug, Clone, Default, Deserialize)]
#[serde(default)]
struct HooksFile {
    #[serde(rename = "PreToolUse")]
    pre: Vec<Hook>,
    #[serde(rename = "PostToolUse")]
    post: Vec<Hook>,
}

fn load(workdir: &Path) -> Result<HooksFile, String> {
    let path = workdir.join(".weft").join("hooks.json");
    match weft_workspace::files::read_config(&path, weft_workspace::files::CONFIG_CAP) {
        Ok(Some(text)) => {
            serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))
        }
        Ok(None) => Ok(HooksFile::default()),
        Err(e) => Err(format!("{}: {e}", path.display())),
    }
}

fn matches(hook: &Hook, tool: &str) -> bool {
    match hook.matcher.as_deref().map(str::trim) {
        None | Some("") | Some("*") => true,
        Some(m) => m.split('|').any(|n| n.trim() == tool),
    }
}

/// Runs `command` with `payload` on stdin and `env` as its whole environment;
/// `Err(stderr)` when it exits non-zero.
async fn run(
    workdir: &Path,
    command: &str,
    payload: &Value,
    env: &[(String, String)],
) -> Result<(), String> {
    let mut child = tokio::process::Command::new("bash")
        .arg("-c")
        .arg(command)
        .current_dir(workdir)
        .env_clear()
        .envs(env.iter().map(|(k, v)| (k, v)))
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .map_err(|e| format!("cannot start hook {command:?}: {e}"))?;
    if let Some(mut stdin) = child.stdin.take() {
        let _ = stdin.write_all(payload.to_string().as_bytes()).await;
    }
    let out = tokio::time::timeout(Duration::from_secs(60), child.wait_with_output())
        .await
        .map_err(|_| format!("hook {command:?} took longer than 60 s"))?
        .map_err(|e| format!("hook {command:?} failed: {e}"))?;
    if out.status.success() {
        Ok(())
    } else {
        let stderr = String::from_utf8_lossy(&out.stderr).trim().to_string();
        Err(if stderr.is_empty() {
            format!(
                "blocked by the PreToolUse hook {command:?} ({})",
                out.status
            )
        } else {
            stderr
        })
    }
}

/// The PreToolUse step of the guard chain.
pub struct PreToolUse;

#[async_trait]
impl GuardStep for PreToolUse {
    fn name(&self) -> &'static str {
        "PreToolUse hooks"
    }
    async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict {
        if !cx.flags.workspace_trusted {
            return Verdict::Allow;
        }
        let file = match load(cx.workspace.root()) {
            Ok(f) => f,
            Err(e) => {
                return Verdict::Deny(format!("the hooks file is broken, so no tool runs: {e}"))
            }
        };
        let payload =
            json!({"hook": "PreToolUse", "tool_name": call.name, "tool_input": call.input});
        for hook in file.pre.iter().filter(|h| matches(h, call.name)) {
            if let Err(reason) = run(cx.workspace.root(), &hook.command, &payload, cx.env).await {
                return Verdict::Deny(reason);
            }
        }
        Verdict::Allow
    }
}

/// What a finished call tells the PostToolUse hooks.
pub struct Finished<'a> {
    /// The tool's name.
    pub tool: &'a str,
    /// Its arguments.
    pub input: &'a Value,
    /// Its result.
    pub output: &'a str,
    /// Whether it failed.
    pub is_error: bool,
}

/// Runs the PostToolUse hooks of a trusted workspace for a finished call (their
/// failures are logged only).
pub async fn post_tool_use(
    workdir: &Path,
    trusted: bool,
    env: &[(String, String)],
    call: Finished<'_>,
) {
    if !trusted {
        return;
    }
    let Ok(file) = load(workdir) else {
        return;
    };
    let Finished {
        tool,
        input,
        output,
        is_error,
    } = call;
    let payload = json!({"hook": "PostToolUse", "tool_name": tool, "tool_input": input,
                         "tool_output": output, "is_error": is_error});
    for hook in file.post.iter().filter(|h| matches(h, tool)) {
        if let Err(e) = run(workdir, &hook.command, &payload, env).await {
            tracing::warn!("PostToolUse hook failed: {e}");
        }
    }
}
