//! Skills placed once in Weft (`$WEFT_HOME/skills`, `<ws>/.weft/skills`; see
//! [`weft_kernel::skills`]), handed to every agent in its own skills location:
//!
//! - Claude: `--add-dir <state>/run/skills/<session>`, a folder of Weft's whose
//!   `.claude/skills/` holds a link per skill (Claude loads the skills of an added
//!   directory); the user's own folders are not written to;
//! - Codex and Gemini (and codex-acp, which runs Codex): a link per skill in
//!   `.agents/skills/` (both read it): the global skills in the agent's home's, the
//!   workspace's in the workspace's;
//! - Weft's own agent reads Weft's folders itself (and skips the skills turned off).
//!
//! A user's own skill of the same name (in any of that agent's folders) keeps the name:
//! the Weft skill is not linked there and `weft skills list` names the conflict.

use std::path::{Path, PathBuf};

use weft_agent_spec::spec::SkillsForm;
use weft_kernel::mcp::McpServer;
use weft_kernel::skills::{self, Skill, Source};
use weft_kernel::{Plugin, SpawnContribution, SpawnCx};

/// The plugin. Register it with `LoomBuilder::plugin`.
#[derive(Debug, Default, Clone, Copy)]
pub struct SkillsPlugin;

fn home_of(cx: &SpawnCx) -> Option<PathBuf> {
    cx.input
        .var("HOME")
        .or_else(|| std::env::var("HOME").ok())
        .filter(|h| !h.is_empty())
        .map(PathBuf::from)
}

/// The folder Claude is given with `--add-dir` for this session.
pub fn claude_dir(state_dir: &Path, session_key: &str) -> PathBuf {
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

impl Plugin for SkillsPlugin {
    fn id(&self) -> &str {
        "skills"
    }

    fn contribute_spawn(
        &self,
        cx: &SpawnCx,
        _tools: &[McpServer],
    ) -> Result<SpawnContribution, String> {
        let state = &cx.input.state_dir;
        let workdir = Some(cx.input.workdir.as_path());
        // A workspace's own skills (its `.weft/skills/`) are given only once the user
        // trusted the folder: a skill's scripts and instructions are the repository's.
        let trusted = cx
            .input
            .workspace_trusted
            .then_some(cx.input.workdir.as_path());
        let all = skills::find(state, trusted);
        let on: Vec<&Skill> = all.iter().filter(|s| s.enabled).collect();
        let roots: Vec<PathBuf> = skills::roots(state, workdir)
            .into_iter()
            .map(|r| r.1)
            .collect();
        let home = home_of(cx);
        let report = |agent: &str, r: skills::Linked| {
            for c in r.conflicts {
                tracing::info!(
                    session = %cx.input.session_key,
                    "skills: {agent} keeps the user's own {} (the Weft skill of that name is not given)",
                    c.display()
                );
            }
        };
        let form = match crate::built_in(cx.agent) {
            Some(s) => s.skills_form.clone(),
            None => weft_acp::config::presets()
                .into_iter()
                .find(|p| p.id == cx.agent)
                .map_or(SkillsForm::None, |p| p.skills_form),
        };
        match form {
            SkillsForm::AddDir(own) => {
                let dir = claude_dir(state, &cx.input.session_key);
                let folder = dir.join(&own).join("skills");
                if on.is_empty() && !folder.exists() {
                    return Ok(SpawnContribution::default());
                }
                let mut taken = vec![cx.input.workdir.join(&own).join("skills")];
                taken.extend(home.iter().map(|h| h.join(&own).join("skills")));
                let r =
                    skills::link_into(&folder, &on, &roots, &taken).map_err(|e| e.to_string())?;
                report(cx.agent, r);
                Ok(SpawnContribution {
                    extra_args: vec!["--add-dir".into(), dir.display().to_string()],
                    ..Default::default()
                })
            }
            SkillsForm::Shared(own) => {
                let (global, local): (Vec<&Skill>, Vec<&Skill>) =
                    on.iter().partition(|s| s.source == Source::Global);
                if let Some(h) = &home {
                    let folder = h.join(".agents").join("skills");
                    if !global.is_empty() || folder.exists() {
                        let taken = [h.join(&own).join("skills")];
                        report(
                            cx.agent,
                            skills::link_into(&folder, &global, &roots, &taken)
                                .map_err(|e| e.to_string())?,
                        );
                    }
                }
                let folder = cx.input.workdir.join(".agents").join("skills");
                if !local.is_empty() || folder.exists() {
                    let taken = [cx.input.workdir.join(&own).join("skills")];
                    report(
                        cx.agent,
                        skills::link_into(&folder, &local, &roots, &taken)
                            .map_err(|e| e.to_string())?,
                    );
                }
                Ok(SpawnContribution::default())
            }
            SkillsForm::None => Ok(SpawnContribution::default()),
        }
    }
}
