//! A conversation that moves to an account with another config folder.
//!
//! Claude and Codex keep a session's transcript in their config folder
//! (`CLAUDE_CONFIG_DIR/projects/<project>/<id>.jsonl`,
//! `CODEX_HOME/sessions/YYYY/MM/DD/rollout-…-<id>.jsonl`), and resume only from there.
//! When a session switches to an account whose folder lacks it, the transcript — only
//! the transcript, never a credentials file — is copied into that folder at the same
//! relative path, in the agent's own format, so the agent resumes the conversation
//! with its history. The original stays where it was.

use std::path::{Path, PathBuf};

use weft_agent_spec::spec::TranscriptLayout;

/// The transcript of `session_id` under config folder `home`, relative to it, where
/// `layout` (the agent's spec) keeps it.
fn find(layout: &TranscriptLayout, home: &Path, session_id: &str) -> Option<PathBuf> {
    match layout {
        TranscriptLayout::ProjectsJsonl => {
            let name = format!("{session_id}.jsonl");
            let projects = home.join("projects");
            std::fs::read_dir(&projects).ok()?.flatten().find_map(|e| {
                let p = e.path().join(&name);
                p.is_file()
                    .then(|| PathBuf::from("projects").join(e.file_name()).join(&name))
            })
        }
        TranscriptLayout::DatedRollouts => {
            let tail = format!("-{session_id}.jsonl");
            let mut stack = vec![home.join("sessions")];
            while let Some(dir) = stack.pop() {
                for e in std::fs::read_dir(&dir).ok()?.flatten() {
                    let p = e.path();
                    if p.is_dir() {
                        stack.push(p);
                    } else if p
                        .file_name()
                        .and_then(|n| n.to_str())
                        .is_some_and(|n| n.starts_with("rollout-") && n.ends_with(&tail))
                    {
                        return p.strip_prefix(home).ok().map(Path::to_path_buf);
                    }
                }
            }
            None
        }
    }
}

/// Copies `session_id`'s transcript into `target` from the first of `known` folders that
/// has it, unless `target` has it already. Returns the copy made, if any.
pub fn carry(
    agent: &TranscriptLayout,
    session_id: &str,
    target: &Path,
    known: &[PathBuf],
) -> std::io::Result<Option<PathBuf>> {
    if find(agent, target, session_id).is_some() {
        return Ok(None);
    }
    for home in known.iter().filter(|h| h.as_path() != target) {
        let Some(rel) = find(agent, home, session_id) else {
            continue;
        };
        let to = target.join(&rel);
        if let Some(dir) = to.parent() {
            std::fs::create_dir_all(dir)?;
        }
        std::fs::copy(home.join(&rel), &to)?;
        return Ok(Some(to));
    }
    Ok(None)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const CLAUDE: &TranscriptLayout = &TranscriptLayout::ProjectsJsonl;
    const CODEX: &TranscriptLayout = &TranscriptLayout::DatedRollouts;

    #[test]
    fn a_transcript_follows_the_session_into_another_home() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let proj = a.path().join("projects/-w-repo");
        std::fs::create_dir_all(&proj).unwrap();
        std::fs::write(proj.join("s-1.jsonl"), "{\"type\":\"user\"}\n").unwrap();
        std::fs::write(a.path().join(".credentials.json"), "{}").unwrap();
        let known = vec![a.path().to_path_buf()];
        let copied = carry(CLAUDE, "s-1", b.path(), &known).unwrap().unwrap();
        assert_eq!(copied, b.path().join("projects/-w-repo/s-1.jsonl"));
        assert_eq!(
            std::fs::read_to_string(&copied).unwrap(),
            "{\"type\":\"user\"}\n"
        );
        assert!(!b.path().join(".credentials.json").exists());
        // Once there, it is not copied again (the agent appends to its own copy).
        assert_eq!(carry(CLAUDE, "s-1", b.path(), &known).unwrap(), None);

        let day = a.path().join("sessions/2026/12/01");
        std::fs::create_dir_all(&day).unwrap();
        std::fs::write(day.join("rollout-2026-12-01T10-00-00-t-9.jsonl"), "x").unwrap();
        let copied = carry(CODEX, "t-9", b.path(), &known).unwrap().unwrap();
        assert!(copied.ends_with("sessions/2026/12/01/rollout-2026-12-01T10-00-00-t-9.jsonl"));
        assert_eq!(carry(CODEX, "nope", b.path(), &known).unwrap(), None);
    }
}
