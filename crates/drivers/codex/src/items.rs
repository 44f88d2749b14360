//! Helpers that turn codex's items into Weft's vocabulary: readable commands, file
//! changes as inputs and summaries, plan mode's markdown as a plan, bounded results.

use serde_json::{json, Value};
use weft_protocol::{ChangeKind, FileChange, Plan, PlanStep, StepStatus};

use crate::normalize::RESULT_CAP;
use crate::wire::FileUpdateChange;

/// A plan from plan mode's markdown: list items are steps (`- [x]` done), the rest
/// (headings, prose) the explanation.
pub fn plan_from_markdown(text: &str) -> Option<Plan> {
    let mut steps = Vec::new();
    let mut prose = Vec::new();
    for line in text.lines() {
        let t = line.trim();
        let item = t
            .strip_prefix("- ")
            .or_else(|| t.strip_prefix("* "))
            .or_else(|| {
                let digits = t.chars().take_while(char::is_ascii_digit).count();
                (digits > 0)
                    .then(|| {
                        t[digits..]
                            .strip_prefix(". ")
                            .or(t[digits..].strip_prefix(") "))
                    })
                    .flatten()
            });
        match item {
            Some(step) => {
                let (status, text) = if let Some(s) = step.strip_prefix("[x] ") {
                    (StepStatus::Completed, s)
                } else if let Some(s) = step.strip_prefix("[ ] ") {
                    (StepStatus::Pending, s)
                } else {
                    (StepStatus::Pending, step)
                };
                steps.push(PlanStep {
                    text: text.trim().to_string(),
                    status,
                });
            }
            None if !t.is_empty() => prose.push(t.trim_start_matches('#').trim().to_string()),
            None => {}
        }
    }
    if steps.is_empty() && prose.is_empty() {
        return None;
    }
    if steps.is_empty() {
        steps = prose
            .drain(..)
            .map(|text| PlanStep {
                text,
                status: StepStatus::Pending,
            })
            .collect();
    }
    Some(Plan {
        explanation: (!prose.is_empty()).then(|| prose.join("\n")),
        steps,
    })
}

/// The command as the user would type it: codex's parsed action when there is one,
/// else the `bash -lc '…'` wrapper taken off.
pub fn readable_command(command: &str, actions: &[Value]) -> String {
    if let [one] = actions {
        if let Some(c) = one["command"].as_str().filter(|c| !c.is_empty()) {
            return c.to_string();
        }
    }
    for prefix in [
        "/bin/bash -lc ",
        "bash -lc ",
        "/bin/sh -c ",
        "sh -c ",
        "/bin/zsh -lc ",
    ] {
        if let Some(rest) = command.strip_prefix(prefix) {
            if let Some(inner) = rest.strip_prefix('\'').and_then(|r| r.strip_suffix('\'')) {
                return inner.replace("'\\''", "'");
            }
            return rest.to_string();
        }
    }
    command.to_string()
}

pub fn changes_input(changes: &[FileUpdateChange]) -> Value {
    json!({"changes": changes.iter().map(|c| json!({
        "path": c.path, "kind": c.kind_name(), "diff": c.diff
    })).collect::<Vec<_>>()})
}

/// A `fileChange` item's changes in the normalized shape. Codex gives an added file's
/// (and a deleted one's) content rather than a diff, and an update's diff from its
/// first `@@`; each becomes a full unified diff. A moved file is named by its new path.
pub fn file_changes(changes: &[FileUpdateChange]) -> Vec<FileChange> {
    changes
        .iter()
        .map(|c| match c.kind_name() {
            "add" => weft_kernel::changes::file_change(&c.path, None, Some(&c.diff)),
            "delete" => weft_kernel::changes::file_change(&c.path, Some(&c.diff), None),
            _ => {
                let path = c.kind["move_path"].as_str().unwrap_or(&c.path);
                FileChange {
                    path: path.to_string(),
                    kind: ChangeKind::Modify,
                    diff: weft_kernel::changes::with_header(path, ChangeKind::Modify, &c.diff),
                }
            }
        })
        .collect()
}

pub fn changes_summary(changes: &[FileUpdateChange]) -> String {
    match changes {
        [] => "apply a patch".into(),
        [one] => {
            let verb = match one.kind_name() {
                "add" => "add",
                "delete" => "delete",
                _ => "edit",
            };
            format!("{verb} {}", one.path)
        }
        many => format!("edit {} files", many.len()),
    }
}

pub fn part_text(part: &Value) -> String {
    match part {
        Value::String(s) => s.clone(),
        other => other["text"]
            .as_str()
            .map_or_else(|| other.to_string(), String::from),
    }
}

pub fn capped(s: &str) -> String {
    if s.len() <= RESULT_CAP {
        return s.to_string();
    }
    let mut cut = RESULT_CAP;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    format!("{}\n… (output cut at {} KiB)", &s[..cut], RESULT_CAP / 1024)
}

pub fn first_line(s: &str, max: usize) -> String {
    let line = s.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plan_markdown_becomes_steps_and_an_explanation() {
        let plan = plan_from_markdown("# Fix it\nWhy: it breaks.\n- [x] Read\n2. Write\n* Test")
            .unwrap_or_default();
        assert_eq!(plan.explanation.as_deref(), Some("Fix it\nWhy: it breaks."));
        let steps: Vec<(&str, StepStatus)> = plan
            .steps
            .iter()
            .map(|s| (s.text.as_str(), s.status))
            .collect();
        assert_eq!(
            steps,
            [
                ("Read", StepStatus::Completed),
                ("Write", StepStatus::Pending),
                ("Test", StepStatus::Pending)
            ]
        );
        assert!(plan_from_markdown("  \n").is_none());
    }

    #[test]
    fn commands_lose_their_shell_wrapper() {
        assert_eq!(
            readable_command("/bin/bash -lc 'echo '\\''hi'\\'''", &[]),
            "echo 'hi'"
        );
        assert_eq!(
            readable_command("x", &[json!({"type": "unknown", "command": "ls -la"})]),
            "ls -la"
        );
        assert_eq!(readable_command("cargo test", &[]), "cargo test");
    }
}
