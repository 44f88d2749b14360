//! One headless turn: `gemini -p <prompt> --output-format stream-json --resume <id>`.
//!
//! This is how a Gemini session continues in a new process: `session/load` over ACP
//! is unreliable in 0.61.0, `--resume` works. The process runs in its own group and is killed
//! with it; a stop sends SIGINT to the group, then kills it after the grace period.
//! There is no permission channel in this mode: tools that need approval run only
//! under the approval mode the driver is configured with (default: `default`, in
//! which the CLI does not offer them at all).

use std::path::Path;
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
    if !input.attachments.is_empty() {
        let files: Vec<String> = input
            .attachments
            .iter()
            .map(|p| format!("@{}", p.display()))
            .collect();
        prompt = format!("{prompt}\n\n{}", files.join(" "));
    }
    let mut args: Vec<String> = vec![
        "-p".into(),
        prompt,
        "--output-format".into(),
        "stream-json".into(),
        "--skip-trust".into(),
        "--resume".into(),
        session_id.into(),
        "--approval-mode".into(),
        approval_mode.into(),
    ];
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
