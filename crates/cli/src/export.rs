//! `weft sessions export KEY`: a session's whole transcript as one Markdown or JSON
//! document, rendered by the daemon (the same text the app saves). The daemon writes
//! it to the file a page of the transcript at a time, so no reply has to carry it and
//! a session of any size exports; without `-o` it goes through a private temporary
//! folder to stdout.

use std::path::PathBuf;
use std::process::ExitCode;

use weft_protocol::verb;
use weft_protocol::ExportFormat;

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
    // Without `-o`: a folder only this user can enter, gone when this returns.
    let spool = match output {
        Some(_) => None,
        None => match tempfile::Builder::new().prefix("weft-export-").tempdir() {
            Ok(d) => Some(d),
            Err(e) => {
                eprintln!("weft: making a temporary folder for the export: {e}");
                return ExitCode::FAILURE;
            }
        },
    };
    let target = match (&output, &spool) {
        (Some(path), _) => match std::path::absolute(path) {
            Ok(p) => p,
            Err(e) => {
                eprintln!("weft: {}: {e}", path.display());
                return ExitCode::from(crate::EXIT_USAGE);
            }
        },
        (None, Some(dir)) => dir.path().join("export"),
        (None, None) => unreachable!("a spool folder is made when there is no -o"),
    };
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let written = match daemon
        .send(verb::ExportSessionToFile {
            session_key: key,
            format,
            path: target.to_string_lossy().into_owned(),
        })
        .await
    {
        Ok(w) => w,
        Err(code) => return code,
    };
    if output.is_some() {
        return ExitCode::SUCCESS;
    }
    let copied = std::fs::File::open(&written.path)
        .and_then(|mut f| std::io::copy(&mut f, &mut std::io::stdout().lock()));
    match copied {
        Ok(_) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("weft: writing the export: {e}");
            ExitCode::FAILURE
        }
    }
}
