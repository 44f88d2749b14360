//! `weft tui`: an agent's own terminal UI, passed through this terminal raw.
//!
//! The session has one writer while it runs: structured prompts to it (from the app or
//! another `weft run`) queue until it exits, then run on the structured rail and resume
//! the same agent session.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use tokio::sync::broadcast::error::RecvError;
use weft_kernel::{Loom, LoomIO};
use weft_protocol::OpenTerminalRequest;
use weft_pty::{PtyBridge, PtySize, PtySpec};

#[derive(Args)]
pub(crate) struct TuiArgs {
    /// Agent for a new session (default: echo).
    #[arg(long)]
    agent: Option<String>,
    /// Folder the agent works in (default: the current folder).
    #[arg(long)]
    workdir: Option<PathBuf>,
    /// Continue this session (`agent:id`) in the agent's own UI.
    #[arg(long)]
    session: Option<String>,
}

/// Restores the terminal however we leave.
struct RawMode;

impl RawMode {
    fn enter() -> std::io::Result<RawMode> {
        crossterm::terminal::enable_raw_mode()?;
        Ok(RawMode)
    }
}

impl Drop for RawMode {
    fn drop(&mut self) {
        let _ = crossterm::terminal::disable_raw_mode();
    }
}

fn terminal_size() -> PtySize {
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    PtySize {
        rows: rows.max(1),
        cols: cols.max(1),
    }
}

pub(crate) async fn tui(loom: &Arc<Loom>, args: TuiArgs) -> ExitCode {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("weft: `weft tui` needs a terminal on stdin and stdout");
        return ExitCode::from(crate::EXIT_USAGE);
    }
    let request = OpenTerminalRequest {
        agent: args.agent,
        session_key: args.session,
        workdir: args.workdir.map(|p| p.to_string_lossy().into_owned()),
        model: None,
    };
    let opened = match loom.open_terminal(request).await {
        Ok(o) => o,
        Err(e) => {
            eprintln!("weft: {e}");
            return crate::exit_for(&e);
        }
    };
    let key = opened.session_key.clone();
    let spec = PtySpec {
        program: opened.spec.program,
        args: opened.spec.args,
        env: opened.spec.env,
        cwd: opened.spec.cwd,
    };
    let bridge = match PtyBridge::spawn(&spec, terminal_size()) {
        Ok(b) => Arc::new(b),
        Err(e) => {
            eprintln!("weft: {e}");
            let _ = loom.close_terminal(&key).await;
            return ExitCode::FAILURE;
        }
    };
    let exit = {
        let _raw = match RawMode::enter() {
            Ok(r) => r,
            Err(e) => {
                eprintln!("weft: cannot put the terminal in raw mode: {e}");
                let _ = loom.close_terminal(&key).await;
                return ExitCode::FAILURE;
            }
        };
        pass_through(&bridge).await
    };
    let _ = loom.close_terminal(&key).await;
    drop(bridge);
    eprintln!(
        "\r\nweft: the terminal exited ({}); session {key}",
        match (&exit.signal, exit.code) {
            (Some(sig), _) => format!("signal {sig}"),
            (None, code) => format!("code {code}"),
        }
    );
    if exit.success {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

async fn pass_through(bridge: &Arc<PtyBridge>) -> weft_pty::ExitInfo {
    let mut attach = bridge.attach();
    let mut out = std::io::stdout();
    let _ = out.write_all(&attach.screen);
    let _ = out.flush();
    let mut offset = attach.offset;

    // Keystrokes: a blocking read on its own thread; it ends with the process.
    let input = bridge.clone();
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 || input.write(&buf[..n]).is_err() {
                break;
            }
        }
    });

    let mut winch =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change()).ok();
    loop {
        tokio::select! {
            chunk = attach.chunks.recv() => match chunk {
                Ok(chunk) => {
                    let end = chunk.offset + chunk.data.len() as u64;
                    if end > offset {
                        let skip = offset.saturating_sub(chunk.offset) as usize;
                        let _ = out.write_all(&chunk.data[skip..]);
                        let _ = out.flush();
                        offset = end;
                    }
                }
                Err(RecvError::Lagged(_)) => {
                    // Too far behind: redraw the whole screen and go on from there.
                    attach = bridge.attach_screen();
                    let _ = out.write_all(&attach.screen);
                    let _ = out.flush();
                    offset = attach.offset;
                }
                Err(RecvError::Closed) => return bridge.wait().await,
            },
            exit = bridge.wait() => {
                // Flush what arrived before the exit.
                while let Ok(chunk) = attach.chunks.try_recv() {
                    let end = chunk.offset + chunk.data.len() as u64;
                    if end > offset {
                        let skip = offset.saturating_sub(chunk.offset) as usize;
                        let _ = out.write_all(&chunk.data[skip..]);
                        offset = end;
                    }
                }
                let _ = out.flush();
                return exit;
            }
            Some(()) = async { match winch.as_mut() { Some(s) => s.recv().await, None => std::future::pending().await } } => {
                let _ = bridge.resize(terminal_size());
            }
        }
    }
}
