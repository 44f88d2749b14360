//! `weft skills`: skills placed once in Weft (`~/.weft/skills`, `<ws>/.weft/skills`)
//! and given to every agent in its own skills folder.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Subcommand;
use weft_protocol::verb;
use weft_protocol::ClientRequest;

use crate::client;
use crate::list::print_json;

#[derive(Subcommand)]
pub(crate) enum SkillsCommand {
    /// Bring in the skills set up in the agents themselves (their own skills folders
    /// under HOME: ~/.claude/skills, ~/.codex/skills, …) into ~/.weft/skills, for every
    /// agent. Skills Weft has are kept.
    Import {
        /// Only say what would be imported.
        #[arg(long)]
        dry_run: bool,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Every skill: its description, where it was placed, whether it is on, and the
    /// user's own skills of its name that keep it in an agent's folder.
    List {
        /// The workspace whose `.weft/skills` counts too (default: the current folder).
        #[arg(long)]
        workdir: Option<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
    /// Place a skill (a folder with a SKILL.md) once for every agent: it is copied into
    /// ~/.weft/skills.
    Add {
        /// The skill's folder or its SKILL.md.
        path: PathBuf,
    },
    /// Delete a skill placed with `add`.
    Remove {
        /// Its name.
        name: String,
    },
    /// Give a skill to the agents again (from their next turn).
    Enable {
        /// Its name.
        name: String,
    },
    /// Stop giving a skill to the agents (from their next turn).
    Disable {
        /// Its name.
        name: String,
    },
}

pub(crate) async fn run(command: SkillsCommand) -> ExitCode {
    let daemon = match client::connect().await {
        Ok(d) => d,
        Err(code) => return code,
    };
    let request = match command {
        SkillsCommand::Import { dry_run, json } => {
            let args = crate::import::ImportArgs {
                servers: false,
                skills: true,
                dry_run,
                json,
            };
            return crate::import::run(&daemon, args).await;
        }
        SkillsCommand::List { workdir, json } => {
            let workdir = match crate::absolute_workdir(workdir) {
                Ok(d) => d,
                Err(code) => return code,
            };
            let skills = match daemon
                .send(verb::ListSkills {
                    workdir: Some(workdir),
                })
                .await
            {
                Ok(s) => s,
                Err(code) => return code,
            };
            if json {
                return print_json(&skills);
            }
            if skills.is_empty() {
                out!("no skills (place one with `weft skills add PATH`)");
            }
            for s in &skills {
                let state = if s.enabled { "on " } else { "off" };
                let source = s.source.as_deref().unwrap_or("catalog");
                out!("{state} {:<24} {:<9} {}", s.name, source, s.description);
                for c in &s.conflicts {
                    out!("    conflict: the user's own {c} keeps the name there");
                }
            }
            return ExitCode::SUCCESS;
        }
        SkillsCommand::Add { path } => {
            let path = match std::path::absolute(&path) {
                Ok(p) => p,
                Err(e) => {
                    eprintln!("weft: {}: {e}", path.display());
                    return ExitCode::from(crate::EXIT_USAGE);
                }
            };
            let added = match daemon
                .send(verb::AddSkill {
                    path: path.display().to_string(),
                })
                .await
            {
                Ok(s) => s,
                Err(code) => return code,
            };
            if let Some(s) = added {
                out!("{}", s.name);
                for c in &s.conflicts {
                    eprintln!("weft: conflict: the user's own {c} keeps the name there");
                }
            }
            return ExitCode::SUCCESS;
        }
        SkillsCommand::Remove { name } => ClientRequest::RemoveSkill { name },
        SkillsCommand::Enable { name } => ClientRequest::SetSkillEnabled {
            name,
            enabled: true,
        },
        SkillsCommand::Disable { name } => ClientRequest::SetSkillEnabled {
            name,
            enabled: false,
        },
    };
    match daemon.run(request).await {
        Ok(_) => ExitCode::SUCCESS,
        Err(code) => code,
    }
}
