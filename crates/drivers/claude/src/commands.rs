//! The slash commands Claude Code accepts in a session, for the composer's `/` menu.
//!
//! Three sources, each where it is true:
//! - the `system/init` line's `slash_commands`: what the CLI recognizes *in this
//!   mode* (headless `-p` leaves out the TUI's own, like `/model`), so it decides
//!   which names are offered, in its order;
//! - the reply to the `initialize` control request the driver sends when a process
//!   starts: the same commands with the CLI's own descriptions and argument hints
//!   (bundled skills included);
//! - the command files the CLI reads, `~/.claude/commands/*.md` (the account's
//!   `CLAUDE_CONFIG_DIR` when set) and `<ws>/.claude/commands/*.md`: which of the
//!   names are the user's or the workspace's, and their descriptions (frontmatter
//!   `description:`, else the first line of the body) before any process ran.
//!
//! A file whose name a built-in already takes is not offered as the user's: the CLI
//! runs its built-in. A name the CLI could not type as `/name` (spaces, a leading dot
//! or dash) and a folder named like a file (`x.md/`) are skipped.

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use serde_json::{json, Value};
use weft_kernel::AgentTurnInput;
use weft_protocol::{CommandSource, SlashCommand};

/// The request id of the `initialize` control request the driver sends.
pub const INIT_REQUEST_ID: &str = "weft-initialize";

/// The `initialize` control request (its reply lists the commands).
pub fn initialize_request() -> Value {
    json!({"type": "control_request", "request_id": INIT_REQUEST_ID,
           "request": {"subtype": "initialize"}})
}

/// Commands the CLI builds in that a same-named command file cannot replace.
const BUILTINS: &[&str] = &[
    "clear",
    "compact",
    "context",
    "cost",
    "init",
    "review",
    "security-review",
    "usage",
    "insights",
    "heapdump",
    "reload-skills",
    "config",
    "help",
    "model",
    "status",
];

/// True when `name` could be typed as `/name`.
pub fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.' | ':'))
}

/// The folders Claude reads command files from for `input`'s turn: the user's, then
/// the workspace's.
pub fn dirs(input: &AgentTurnInput) -> Vec<(PathBuf, CommandSource)> {
    let config = input
        .var("CLAUDE_CONFIG_DIR")
        .map(PathBuf::from)
        .or_else(|| input.var("HOME").map(|h| Path::new(&h).join(".claude")));
    let mut out = Vec::new();
    if let Some(c) = config {
        out.push((c.join("commands"), CommandSource::User));
    }
    out.push((
        input.workdir.join(".claude").join("commands"),
        CommandSource::Project,
    ));
    out
}

