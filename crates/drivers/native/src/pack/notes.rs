//! The notes pack: a knowledge base of Markdown files in the workspace's `.notes/`
//! (list, search, read, add), with search-before-add as its policy so the model looks
//! for an existing note before it writes a duplicate.

use std::sync::Arc;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use super::{DomainPack, PermissionMode};
use crate::tools::{field, Native, NoArgs, Spec, ToolCx, ToolOutput, ToolRef, Workspace};

/// The notes pack.
pub struct Notes;

const DIR: &str = ".notes";

impl DomainPack for Notes {
    fn name(&self) -> &str {
        "notes"
    }

    fn prompt(&self) -> String {
        "You keep the user's knowledge base: Markdown notes in the workspace's .notes folder. \
         Search before you add, so facts live in one note; name notes by topic (kebab-case); \
         answer from the notes and say which ones you used."
            .into()
    }

    fn context_files(&self) -> Vec<String> {
        vec!["AGENTS.md".into(), ".notes/README.md".into()]
    }

    fn tools(&self) -> Vec<ToolRef> {
        vec![
            Arc::new(List),
            Arc::new(Search),
            Arc::new(ReadNote),
            Arc::new(Add),
        ]
    }

    /// An add needs a search (or a list) since the last add.
    fn policy(&self, tool: &str, _input: &Value, ws: &Workspace) -> Result<(), String> {
        if tool == "notes_add" {
            if !(ws.was_used("notes_search") || ws.was_used("notes_list")) {
                return Err("search the notes (notes_search) before you add one, so nothing is written twice (the notes pack's search-before-add rule)".into());
            }
            ws.forget_used("notes_search");
            ws.forget_used("notes_list");
        }
        Ok(())
    }

    fn permission_default(&self) -> PermissionMode {
        PermissionMode::Auto
    }
}

fn note_path(ws: &Workspace, name: &str) -> Result<std::path::PathBuf, String> {
    let clean = name.trim().trim_end_matches(".md");
    if clean.is_empty() || clean.contains('/') || clean.contains('\\') || clean.starts_with('.') {
        return Err(format!(
            "{name:?} is not a note name (a plain name, no folders)"
        ));
    }
    ws.resolve(&format!("{DIR}/{clean}.md"))
}

fn notes(ws: &Workspace) -> Vec<(String, String)> {
    let Ok(dir) = std::fs::read_dir(ws.root().join(DIR)) else {
        return Vec::new();
    };
    let mut out: Vec<(String, String)> = dir
        .flatten()
        .filter_map(|e| {
            let name = e.file_name().to_string_lossy().into_owned();
            let stem = name.strip_suffix(".md")?.to_string();
            Some((stem, std::fs::read_to_string(e.path()).unwrap_or_default()))
        })
        .collect();
    out.sort();
    out
}

struct List;

#[async_trait]
impl Native for List {
    const SPEC: Spec = Spec {
        name: "notes_list",
        description: "List the notes with their first lines.",
        read_only: true,
        kind: ToolKind::Search,
    };
    type Args = NoArgs;
    async fn call(&self, _: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let all = notes(cx.workspace);
        if all.is_empty() {
            return ToolOutput::ok("(no notes yet)");
        }
        ToolOutput::ok(
            all.iter()
                .map(|(n, t)| format!("{n}: {}", t.lines().next().unwrap_or_default()))
                .collect::<Vec<_>>()
                .join("\n"),
        )
    }
}

struct Search;

#[derive(Deserialize, JsonSchema)]
struct SearchArgs {
    query: String,
}

#[async_trait]
impl Native for Search {
    const SPEC: Spec = Spec {
        name: "notes_search",
        description:
            "Search the notes for every word of the query (case-insensitive); shows matching lines.",
        read_only: true,
        kind: ToolKind::Search,
    };
    type Args = SearchArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("notes_search {}", field(input, "query"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let words: Vec<String> = a.query.split_whitespace().map(str::to_lowercase).collect();
        let mut hits = Vec::new();
        for (name, text) in notes(cx.workspace) {
            let lower = text.to_lowercase();
            if words
                .iter()
                .all(|w| lower.contains(w) || name.contains(w.as_str()))
            {
                let lines: Vec<&str> = text
                    .lines()
                    .filter(|l| words.iter().any(|w| l.to_lowercase().contains(w)))
                    .take(5)
                    .collect();
                hits.push(format!("{name}:\n  {}", lines.join("\n  ")));
            }
        }
        ToolOutput::ok(if hits.is_empty() {
            "no note matches".into()
        } else {
            hits.join("\n")
        })
    }
}

struct ReadNote;

#[derive(Deserialize, JsonSchema)]
struct NameArgs {
    name: String,
}

#[async_trait]
impl Native for ReadNote {
    const SPEC: Spec = Spec {
        name: "notes_read",
        description: "Read one note by name.",
        read_only: true,
        kind: ToolKind::Read,
    };
    type Args = NameArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("notes_read {}", field(input, "name"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match note_path(cx.workspace, &a.name) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        match std::fs::read_to_string(&path) {
            Ok(t) => ToolOutput::ok(t),
            Err(_) => ToolOutput::error(format!("there is no note {:?}", a.name)),
        }
    }
}

struct Add;

#[derive(Deserialize, JsonSchema)]
struct AddArgs {
    name: String,
    content: String,
}

#[async_trait]
impl Native for Add {
    const SPEC: Spec = Spec {
        name: "notes_add",
        description: "Add a note, or append to the note of that name if it exists.",
        read_only: false,
        kind: ToolKind::Write,
    };
    type Args = AddArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("notes_add {}", field(input, "name"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match note_path(cx.workspace, &a.name) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        cx.workspace.before_write(&path);
        let mut text = std::fs::read_to_string(&path).unwrap_or_default();
        let appended = !text.is_empty();
        if appended && !text.ends_with('\n') {
            text.push('\n');
        }
        text.push_str(&a.content);
        if !text.ends_with('\n') {
            text.push('\n');
        }
        let written = path
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|_| std::fs::write(&path, text));
        match written {
            Ok(()) => ToolOutput::ok(if appended {
                format!("appended to the note {}", a.name)
            } else {
                format!("added the note {}", a.name)
            }),
            Err(e) => ToolOutput::error(format!("cannot write the note: {e}")),
        }
    }
}
