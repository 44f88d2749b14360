//! `bash {command, timeout_secs?}`: a shell command in the workspace, in its own
//! process group so stop or a timeout ends everything it started (a `sleep` in a
//! pipeline included), and so does dropping the call.

use std::time::Duration;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use weft_protocol::ToolKind;

use super::{field, first_line, Native, Spec, ToolCx, ToolOutput};

/// What is kept of a command's output: its start and its end (errors are usually at
/// the end), each this long; the middle is counted, not kept.
const KEEP: usize = super::OUTPUT_CAP / 2 - 200;
const DEFAULT_TIMEOUT: u64 = 120;
/// What the running call's row shows of the output so far: its latest part, this long.
const LIVE: usize = 8 * 1024;
const MAX_TIMEOUT: u64 = 1800;

/// The shell tool.
pub struct Bash;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct BashArgs {
    command: String,
    #[schemars(range(min = 1, max = MAX_TIMEOUT))]
    timeout_secs: Option<u64>,
}

/// Kills the command when dropped (the turn's future went away mid-command).
struct Group(Option<i32>);

impl Group {
    /// Stop, timeout or drop, the command still running: its group and every
    /// descendant. A group kill alone is not enough under bubblewrap: its sandbox runs
    /// in a session of its own and dies with bubblewrap only once set up, so one killed
    /// in its first moments left the sandbox waiting for a signal that never came.
    fn kill(&mut self) {
        if let Some(pgid) = self.0.take() {
            weft_proctree::kill_tree(pgid.unsigned_abs());
        }
    }

    /// The command ended (and was reaped): what it left in the background, in its group.
    fn kill_leftovers(&mut self) {
        if let Some(pgid) = self.0.take() {
            weft_proctree::kill_group(pgid.unsigned_abs());
        }
    }
}

impl Drop for Group {
    fn drop(&mut self) {
        self.kill();
    }
}

#[async_trait]
impl Native for Bash {
    const SPEC: Spec = Spec {
        name: "bash",
        description: "Run a bash command in the workspace folder; stdout and stderr come back together with the exit code. timeout_secs defaults to 120.",
        read_only: false,
        kind: ToolKind::Shell,
    };
    type Args = BashArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("bash {}", first_line(field(input, "command"), 80))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let timeout = Duration::from_secs(
            a.timeout_secs
                .unwrap_or(DEFAULT_TIMEOUT)
                .clamp(1, MAX_TIMEOUT),
        );
        let sandbox = match crate::shell::sandbox_for(cx.env, cx.root()) {
            Ok(s) => s,
            Err(e) => return ToolOutput::error(format!("{e}; the command did not run")),
        };
        run_in(
            &a.command,
            cx.root(),
            cx.env,
            cx.cancel,
            timeout,
            sandbox.as_ref(),
            Some(cx.progress),
        )
        .await
    }
}

