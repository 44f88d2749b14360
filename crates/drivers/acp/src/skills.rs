//! Weft's skills for an ACP agent. ACP has no field for skills, but it has the
//! session's additional directories (`additionalDirectories` on `session/new` and
//! `session/load`, for an agent whose `sessionCapabilities.additionalDirectories` says
//! it takes them): the driver gives such an agent a folder of Weft's that holds a link
//! per enabled skill in `.claude/skills/` and `.agents/skills/` — the layout the
//! Claude driver gives Claude with `--add-dir`. claude-agent-acp hands the folders to
//! Claude Code, which loads the skills of an added directory. The skills come as the
//! turn's MCP servers do: Weft's global ones always, the workspace's (its
//! `.weft/skills/`) once the folder is trusted; a user's own skill of the same name in
//! the agent's folders keeps the name.

use std::path::{Path, PathBuf};

use weft_kernel::driver::AgentTurnInput;
use weft_kernel::skills::{self, Skill};

/// The folders Claude and the `.agents` convention read skills from, under the
/// session's folder.
const LAYOUTS: &[&str] = &[".claude", ".agents"];

/// The session's skills folder: `<state>/run/skills/<session key>`.
pub fn session_dir(state_dir: &Path, session_key: &str) -> PathBuf {
    let key: String = session_key
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect();
    state_dir.join("run").join("skills").join(key)
}

/// Links the turn's enabled skills into its session folder and returns the folder,
/// or None when there is nothing to give (and nothing given before to take back).
pub fn place(input: &AgentTurnInput) -> Option<PathBuf> {
    let state = &input.state_dir;
    let trusted = input.workspace_trusted.then_some(input.workdir.as_path());
    let all = skills::find(state, trusted);
    let on: Vec<&Skill> = all.iter().filter(|s| s.enabled).collect();
    let dir = session_dir(state, &input.session_key);
    if on.is_empty() && !dir.exists() {
        return None;
    }
    let roots: Vec<PathBuf> = skills::roots(state, Some(input.workdir.as_path()))
        .into_iter()
        .map(|r| r.1)
        .collect();
    let home = input
        .var("HOME")
        .filter(|h| !h.is_empty())
        .map(PathBuf::from);
    for own in LAYOUTS {
        let folder = dir.join(own).join("skills");
        let mut taken = vec![input.workdir.join(own).join("skills")];
        taken.extend(home.iter().map(|h| h.join(own).join("skills")));
        match skills::link_into(&folder, &on, &roots, &taken) {
            Ok(r) => {
                for c in r.conflicts {
                    tracing::info!(
                        session = %input.session_key,
                        "skills: the agent keeps the user's own {} (the Weft skill of that name is not given)",
                        c.display()
                    );
                }
            }
            Err(e) => {
                tracing::warn!(
                    "skills: could not place Weft's skills in {}: {e}",
                    folder.display()
                );
                return None;
            }
        }
    }
    (!on.is_empty()).then_some(dir)
}
