//! Claude Code's tool vocabulary: a normalized kind where the projection is lossless,
//! a one-line summary, the plan a tool call implies, the artifacts it produced.

use serde_json::Value;
use weft_kernel::changes;
use weft_protocol::{Artifact, ArtifactKind, FileChange, PlanStep, StepStatus, ToolKind};

/// The tools that start a subagent (`Task` before 2.1, `Agent` in 2.1.x requests).
pub fn is_subagent_tool(name: &str) -> bool {
    matches!(name, "Task" | "Agent")
}

/// The normalized kind of a tool.
pub fn kind(name: &str) -> ToolKind {
    match name {
        "Bash" | "BashOutput" | "KillShell" => ToolKind::Shell,
        "Read" => ToolKind::Read,
        "Write" => ToolKind::Write,
        "Edit" | "MultiEdit" | "NotebookEdit" => ToolKind::Edit,
        "Glob" | "Grep" | "LS" => ToolKind::Search,
        "WebFetch" | "WebSearch" => ToolKind::Fetch,
        "TodoWrite" | "TaskCreate" | "TaskUpdate" | "ExitPlanMode" | "EnterPlanMode" => {
            ToolKind::Plan
        }
        n if is_subagent_tool(n) => ToolKind::Task,
        n if n.starts_with("mcp__") => ToolKind::Mcp,
        _ => ToolKind::Other,
    }
}

fn str_field<'a>(input: &'a Value, key: &str) -> Option<&'a str> {
    input
        .get(key)
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty())
}

fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or_default().trim();
    if line.chars().count() > max {
        let cut: String = line.chars().take(max).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

/// One human line saying what a call does.
pub fn summary(name: &str, input: &Value) -> String {
    let path = || str_field(input, "file_path").or_else(|| str_field(input, "notebook_path"));
    let detail = match name {
        "Bash" => str_field(input, "description")
            .or_else(|| str_field(input, "command"))
            .map(|s| first_line(s, 80)),
        "Read" | "Write" | "Edit" | "MultiEdit" | "NotebookEdit" => path().map(String::from),
        "Glob" | "Grep" => str_field(input, "pattern").map(String::from),
        "WebFetch" => str_field(input, "url").map(String::from),
        "WebSearch" => str_field(input, "query").map(String::from),
        "TodoWrite" => Some("update todos".into()),
        "TaskCreate" => str_field(input, "subject").map(String::from),
        "TaskUpdate" => str_field(input, "taskId").map(|id| format!("task {id}")),
        "AskUserQuestion" => input
            .get("questions")
            .and_then(|q| q.get(0))
            .and_then(|q| str_field(q, "question"))
            .map(|s| first_line(s, 80)),
        "ExitPlanMode" => Some("present plan".into()),
        n if is_subagent_tool(n) => str_field(input, "description").map(String::from),
        _ => None,
    };
    match detail {
        Some(d) => format!("{name} {d}"),
        None => name.to_string(),
    }
}

fn step_status(s: Option<&str>) -> StepStatus {
    match s {
        Some("completed") => StepStatus::Completed,
        Some("in_progress") => StepStatus::InProgress,
        _ => StepStatus::Pending,
    }
}

/// TodoWrite's `todos` as plan steps.
pub fn todo_steps(input: &Value) -> Option<Vec<PlanStep>> {
    let todos = input.get("todos")?.as_array()?;
    Some(
        todos
            .iter()
            .map(|t| PlanStep {
                text: str_field(t, "content").unwrap_or_default().to_string(),
                status: step_status(t.get("status").and_then(Value::as_str)),
            })
            .collect(),
    )
}

/// The tasks TaskCreate/TaskUpdate keep, in creation order.
#[derive(Debug, Clone, Default)]
pub struct TaskList {
    tasks: Vec<(String, PlanStep)>,
}

impl TaskList {
    /// A TaskCreate succeeded: `result` is its `tool_use_result` (`{"task":{id,subject}}`).
    pub fn created(&mut self, input: &Value, result: Option<&Value>) {
        let task = result.and_then(|r| r.get("task"));
        let id = task
            .and_then(|t| t.get("id"))
            .and_then(|v| v.as_str().map(String::from).or_else(|| Some(v.to_string())))
            .unwrap_or_else(|| (self.tasks.len() + 1).to_string());
        let text = task
            .and_then(|t| str_field(t, "subject"))
            .or_else(|| str_field(input, "subject"))
            .unwrap_or_default()
            .to_string();
        self.tasks.push((
            id,
            PlanStep {
                text,
                status: StepStatus::Pending,
            },
        ));
    }

    /// A TaskUpdate succeeded. Returns false when the task is unknown.
    pub fn updated(&mut self, input: &Value) -> bool {
        let Some(id) = input.get("taskId").map(|v| match v.as_str() {
            Some(s) => s.to_string(),
            None => v.to_string(),
        }) else {
            return false;
        };
        let status = input.get("status").and_then(Value::as_str);
        if status == Some("deleted") {
            let before = self.tasks.len();
            self.tasks.retain(|(t, _)| *t != id);
            return self.tasks.len() != before;
        }
        let Some((_, step)) = self.tasks.iter_mut().find(|(t, _)| *t == id) else {
            return false;
        };
        if status.is_some() {
            step.status = step_status(status);
        }
        if let Some(subject) = str_field(input, "subject") {
            step.text = subject.to_string();
        }
        true
    }

    /// The steps.
    pub fn steps(&self) -> Vec<PlanStep> {
        self.tasks.iter().map(|(_, s)| s.clone()).collect()
    }
}

const IMAGE_EXTS: &[(&str, &str)] = &[
    ("png", "image/png"),
    ("jpg", "image/jpeg"),
    ("jpeg", "image/jpeg"),
    ("gif", "image/gif"),
    ("webp", "image/webp"),
    ("svg", "image/svg+xml"),
];

/// An artifact for a file at `path`; images are photos.
pub fn file_artifact(path: &str, caption: Option<String>) -> Artifact {
    let file_name = std::path::Path::new(path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| path.to_string());
    let ext = std::path::Path::new(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default();
    let image = IMAGE_EXTS.iter().find(|(e, _)| *e == ext);
    Artifact {
        url: None,
        path: Some(path.to_string()),
        file_name,
        mime: image.map(|(_, m)| m.to_string()),
        kind: if image.is_some() {
            ArtifactKind::Photo
        } else {
            ArtifactKind::Document
        },
        caption,
    }
}

/// The file a finished Write/Edit/NotebookEdit call wrote, if it is one.
pub fn written_path(name: &str, input: &Value, result: Option<&Value>) -> Option<String> {
    if !matches!(name, "Write" | "Edit" | "MultiEdit" | "NotebookEdit") {
        return None;
    }
    result
        .and_then(|r| str_field(r, "filePath"))
        .or_else(|| str_field(input, "file_path"))
        .or_else(|| str_field(input, "notebook_path"))
        .map(String::from)
}

/// The string replacements of an Edit (`old_string`, `new_string`, `replace_all`) or a
/// MultiEdit (`edits: [...]`).
fn replacements(name: &str, input: &Value) -> Vec<(String, String, bool)> {
    let one = |e: &Value| {
        (
            str_field(e, "old_string").unwrap_or_default().to_string(),
            e.get("new_string")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_string(),
            e.get("replace_all")
                .and_then(Value::as_bool)
                .unwrap_or(false),
        )
    };
    match name {
        "Edit" => vec![one(input)],
        "MultiEdit" => input
            .get("edits")
            .and_then(Value::as_array)
            .map(|a| a.iter().map(one).collect())
            .unwrap_or_default(),
        _ => Vec::new(),
    }
}

/// The file a Write, Edit or MultiEdit changes, as a unified diff. `original` is the
/// file before the call: the `originalFile` of its `tool_use_result` once it ran (null
/// for a file Write created), or what is on disk when the call is announced (none: not
/// there). An Edit whose text is not in `original` is shown as its own fragment.
pub fn file_changes(name: &str, input: &Value, original: Option<Option<&str>>) -> Vec<FileChange> {
    let Some(path) = str_field(input, "file_path") else {
        return Vec::new();
    };
    let disk;
    let before: Option<&str> = match original {
        Some(o) => o,
        None => {
            disk = std::path::Path::new(path)
                .is_absolute()
                .then(|| std::fs::read_to_string(path).ok())
                .flatten();
            disk.as_deref()
        }
    };
    match name {
        "Write" => {
            let content = input
                .get("content")
                .and_then(Value::as_str)
                .unwrap_or_default();
            vec![changes::file_change(path, before, Some(content))]
        }
        "Edit" | "MultiEdit" => {
            let edits = replacements(name, input);
            let refs: Vec<(&str, &str, bool)> = edits
                .iter()
                .map(|(o, n, a)| (o.as_str(), n.as_str(), *a))
                .collect();
            if let Some(after) = before.and_then(|b| changes::replaced(b, &refs)) {
                return vec![changes::file_change(path, before, Some(&after))];
            }
            let old: Vec<&str> = refs.iter().map(|e| e.0).collect();
            let new: Vec<&str> = refs.iter().map(|e| e.1).collect();
            vec![changes::fragment_change(
                path,
                &old.join("\n"),
                &new.join("\n"),
            )]
        }
        _ => Vec::new(),
    }
}

/// The file as it was before a finished call, from its `tool_use_result`: `Some(None)`
/// for one a Write created.
pub fn original_file(result: Option<&Value>) -> Option<Option<&str>> {
    let r = result?.as_object()?;
    match r.get("originalFile") {
        Some(Value::String(s)) => Some(Some(s.as_str())),
        Some(Value::Null) if r.get("type").and_then(Value::as_str) == Some("create") => Some(None),
        _ => None,
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn summaries_and_kinds() {
        let bash = json!({"command": "echo hi\necho more", "description": ""});
        assert_eq!(summary("Bash", &bash), "Bash echo hi");
        assert_eq!(kind("Bash"), ToolKind::Shell);
        assert_eq!(
            summary("Write", &json!({"file_path": "/a/b.txt"})),
            "Write /a/b.txt"
        );
        assert_eq!(kind("mcp__x__y"), ToolKind::Mcp);
        assert_eq!(kind("Agent"), ToolKind::Task);
        assert_eq!(summary("Frobnicate", &json!({})), "Frobnicate");
    }

    #[test]
    fn task_list_follows_create_and_update() {
        let mut tasks = TaskList::default();
        tasks.created(
            &json!({"subject": "A"}),
            Some(&json!({"task": {"id": "1", "subject": "A"}})),
        );
        tasks.created(&json!({"subject": "B"}), None);
        assert!(tasks.updated(&json!({"taskId": "1", "status": "completed"})));
        assert!(tasks.updated(&json!({"taskId": "2", "status": "in_progress", "subject": "B2"})));
        assert!(!tasks.updated(&json!({"taskId": "9", "status": "completed"})));
        let steps = tasks.steps();
        assert_eq!(steps[0].status, StepStatus::Completed);
        assert_eq!(steps[1].text, "B2");
        assert!(tasks.updated(&json!({"taskId": "1", "status": "deleted"})));
        assert_eq!(tasks.steps().len(), 1);
    }

    #[test]
    fn images_are_photos() {
        let a = file_artifact("/x/shot.PNG", None);
        assert_eq!(a.kind, ArtifactKind::Photo);
        assert_eq!(a.mime.as_deref(), Some("image/png"));
        assert_eq!(
            file_artifact("/x/notes.md", None).kind,
            ArtifactKind::Document
        );
    }

    #[test]
    fn edits_and_writes_become_unified_diffs() {
        let edit = json!({"file_path": "/w/a.txt", "old_string": "two", "new_string": "2"});
        let c = file_changes("Edit", &edit, Some(Some("one\ntwo\nthree\n")));
        assert_eq!(c.len(), 1);
        assert_eq!(c[0].path, "/w/a.txt");
        assert_eq!(c[0].kind, weft_protocol::ChangeKind::Modify);
        assert_eq!(
            c[0].diff,
            "--- a/w/a.txt\n+++ b/w/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        let multi = json!({"file_path": "/w/a.txt", "edits": [
            {"old_string": "one", "new_string": "1"},
            {"old_string": "three", "new_string": "3"}]});
        let c = file_changes("MultiEdit", &multi, Some(Some("one\ntwo\nthree\n")));
        assert!(
            c[0].diff.contains("-one\n+1\n two\n-three\n+3\n"),
            "{}",
            c[0].diff
        );
        let write = json!({"file_path": "/w/new.txt", "content": "hi\n"});
        let result = json!({"type": "create", "filePath": "/w/new.txt", "originalFile": null});
        let c = file_changes("Write", &write, original_file(Some(&result)));
        assert_eq!(c[0].kind, weft_protocol::ChangeKind::Add);
        assert!(c[0].diff.ends_with("@@ -0,0 +1 @@\n+hi\n"), "{}", c[0].diff);
        // The text is not in the file (it changed meanwhile): the fragment alone.
        let c = file_changes("Edit", &edit, Some(Some("other\n")));
        assert!(c[0].diff.contains("-two\n+2"), "{}", c[0].diff);
        assert!(file_changes("Read", &edit, None).is_empty());
    }
}