/// Runs `command` with bash in `root`, in its own process group, output (stdout and
/// stderr together) kept up to 1 MB; the group is killed on stop, timeout or drop.
/// Under `sandbox` when given (bash itself runs inside it). The output so far goes to
/// `progress` as it comes (its latest part).
pub async fn run_in(
    command: &str,
    root: &std::path::Path,
    env: &[(String, String)],
    cancel: &tokio_util::sync::CancellationToken,
    timeout: Duration,
    sandbox: Option<&weft_sandbox::Policy>,
    progress: Option<&super::Progress>,
) -> ToolOutput {
    let line = format!("exec 2>&1\n{}", command);
    // A sandbox started ahead for this session, when one waits: the line is all it needs.
    let warm = match sandbox.and_then(|p| super::warm::take(p, env, root)) {
        Some(mut spare) => match spare.child.stdin.take() {
            Some(mut stdin) => {
                let sent = stdin.write_all(line.as_bytes()).await.is_ok();
                drop(stdin);
                sent.then_some(spare)
            }
            None => None,
        },
        None => None,
    };
    if let Some(p) = sandbox {
        super::warm::refill(p, env, root);
    }
    if let Some(spare) = warm {
        let out = finish(spare.child, cancel, timeout, progress).await;
        drop(spare.hold);
        return out;
    }
    let (mut cmd, hold) = match sandbox.map(|p| weft_sandbox::shell(p, &line)) {
        Some(Ok(Some(c))) => (tokio::process::Command::from(c.command), c.hold),
        Some(Err(e)) => return ToolOutput::error(format!("{e}; the command did not run")),
        // Asked for but gone since the probe (it does not change): fail closed.
        Some(Ok(None)) => {
            return ToolOutput::error("no OS sandbox works here; the command did not run")
        }
        None => {
            let mut c = tokio::process::Command::new("bash");
            c.arg("-c").arg(&line);
            (c, weft_sandbox::Hold::default())
        }
    };
    super::warm::contain(&mut cmd, root, env, std::process::Stdio::null());
    let child = match cmd.spawn() {
        Ok(c) => c,
        Err(e) => return ToolOutput::error(format!("cannot start bash: {e}")),
    };
    let out = finish(child, cancel, timeout, progress).await;
    // The workspace's .git/.weft mountpoints go only once the command has ended.
    drop(hold);
    out
}

/// The running row's view of the output: its latest part, saying how much came before.
fn live_text(live: &[u8], total: usize) -> String {
    let text = String::from_utf8_lossy(live);
    if total > live.len() {
        format!("[… {} bytes before]\n{text}", total - live.len())
    } else {
        text.into_owned()
    }
}

/// Reads what the started command writes and waits for it, killing its group at the
/// end, on a timeout or on stop.
async fn finish(
    mut child: tokio::process::Child,
    cancel: &tokio_util::sync::CancellationToken,
    timeout: Duration,
    progress: Option<&super::Progress>,
) -> ToolOutput {
    let mut group = Group(child.id().map(|p| p as i32));
    let Some(mut out) = child.stdout.take() else {
        return ToolOutput::error("bash gave no output pipe");
    };
    let mut kept = Vec::new();
    let mut live: Vec<u8> = Vec::new();
    let mut total = 0usize;
    let mut buf = vec![0u8; 64 * 1024];
    let read_all = async {
        loop {
            match out.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => {
                    total += n;
                    let room = KEEP.saturating_sub(kept.len());
                    kept.extend_from_slice(&buf[..n.min(room)]);
                    if let Some(p) = progress {
                        live.extend_from_slice(&buf[..n]);
                        if live.len() > LIVE {
                            live.drain(..live.len() - LIVE);
                        }
                        p.show(|| live_text(&live, total));
                    }
                }
            }
        }
        child.wait().await
    };
    let status = tokio::select! {
        s = read_all => s,
        _ = tokio::time::sleep(timeout) => {
            group.kill();
            return ToolOutput::error(format!("the command timed out after {} s and was killed", timeout.as_secs()));
        }
        _ = cancel.cancelled() => {
            group.kill();
            return ToolOutput::error("stopped: the command was killed");
        }
    };
    // The shell is gone; anything it left in the background goes with the group.
    group.kill_leftovers();
    let mut text = String::from_utf8_lossy(&kept).into_owned();
    if total > kept.len() {
        text.push_str(&format!(
            "\n[output capped: {total} bytes in all, the first {} kept]",
            kept.len()
        ));
    }
    match status {
        Ok(s) if s.success() => ToolOutput::ok(if text.is_empty() {
            "(no output)".into()
        } else {
            text
        }),
        Ok(s) => {
            let code = s.code().map_or_else(
                || "killed by a signal".to_string(),
                |c| format!("exit code {c}"),
            );
            ToolOutput::error(format!("{text}\n[{code}]"))
        }
        Err(e) => ToolOutput::error(format!("bash failed: {e}")),
    }
}
