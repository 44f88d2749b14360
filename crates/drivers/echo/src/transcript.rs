//! The echo agent's own session files: one JSON line per turn, like a real agent's
//! transcript, so resume works across processes.

use std::io::{BufRead, BufReader, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// One past turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EchoTranscript {
    /// What was asked.
    pub prompt: String,
    /// What echo answered.
    pub reply: String,
    /// Where it ran.
    pub workdir: String,
}

fn dir(state_dir: &Path) -> PathBuf {
    state_dir.join("echo")
}

fn file(state_dir: &Path, session_id: &str) -> PathBuf {
    dir(state_dir).join(format!("{session_id}.jsonl"))
}

/// The session's past turns (none for a new or unreadable one; bad lines skipped).
pub fn load(state_dir: &Path, session_id: &str) -> Vec<EchoTranscript> {
    let Ok(f) = std::fs::File::open(file(state_dir, session_id)) else {
        return Vec::new();
    };
    BufReader::new(f)
        .lines()
        .map_while(Result::ok)
        .filter_map(|line| serde_json::from_str(&line).ok())
        .collect()
}

/// Appends a turn.
pub fn append(state_dir: &Path, session_id: &str, turn: &EchoTranscript) -> std::io::Result<()> {
    std::fs::create_dir_all(dir(state_dir))?;
    let mut f = std::os::unix::fs::OpenOptionsExt::mode(
        std::fs::OpenOptions::new().create(true).append(true),
        0o600,
    )
    .open(file(state_dir, session_id))?;
    let line = serde_json::to_string(turn).map_err(std::io::Error::other)?;
    writeln!(f, "{line}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::PermissionsExt;

    #[test]
    fn a_transcript_is_readable_by_its_owner_only() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let turn = EchoTranscript {
            prompt: "p".into(),
            reply: "r".into(),
            workdir: "/w".into(),
        };
        append(dir.path(), "s1", &turn).unwrap_or_else(|e| panic!("{e}"));
        let mode = std::fs::metadata(file(dir.path(), "s1")).map(|m| m.permissions().mode());
        assert_eq!(mode.ok().map(|m| m & 0o777), Some(0o600));
        assert_eq!(load(dir.path(), "s1"), [turn]);
    }
}
