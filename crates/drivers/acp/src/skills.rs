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
//!
//! An agent without additional directories that reads extra skill folders from a
//! settings file named by an environment variable (Qwen Code's system defaults,
//! `skills.directories`) gets the session folder's `.agents/skills` through a copy of
//! that file made for the session ([`SkillsSettings`]).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

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

/// A settings file, named by an environment variable, whose `skills.directories`
/// lists extra folders of skills (each holding skill folders with a SKILL.md).
#[derive(Debug, Clone, Copy)]
pub struct SkillsSettings {
    /// The variable naming the file.
    pub env: &'static str,
    /// The file when the variable is unset.
    pub default_path: &'static str,
}

impl SkillsSettings {
    /// The variable and the session's own copy of the file (`<dir>/<env>.json`): the
    /// file the user's environment names, or the default one, as it is, with the
    /// session folder's `.agents/skills` added to `skills.directories`. None, leaving
    /// the user's file alone, when that file cannot be read as a JSON object.
    pub fn session_file(&self, input: &AgentTurnInput, dir: &Path) -> Option<(String, String)> {
        let theirs = input
            .var(self.env)
            .filter(|p| !p.is_empty())
            .unwrap_or_else(|| self.default_path.to_string());
        let mut settings = match std::fs::read_to_string(&theirs) {
            Ok(text) => match serde_json::from_str::<Value>(&text) {
                Ok(v @ Value::Object(_)) => v,
                _ => {
                    tracing::warn!(
                        "skills: {theirs} is not a JSON object, so Weft's skills are not given \
                         through it"
                    );
                    return None;
                }
            },
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => json!({}),
            Err(e) => {
                tracing::warn!(
                    "skills: cannot read {theirs} ({e}), so Weft's skills are not given"
                );
                return None;
            }
        };
        let ours = dir.join(".agents").join("skills").display().to_string();
        if !settings["skills"].is_object() {
            settings["skills"] = json!({});
        }
        let dirs = &mut settings["skills"]["directories"];
        match dirs {
            Value::Array(list) if !list.iter().any(|d| d == &json!(ours)) => {
                list.push(json!(ours));
            }
            Value::Array(_) => {}
            _ => *dirs = json!([ours]),
        }
        let file = dir.join(format!("{}.json", self.env));
        match std::fs::write(&file, settings.to_string()) {
            Ok(()) => Some((self.env.to_string(), file.display().to_string())),
            Err(e) => {
                tracing::warn!("skills: cannot write {} ({e})", file.display());
                None
            }
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    const QWEN: SkillsSettings = SkillsSettings {
        env: "WEFT_TEST_DEFAULTS",
        default_path: "/nonexistent/weft-test/system-defaults.json",
    };

    fn input(env: Vec<(String, String)>) -> AgentTurnInput {
        AgentTurnInput {
            env,
            isolated: true,
            ..Default::default()
        }
    }

    #[test]
    fn the_session_file_adds_the_folder_to_the_users_own_settings() {
        let dir = tempfile::tempdir().unwrap();
        let theirs = dir.path().join("theirs.json");
        std::fs::write(
            &theirs,
            r#"{"model":{"name":"m"},"skills":{"directories":["/srv/skills"]}}"#,
        )
        .unwrap();
        let env = vec![(QWEN.env.to_string(), theirs.display().to_string())];
        let (name, file) = QWEN.session_file(&input(env), dir.path()).unwrap();
        assert_eq!(name, QWEN.env);
        let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        let ours = dir.path().join(".agents/skills").display().to_string();
        assert_eq!(v["skills"]["directories"], json!(["/srv/skills", ours]));
        assert_eq!(v["model"]["name"], "m");
    }

    #[test]
    fn no_file_is_a_file_of_its_own_and_a_broken_one_is_left_alone() {
        let dir = tempfile::tempdir().unwrap();
        let (_, file) = QWEN.session_file(&input(Vec::new()), dir.path()).unwrap();
        let v: Value = serde_json::from_str(&std::fs::read_to_string(file).unwrap()).unwrap();
        assert_eq!(v["skills"]["directories"].as_array().map(Vec::len), Some(1));
        let broken = dir.path().join("broken.json");
        std::fs::write(&broken, "{ not json").unwrap();
        let env = vec![(QWEN.env.to_string(), broken.display().to_string())];
        assert!(QWEN.session_file(&input(env), dir.path()).is_none());
    }
}