/// The command files in `dir` (not recursive; unreadable or missing: none).
pub fn scan_dir(dir: &Path, source: CommandSource) -> Vec<SlashCommand> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<SlashCommand> = entries
        .flatten()
        .filter_map(|e| {
            let path = e.path();
            if path.extension().and_then(|x| x.to_str()) != Some("md") {
                return None;
            }
            // A folder named `x.md`, a socket, …: not a command. Links are followed.
            if !std::fs::metadata(&path).is_ok_and(|m| m.is_file()) {
                return None;
            }
            let name = path.file_stem()?.to_str()?.to_string();
            if !valid_name(&name) {
                return None;
            }
            let text = std::fs::read_to_string(&path).unwrap_or_default();
            let (description, argument_hint) = describe(&text);
            Some(SlashCommand {
                name,
                description,
                argument_hint,
                source,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// Every command file for `input`'s turn, the workspace's winning over the user's,
/// minus those a built-in shadows.
pub fn scan(input: &AgentTurnInput) -> Vec<SlashCommand> {
    let mut by_name: HashMap<String, SlashCommand> = HashMap::new();
    for (dir, source) in dirs(input) {
        for c in scan_dir(&dir, source) {
            if !BUILTINS.contains(&c.name.as_str()) {
                by_name.insert(c.name.clone(), c);
            }
        }
    }
    let mut out: Vec<SlashCommand> = by_name.into_values().collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// `(description, argument hint)` of a command file: frontmatter `description:` and
/// `argument-hint:`, else the body's first non-empty line (headings unmarked).
pub fn describe(text: &str) -> (String, Option<String>) {
    let mut description = None;
    let mut hint = None;
    let mut body = text;
    if let Some(rest) = text
        .strip_prefix("---\n")
        .or_else(|| text.strip_prefix("---\r\n"))
    {
        if let Some(end) = rest.find("\n---") {
            for line in rest[..end].lines() {
                if let Some((k, v)) = line.split_once(':') {
                    let v = v.trim().trim_matches(|c| c == '"' || c == '\'').to_string();
                    match k.trim() {
                        "description" if !v.is_empty() => description = Some(v),
                        "argument-hint" if !v.is_empty() => hint = Some(v),
                        _ => {}
                    }
                }
            }
            body = rest[end + 4..].trim_start_matches(['-', '\r', '\n']);
        }
    }
    let description = description.unwrap_or_else(|| {
        body.lines()
            .map(|l| l.trim().trim_start_matches('#').trim())
            .find(|l| !l.is_empty())
            .map(|l| l.chars().take(120).collect())
            .unwrap_or_default()
    });
    (description, hint)
}

/// The commands of an `initialize` reply (`response.commands`).
pub fn from_initialize(response: &Value) -> Vec<SlashCommand> {
    let Some(list) = response.get("commands").and_then(Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|c| {
            let name = c.get("name")?.as_str()?.trim_start_matches('/').to_string();
            let text = |k: &str| {
                c.get(k)
                    .and_then(Value::as_str)
                    .map(str::to_string)
                    .filter(|s| !s.is_empty())
            };
            Some(SlashCommand {
                source: CommandSource::Builtin,
                description: text("description").unwrap_or_default(),
                argument_hint: text("argumentHint"),
                name,
            })
        })
        .collect()
}

/// What a turn has learned about the session's commands, and the list it last emitted.
#[derive(Debug, Default, Clone)]
pub struct Commands {
    /// The command files (from [`scan`]).
    pub local: Vec<SlashCommand>,
    /// From the `initialize` reply.
    pub described: Vec<SlashCommand>,
    /// From `system/init`.
    pub recognized: Option<Vec<String>>,
    emitted: Option<Vec<SlashCommand>>,
}

impl Commands {
    /// Knows the command files `local`.
    pub fn new(local: Vec<SlashCommand>) -> Self {
        Self {
            local,
            ..Default::default()
        }
    }

    /// The merged list: the names the CLI recognizes (else those it described), each
    /// with its description and where it comes from.
    pub fn list(&self) -> Vec<SlashCommand> {
        let names: Vec<String> = match &self.recognized {
            Some(r) => r.clone(),
            None => self.described.iter().map(|c| c.name.clone()).collect(),
        };
        names
            .into_iter()
            .map(|name| {
                let described = self.described.iter().find(|c| c.name == name);
                let local = self.local.iter().find(|c| c.name == name);
                let source = match local {
                    Some(l) => l.source,
                    None if name.starts_with("mcp__") => CommandSource::Mcp,
                    None => CommandSource::Builtin,
                };
                // The CLI marks a command file's description "… (user)" / "… (project)";
                // the source says that already.
                let description = described
                    .map(|c| {
                        let d = c.description.as_str();
                        d.strip_suffix(" (user)")
                            .or_else(|| d.strip_suffix(" (project)"))
                            .unwrap_or(d)
                            .to_string()
                    })
                    .filter(|d| !d.is_empty())
                    .or_else(|| local.map(|l| l.description.clone()))
                    .unwrap_or_default();
                let argument_hint = described
                    .and_then(|c| c.argument_hint.clone())
                    .or_else(|| local.and_then(|l| l.argument_hint.clone()));
                SlashCommand {
                    name,
                    description,
                    argument_hint,
                    source,
                }
            })
            .collect()
    }

    /// The list when it changed since the last call (nothing known yet: `None`).
    pub fn changed(&mut self) -> Option<Vec<SlashCommand>> {
        if self.recognized.is_none() && self.described.is_empty() {
            return None;
        }
        let list = self.list();
        if self.emitted.as_ref() == Some(&list) {
            return None;
        }
        self.emitted = Some(list.clone());
        Some(list)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn input(home: &Path, ws: &Path) -> AgentTurnInput {
        AgentTurnInput {
            workdir: ws.to_path_buf(),
            env: vec![("CLAUDE_CONFIG_DIR".into(), home.display().to_string())],
            isolated: true,
            ..Default::default()
        }
    }

    fn write(path: &Path, text: &str) {
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, text).unwrap();
    }

    #[test]
    fn frontmatter_first_line_and_no_description() {
        assert_eq!(
            describe("---\ndescription: \"Ship it\"\nargument-hint: [branch]\n---\nBody\n"),
            ("Ship it".into(), Some("[branch]".into()))
        );
        assert_eq!(
            describe("\n# Review the diff\n\nmore"),
            ("Review the diff".into(), None)
        );
        assert_eq!(describe(""), (String::new(), None));
        // Frontmatter without a description falls back to the body.
        assert_eq!(
            describe("---\nmodel: x\n---\nDo the thing\n").0,
            "Do the thing"
        );
    }

    #[test]
    fn scanner_edge_cases() {
        let home = tempfile::tempdir().unwrap();
        let ws = tempfile::tempdir().unwrap();
        let user = home.path().join("commands");
        let project = ws.path().join(".claude/commands");
        write(&user.join("ship.md"), "---\ndescription: Ship it\n---\n");
        write(&user.join("empty.md"), "");
        // A name a built-in takes: the CLI runs its built-in, so the file is not offered.
        write(&user.join("compact.md"), "my own compact");
        // Names that cannot be typed as /name.
        write(&user.join("has space.md"), "x");
        write(&user.join(".hidden.md"), "x");
        write(&user.join("-dash.md"), "x");
        // A folder named like a file, and a file that is not markdown.
        std::fs::create_dir_all(user.join("folder.md")).unwrap();
        write(&user.join("notes.txt"), "x");
        // The workspace's wins over the user's on a name.
        write(&user.join("deploy.md"), "user deploy");
        write(&project.join("deploy.md"), "# Deploy the workspace");
        let got = scan(&input(home.path(), ws.path()));
        let summary: Vec<(&str, &str, CommandSource)> = got
            .iter()
            .map(|c| (c.name.as_str(), c.description.as_str(), c.source))
            .collect();
        assert_eq!(
            summary,
            vec![
                ("deploy", "Deploy the workspace", CommandSource::Project),
                ("empty", "", CommandSource::User),
                ("ship", "Ship it", CommandSource::User),
            ]
        );
    }

    #[test]
    fn merged_list_follows_init_and_takes_descriptions_from_initialize() {
        let mut c = Commands::new(vec![SlashCommand {
            name: "ship".into(),
            description: "Ship it".into(),
            argument_hint: None,
            source: CommandSource::User,
        }]);
        assert_eq!(c.changed(), None);
        c.described = from_initialize(&json!({"commands": [
            {"name": "compact", "description": "Clear history but keep a summary", "argumentHint": "<instructions>"},
            {"name": "ship", "description": "Ship it (user)", "argumentHint": ""},
            {"name": "tui-only", "description": "not in -p"}
        ]}));
        c.recognized = Some(vec![
            "compact".into(),
            "ship".into(),
            "mcp__srv__hello".into(),
        ]);
        let list = c.changed().unwrap();
        assert_eq!(list.len(), 3);
        assert_eq!(list[0].description, "Clear history but keep a summary");
        assert_eq!(list[0].argument_hint.as_deref(), Some("<instructions>"));
        assert_eq!(list[0].source, CommandSource::Builtin);
        assert_eq!(
            (list[1].description.as_str(), list[1].source),
            ("Ship it", CommandSource::User)
        );
        assert_eq!(list[2].source, CommandSource::Mcp);
        assert_eq!(c.changed(), None, "unchanged lists are not emitted twice");
    }
}
