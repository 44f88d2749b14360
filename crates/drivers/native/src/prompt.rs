//! The system prompt: Weft's base, the pack's, the context files the pack names found
//! from the workdir upward (the nearest first), and the workspace's facts.

use std::path::Path;

use crate::pack::DomainPack;

const BASE: &str = "You are Weft's agent. You act through the tools you are given and \
nothing else; a tool's result is the truth about the world. Work step by step, call tools \
when you need to look or act, and answer without tools when you are done. If a tool is \
refused, do not try to get around the refusal.";

/// Added to the system prompt while plan mode is on.
pub const PLAN_MODE: &str = "\n\nPlan mode is on: tools that change anything are refused. \
Look around with read-only tools, then present your plan as numbered steps (or with \
update_plan) and stop; the user decides whether to carry it out.";

/// The most of one context file put in the prompt.
const CONTEXT_CAP: usize = 40_000;

/// The system prompt for `pack` in `workdir`.
pub fn system(pack: &dyn DomainPack, workdir: &Path, extra: Option<&str>) -> String {
    let mut out = format!(
        "{BASE}\n\n{}\n\nThe workspace is {}.",
        pack.prompt(),
        workdir.display()
    );
    for (path, text) in context_files(&pack.context_files(), workdir) {
        out.push_str(&format!(
            "\n\n<context file=\"{}\">\n{text}\n</context>",
            path.display()
        ));
    }
    if let Some(extra) = extra.filter(|e| !e.trim().is_empty()) {
        out.push_str("\n\n");
        out.push_str(extra);
    }
    out
}

/// The files named `names` in `workdir` and its ancestors, nearest first, each at
/// most [`CONTEXT_CAP`] bytes.
pub fn context_files(names: &[String], workdir: &Path) -> Vec<(std::path::PathBuf, String)> {
    let mut found = Vec::new();
    for dir in workdir.ancestors() {
        for name in names {
            let p = dir.join(name);
            if let Ok(mut text) = std::fs::read_to_string(&p) {
                if text.len() > CONTEXT_CAP {
                    let mut end = CONTEXT_CAP;
                    while !text.is_char_boundary(end) {
                        end -= 1;
                    }
                    text.truncate(end);
                    text.push_str("\n[cut]");
                }
                found.push((p, text));
            }
        }
    }
    found
}
