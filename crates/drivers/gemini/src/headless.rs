//! One headless turn: `gemini -p <prompt> --output-format stream-json --resume <id>`.
//!
//! This is how a Gemini session continues in a new process: `session/load` over ACP
//! is unreliable in 0.61.0, `--resume` works. The process runs in its own group and is killed
//! with it; a stop sends SIGINT to the group, then kills it after the grace period.
//! There is no permission channel in this mode: tools that need approval run only
//! under the approval mode the driver is configured with (default: `default`, in
//! which the CLI does not offer them at all).

use std::path::{Path, PathBuf};
use std::time::Duration;

use nix::sys::signal::{killpg, Signal};
use nix::unistd::Pid;
use tokio::io::{AsyncBufReadExt, BufReader};
use weft_acp::process::{AgentProcess, SpawnSpec};
use weft_kernel::{AgentTurnInput, DriverContext, DriverResult};
use weft_protocol::{DriverEvent, ToolStatus};

use crate::stream::{Outcome, StreamNormalizer};

/// The command line of a headless resumed turn.
pub fn args(input: &AgentTurnInput, session_id: &str, approval_mode: &str) -> Vec<String> {
    let mut prompt = input.prompt.clone();
    let (files, include) = mentioned(input);
    if !files.is_empty() {
        let files: Vec<String> = files.iter().map(|p| format!("@{}", p.display())).collect();
        prompt = format!("{prompt}\n\n{}", files.join(" "));
    }
    let mut args: Vec<String> = vec![
        "-p".into(),
        prompt,
        "--output-format".into(),
        "stream-json".into(),
    ];
    // Checked by the driver before the turn: here only the flag it allows.
    args.extend(crate::trust::tui_args(input));
    args.extend([
        "--resume".into(),
        session_id.into(),
        "--approval-mode".into(),
        approval_mode.into(),
    ]);
    if let Some(dir) = include {
        args.extend(["--include-directories".into(), dir.display().to_string()]);
    }
    if let Some(m) = input
        .model
        .as_deref()
        .filter(|m| !m.is_empty() && *m != "default" && !m.starts_with("mode:"))
    {
        args.extend(["--model".into(), m.into()]);
    }
    args.extend(input.extra_args.iter().cloned());
    args
}

/// The attachments as this turn's `@path`s, and the folder Gemini must be let read.
/// The CLI expands an `@path` itself, but skips one outside its workspace folders
/// ("unauthorized", silently in headless mode): an attachment outside the workdir is
/// copied into the turn's own folder (an image fitted to Gemini's limits on the way),
/// and that one folder — never the user's own folder the file came from — is added
/// with `--include-directories`.
fn mentioned(input: &AgentTurnInput) -> (Vec<PathBuf>, Option<PathBuf>) {
    let dir = weft_attachments::turn_dir(&input.state_dir, &input.task_id);
    let mut include = None;
    let files = input
        .attachments
        .iter()
        .map(|path| {
            let inside = path.is_absolute() && path.starts_with(&input.workdir);
            let fitted = if weft_attachments::looks_like_image(path) {
                weft_attachments::fitted_path(
                    path,
                    weft_attachments::GEMINI,
                    &input.state_dir,
                    &input.task_id,
                )
            } else {
                path.clone()
            };
            if (inside && fitted == *path) || !input.state_dir.is_absolute() {
                return fitted;
            }
            let copied = if fitted.starts_with(&dir) {
                Some(fitted.clone())
            } else {
                copy_into(&fitted, &dir)
            };
            match copied {
                Some(c) => {
                    include = Some(dir.clone());
                    c
                }
                None => fitted,
            }
        })
        .collect();
    (files, include)
}

fn copy_into(path: &Path, dir: &Path) -> Option<PathBuf> {
    std::fs::create_dir_all(dir).ok()?;
    let name = path.file_name()?.to_string_lossy().into_owned();
    // Two attachments of one name (from two folders) stay two files.
    let out = (0..)
        .map(|i| match i {
            0 => dir.join(&name),
            i => dir.join(format!("{i}-{name}")),
        })
        .find(|p| !p.exists())?;
    std::fs::copy(path, &out).ok()?;
    Some(out)
}

/// Runs one resumed turn to its end.
pub async fn run(
    program: &Path,
    input: &AgentTurnInput,
    session_id: &str,
    approval_mode: &str,
    stop_grace: Duration,
    ctx: &DriverContext,
) -> DriverResult {
    let spec = SpawnSpec {
        program: program.to_path_buf(),
        args: args(input, session_id, approval_mode),
        env: input.spawn_env(),
        cwd: input.workdir.clone(),
    };
    let (mut proc, stdin, stdout) = match AgentProcess::spawn(&spec) {
        Ok(p) => p,
        Err(e) => {
            return DriverResult::failed(format!(
                "could not start the Gemini CLI ({}): {e}",
                program.display()
            ))
        }
    };
    drop(stdin);
    let mut lines = BufReader::new(stdout).lines();
    let mut norm = StreamNormalizer::new();
    let mut deadline: Option<tokio::time::Instant> = None;
    let mut killed = false;
    loop {
        tokio::select! {
            line = lines.next_line() => match line {
                Ok(Some(l)) => {
                    let mut out = Vec::new();
                    norm.line(&l, &mut out);
                    out.into_iter().for_each(|e| ctx.emit(e));
                }
                Ok(None) | Err(_) => break,
            },
            _ = ctx.cancelled(), if deadline.is_none() => {
                if let Some(pid) = proc.pid().and_then(|p| i32::try_from(p).ok()) {
                    let _ = killpg(Pid::from_raw(pid), Signal::SIGINT);
                }
                deadline = Some(tokio::time::Instant::now() + stop_grace);
            }
            _ = sleep_until(deadline), if deadline.is_some() => {
                proc.kill();
                killed = true;
                break;
            }
        }
    }
    let status = proc.wait_exit(Duration::from_secs(5)).await;
    proc.settle_stderr(Duration::from_millis(250)).await;
    let stopped = ctx.is_cancelled();
    for mut call in norm.running() {
        call.status = ToolStatus::Failed;
        call.result = Some(
            if stopped {
                "stopped"
            } else {
                "the turn ended before a result"
            }
            .into(),
        );
        ctx.emit(DriverEvent::Tool { call });
    }
    let session_id = norm
        .session_id
        .clone()
        .or_else(|| Some(session_id.to_string()));
    let result = match (&norm.outcome, stopped) {
        (_, true) => DriverResult {
            ok: false,
            ..Default::default()
        },
        (Some(Outcome::Success), _) => DriverResult::ok(),
        (Some(Outcome::Failed(msg)), _) => DriverResult::failed(format!("Gemini CLI: {msg}")),
        (None, _) => {
            let tail = proc.stderr_tail(1500);
            let how = match status.and_then(|s| s.code()) {
                Some(c) => format!("exit status {c}"),
                None if killed => "killed".to_string(),
                None => "killed by a signal".to_string(),
            };
            DriverResult::failed(format!(
                "the Gemini CLI exited ({how}) without finishing the turn{}",
                if tail.is_empty() {
                    String::new()
                } else {
                    format!(": {tail}")
                }
            ))
        }
    };
    DriverResult {
        session_id,
        ..result
    }
}

async fn sleep_until(deadline: Option<tokio::time::Instant>) {
    match deadline {
        Some(d) => tokio::time::sleep_until(d).await,
        None => std::future::pending().await,
    }
}
