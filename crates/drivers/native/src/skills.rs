//! Skills and memory, offered under every pack.
//!
//! A skill is a folder with a `SKILL.md` (front matter `name`, `description`, then the
//! body) in the workspace's `.weft/skills/` (in a workspace the user trusted: a skill
//! is instructions the model follows) or the global `<WEFT_HOME>/skills/` (the
//! workspace's wins on a name). Only the descriptions go in the prompt; the `skill` tool
//! loads a body when the model wants it.
//!
//! Memory is the workspace's `.weft/memory.md`, one `- ` line per fact, saved with
//! `memory_save` and listed with `memory_list`; the newest facts go in the prompt.

use std::path::{Path, PathBuf};

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use crate::tools::{field, first_line, Native, NoArgs, Spec, ToolCx, ToolOutput};

/// One skill.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skill {
    /// Its name.
    pub name: String,
    /// When to use it.
    pub description: String,
    /// Its SKILL.md.
    pub path: PathBuf,
}

fn front_matter(text: &str) -> Option<(String, String, String)> {
    let rest = text.strip_prefix("---")?;
    let end = rest.find("\n---")?;
    let (head, body) = rest.split_at(end);
    let mut name = None;
    let mut description = None;
    for line in head.lines() {
        if let Some((k, v)) = line.split_once(':') {
            let v = v.trim().trim_matches('"').to_string();
            match k.trim() {
                "name" => name = Some(v),
                "description" => description = Some(v),
                _ => {}
            }
        }
    }
    let body = body.trim_start_matches("\n---").trim_start().to_string();
    Some((name?, description?, body))
}

fn read(path: &Path) -> Option<String> {
    weft_workspace::files::read_config(path, weft_workspace::files::CONFIG_CAP)
        .ok()
        .flatten()
}

/// The skills for `workdir` (a trusted workspace's; none: the global ones only), by
/// name.
pub fn find(workdir: Option<&Path>, home: &Path) -> Vec<Skill> {
    let mut out: Vec<Skill> = Vec::new();
    let dirs = workdir
        .map(|w| w.join(".weft").join("skills"))
        .into_iter()
        .chain([home.join("skills")]);
    for dir in dirs {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<Skill> = entries
            .flatten()
            .filter_map(|e| {
                let path = e.path().join("SKILL.md");
                let text = read(&path)?;
                let (name, description, _) = front_matter(&text)?;
                Some(Skill {
                    name,
                    description,
                    path,
                })
            })
            .collect();
        found.sort_by(|a, b| a.name.cmp(&b.name));
        for s in found {
            if !out.iter().any(|o| o.name == s.name) {
                out.push(s);
            }
        }
    }
    out
}

/// The prompt section listing `skills`.
pub fn prompt(skills: &[Skill]) -> Option<String> {
    if skills.is_empty() {
        return None;
    }
    let lines: Vec<String> = skills
        .iter()
        .map(|s| format!("- {}: {}", s.name, first_line(&s.description, 200)))
        .collect();
    Some(format!(
        "Skills you can load with the skill tool when a task fits one:\n{}",
        lines.join("\n")
    ))
}

/// `skill {name}`.
pub struct SkillTool(pub Vec<Skill>);

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct SkillArgs {
    name: String,
}

#[async_trait]
impl Native for SkillTool {
    const SPEC: Spec = Spec {
        name: "skill",
        description:
            "Load a skill's instructions by name (the skills are listed in the system prompt).",
        read_only: true,
        kind: ToolKind::Read,
    };
    type Args = SkillArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("skill {}", field(input, "name"))
    }
    async fn call(&self, a: Self::Args, _cx: &ToolCx<'_>) -> ToolOutput {
        let Some(s) = self.0.iter().find(|s| s.name == a.name) else {
            let names: Vec<&str> = self.0.iter().map(|s| s.name.as_str()).collect();
            return ToolOutput::error(format!(
                "no skill named {:?}; the skills are: {}",
                a.name,
                names.join(", ")
            ));
        };
        match read(&s.path).and_then(|t| front_matter(&t)) {
            Some((_, _, body)) => ToolOutput::ok(format!(
                "Skill {} (from {}):\n{body}",
                s.name,
                s.path.display()
            )),
            None => ToolOutput::error(format!("cannot read {}", s.path.display())),
        }
    }
}

fn memory_path(workdir: &Path) -> PathBuf {
    workdir.join(".weft").join("memory.md")
}

/// The workspace's remembered facts, oldest first.
pub fn memories(workdir: &Path) -> Vec<String> {
    read(&memory_path(workdir))
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.strip_prefix("- ").map(String::from))
        .collect()
}

/// The prompt section of the newest 50 facts.
pub fn memory_prompt(workdir: &Path) -> Option<String> {
    let all = memories(workdir);
    if all.is_empty() {
        return None;
    }
    let recent = &all[all.len().saturating_sub(50)..];
    Some(format!(
        "What you saved to memory in this workspace earlier:\n{}",
        recent
            .iter()
            .map(|m| format!("- {m}"))
            .collect::<Vec<_>>()
            .join("\n")
    ))
}

/// `memory_save {text}`.
pub struct MemorySave;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct SaveArgs {
    text: String,
}

#[async_trait]
impl Native for MemorySave {
    const SPEC: Spec = Spec {
        name: "memory_save",
        description: "Remember one fact about this workspace for later sessions (a preference, a convention, where something is).",
        read_only: false,
        kind: ToolKind::Other,
    };
    type Args = SaveArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("memory_save {}", first_line(field(input, "text"), 60))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let fact = a.text.split_whitespace().collect::<Vec<_>>().join(" ");
        if fact.is_empty() {
            return ToolOutput::error("there is nothing to remember");
        }
        let path = memory_path(cx.root());
        if memories(cx.root()).contains(&fact) {
            return ToolOutput::ok("already remembered");
        }
        let r = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| {
                use std::io::Write;
                let mut f = std::fs::OpenOptions::new()
                    .create(true)
                    .append(true)
                    .open(&path)?;
                writeln!(f, "- {fact}")
            });
        match r {
            Ok(()) => ToolOutput::ok("remembered"),
            Err(e) => ToolOutput::error(format!("cannot save the memory: {e}")),
        }
    }
}

/// `memory_list`.
pub struct MemoryList;

#[async_trait]
impl Native for MemoryList {
    const SPEC: Spec = Spec {
        name: "memory_list",
        description: "List what is remembered about this workspace.",
        read_only: true,
        kind: ToolKind::Read,
    };
    type Args = NoArgs;
    async fn call(&self, _: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let all = memories(cx.root());
        ToolOutput::ok(if all.is_empty() {
            "(nothing remembered yet)".into()
        } else {
            all.iter()
                .map(|m| format!("- {m}"))
                .collect::<Vec<_>>()
                .join("\n")
        })
    }
}
