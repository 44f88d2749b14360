//! `weft tui` and `weft attach`: an agent's own terminal UI, run by the daemon and
//! passed through this terminal raw. Like tmux, a terminal opened in the window can be
//! attached here and the other way round; Ctrl-] detaches and leaves it running.
//!
//! The session has one writer while the terminal is open: structured prompts to it
//! queue until it exits, then run on the structured rail and resume the same session.

use std::io::{IsTerminal, Read, Write};
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::Args;
use tokio::sync::mpsc;
use weft_client::{Client, Event};
use weft_protocol::verb;
use weft_protocol::{frame_kind, OpenTerminalRequest, ServerMessage};

use crate::client::{self, Daemon};

/// Ctrl-]: leave the terminal running in the daemon and return.
const DETACH: u8 = 0x1d;

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
    /// Run it on this account (`weft accounts list`).
    #[arg(long, value_name = "ID")]
    account: Option<String>,
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

/// The local terminal's size, within what the daemon makes (a wider one shows the
/// agent's screen at the most it allows rather than failing).
fn terminal_size() -> (u16, u16) {
    let (cols, rows) = crossterm::terminal::size().unwrap_or((80, 24));
    (
        cols.clamp(1, weft_kernel::pty::MAX_COLS),
        rows.clamp(1, weft_kernel::pty::MAX_ROWS),
    )
}

fn needs_terminal() -> Option<ExitCode> {
    if !std::io::stdin().is_terminal() || !std::io::stdout().is_terminal() {
        eprintln!("weft: this needs a terminal on stdin and stdout");
        return Some(ExitCode::from(crate::EXIT_USAGE));
    }
    None
}

pub(crate) async fn tui(args: TuiArgs) -> ExitCode {
    if let Some(code) = needs_terminal() {
        return code;
    }
    let workdir = match crate::absolute_workdir(args.workdir) {
        Ok(dir) => dir,
        Err(code) => return code,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let (cols, rows) = terminal_size();
    let request = OpenTerminalRequest {
        agent: args.agent,
        session_key: args.session,
        workdir: Some(workdir),
        model: None,
        cols: Some(cols),
        rows: Some(rows),
        account: args.account,
    };
    let attached = match daemon.send(request).await {
        Ok(a) => a,
        Err(code) => return code,
    };
    pass_through(daemon, attached.session_key).await
}

pub(crate) async fn attach(key: String) -> ExitCode {
    if let Some(code) = needs_terminal() {
        return code;
    }
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let attached = match daemon
        .send(verb::AttachTerminal {
            session_key: key.clone(),
        })
        .await
    {
        Ok(a) => a,
        Err(code) => return code,
    };
    let (cols, rows) = terminal_size();
    let _ = daemon
        .client
        .send(verb::ResizeTerminal {
            session_key: key,
            cols,
            rows,
        })
        .await;
    pass_through(daemon, attached.session_key).await
}

/// Keystrokes: a blocking read on its own thread (it ends with the process). The
/// detach key is cut out of the stream and reported.
fn read_keys(keys: mpsc::Sender<Vec<u8>>) {
    std::thread::spawn(move || {
        let mut stdin = std::io::stdin();
        let mut buf = [0u8; 4096];
        while let Ok(n) = stdin.read(&mut buf) {
            if n == 0 || keys.blocking_send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
}

async fn pass_through(mut daemon: Daemon, key: String) -> ExitCode {
    let _raw = match RawMode::enter() {
        Ok(r) => r,
        Err(e) => {
            eprintln!("weft: cannot put the terminal in raw mode: {e}");
            return ExitCode::FAILURE;
        }
    };
    let (keys_tx, mut keys) = mpsc::channel::<Vec<u8>>(64);
    read_keys(keys_tx);
    let mut winch =
        tokio::signal::unix::signal(tokio::signal::unix::SignalKind::window_change()).ok();
    let mut out = std::io::stdout();
    let mut offset = 0u64;
    let client: Arc<Client> = daemon.client.clone();
    let ended = loop {
        tokio::select! {
            event = daemon.events.recv() => match event {
                Some(Event::Terminal(frame)) if frame.session_key == key => match frame.kind {
                    frame_kind::SCREEN => {
                        let _ = out.write_all(&frame.payload);
                        let _ = out.flush();
                        offset = frame.offset;
                    }
                    frame_kind::DATA => {
                        let end = frame.offset + frame.payload.len() as u64;
                        if end > offset {
                            let skip = offset.saturating_sub(frame.offset) as usize;
                            let _ = out.write_all(&frame.payload[skip.min(frame.payload.len())..]);
                            let _ = out.flush();
                            offset = end;
                        }
                    }
                    _ => break Ended::Exited(exit_text(&frame.payload)),
                },
                Some(Event::Message(ServerMessage::Closing { reason })) => break Ended::Lost(reason),
                Some(Event::Disconnected(why)) => break Ended::Lost(why),
                None => break Ended::Lost("the connection closed".into()),
                Some(_) => {}
            },
            Some(bytes) = keys.recv() => {
                if let Some(at) = bytes.iter().position(|b| *b == DETACH) {
                    if at > 0 {
                        let _ = client.send_input(&key, &bytes[..at]).await;
                    }
                    let _ = client.send(verb::DetachTerminal { session_key: key.clone() }).await;
                    break Ended::Detached;
                }
                let _ = client.send_input(&key, &bytes).await;
            }
            Some(()) = async { match winch.as_mut() { Some(s) => s.recv().await, None => std::future::pending().await } } => {
                let (cols, rows) = terminal_size();
                let _ = client.send(verb::ResizeTerminal { session_key: key.clone(), cols, rows }).await;
            }
        }
    };
    drop(_raw);
    match ended {
        Ended::Exited(how) => {
            eprintln!("\r\nweft: the terminal exited ({how}); session {key}");
            if how == "code 0" {
                ExitCode::SUCCESS
            } else {
                ExitCode::FAILURE
            }
        }
        Ended::Detached => {
            eprintln!(
                "\r\nweft: detached; the terminal goes on in the daemon (`weft attach {key}`)"
            );
            ExitCode::SUCCESS
        }
        Ended::Lost(why) => {
            eprintln!("\r\nweft: lost the terminal: {why}");
            ExitCode::FAILURE
        }
    }
}

enum Ended {
    Exited(String),
    Detached,
    Lost(String),
}

fn exit_text(payload: &[u8]) -> String {
    let v: serde_json::Value = serde_json::from_slice(payload).unwrap_or_default();
    match v.get("signal").and_then(|s| s.as_str()) {
        Some(sig) => format!("signal {sig}"),
        None => format!(
            "code {}",
            v.get("code").and_then(|c| c.as_u64()).unwrap_or(0)
        ),
    }
}
