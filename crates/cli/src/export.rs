//! `weft sessions export KEY`: a session's whole transcript as one Markdown or JSON
//! document, rendered by the daemon (the same text the app saves).

use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use weft_protocol::{ClientRequest, ExportFormat};

use crate::client;

/// The document's format.
#[derive(Clone, Copy, clap::ValueEnum)]
pub(crate) enum Format {
    /// Headings per turn: the prompt, the reply, tool calls with their status.
    Markdown,
    /// `{"session": …, "turns": [snapshot, …]}`.
    Json,
}

pub(crate) async fn export(key: String, format: Format, output: Option<PathBuf>) -> ExitCode {
    let format = match format {
        Format::Markdown => ExportFormat::Markdown,
        Format::Json => ExportFormat::Json,
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let text: String = match daemon
        .call(ClientRequest::ExportSession {
            session_key: key,
            format,
        })
        .await
    {
        Ok(t) => t,
        Err(code) => return code,
    };
    let written = match &output {
        Some(path) => write_file(path, &text),
        None => std::io::stdout().lock().write_all(text.as_bytes()),
    };
    match written {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            match &output {
                Some(path) => eprintln!("weft: writing {}: {e}", path.display()),
                None => eprintln!("weft: writing the export: {e}"),
            }
            ExitCode::FAILURE
        }
    }
}

/// Writes `text` to `path` (replacing what was there), readable by others as a
/// document is (0644; the umask may narrow it).
fn write_file(path: &Path, text: &str) -> std::io::Result<()> {
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create(true).truncate(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o644);
    options.open(path)?.write_all(text.as_bytes())
}
