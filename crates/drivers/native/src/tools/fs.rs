//! File tools of the coding pack: read, ls, write, edit.

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::ToolKind;

use super::{field, Native, Spec, ToolCx, ToolOutput};

/// `read {path, offset?, limit?}`: numbered lines of a text file.
pub struct Read;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct ReadArgs {
    #[schemars(description = "file path, relative to the workspace")]
    path: String,
    #[schemars(range(min = 1))]
    offset: Option<usize>,
    #[schemars(range(min = 1))]
    limit: Option<usize>,
}

#[async_trait]
impl Native for Read {
    const SPEC: Spec = Spec {
        name: "read",
        description: "Read a text file in the workspace. Lines are numbered from 1; offset is the first line to show, limit how many (default 2000).",
        read_only: true,
        kind: ToolKind::Read,
    };
    type Args = ReadArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("read {}", field(input, "path"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match cx.workspace.resolve(&a.path) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let bytes = match cx.workspace.read_file(&a.path) {
            Ok(b) => b,
            Err(e) => return ToolOutput::error(e),
        };
        cx.workspace.mark_read(&path);
        let text = String::from_utf8_lossy(&bytes);
        let start = a.offset.unwrap_or(1).max(1);
        let limit = a.limit.unwrap_or(2000);
        let mut out = String::new();
        let mut total = 0;
        for (i, line) in text.lines().enumerate() {
            total = i + 1;
            if total >= start && total < start + limit {
                out.push_str(&format!("{total:>6}\t{line}\n"));
            }
        }
        if total >= start + limit {
            out.push_str(&format!(
                "[{} more line(s); read on with offset {}]\n",
                total + 1 - start - limit,
                start + limit
            ));
        }
        if out.is_empty() {
            out = if total == 0 {
                "(empty file)".into()
            } else {
                format!("(the file has {total} line(s); offset {start} is past its end)")
            };
        }
        ToolOutput::ok(out)
    }
}

/// `ls {path}`: a folder's entries, folders with a trailing `/`.
pub struct Ls;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
// The model has always been told `path` is required; a call without it still lists
// the root.
#[schemars(extend("required" = ["path"]))]
pub struct LsArgs {
    #[serde(default)]
    path: Option<String>,
}

#[async_trait]
impl Native for Ls {
    const SPEC: Spec = Spec {
        name: "ls",
        description: "List a folder in the workspace (folders end with /).",
        read_only: true,
        kind: ToolKind::Search,
    };
    type Args = LsArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("ls {}", field(input, "path"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let shown = a.path.unwrap_or_else(|| ".".into());
        let path = match cx.workspace.resolve(&shown) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let mut dir = match tokio::fs::read_dir(&path).await {
            Ok(d) => d,
            Err(e) => return ToolOutput::error(format!("cannot list {shown}: {e}")),
        };
        let mut names = Vec::new();
        while let Ok(Some(entry)) = dir.next_entry().await {
            let mut name = entry.file_name().to_string_lossy().into_owned();
            if entry.file_type().await.is_ok_and(|t| t.is_dir()) {
                name.push('/');
            }
            names.push(name);
        }
        names.sort();
        if names.is_empty() {
            return ToolOutput::ok("(empty folder)");
        }
        ToolOutput::ok(names.join("\n"))
    }
}

/// `write {path, content}`: a whole file (parents made).
pub struct Write;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct WriteArgs {
    path: String,
    content: String,
}

#[async_trait]
impl Native for Write {
    const SPEC: Spec = Spec {
        name: "write",
        description: "Write a whole file in the workspace (made if missing, replaced if there). Read an existing file first.",
        read_only: false,
        kind: ToolKind::Write,
    };
    type Args = WriteArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("write {}", field(input, "path"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let path = match cx.workspace.resolve(&a.path) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        cx.workspace.before_write(&path);
        match cx.workspace.write_file(&a.path, a.content.as_bytes()) {
            Ok(()) => ToolOutput::ok(format!(
                "wrote {} ({} bytes)",
                cx.workspace.shown(&path),
                a.content.len()
            )),
            Err(e) => ToolOutput::error(e),
        }
    }
}

/// `edit {path, old_text, new_text}`: one exact replacement.
pub struct Edit;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct EditArgs {
    path: String,
    old_text: String,
    new_text: String,
}

#[async_trait]
impl Native for Edit {
    const SPEC: Spec = Spec {
        name: "edit",
        description: "Replace old_text with new_text in a file. old_text must appear exactly once; include enough context to make it unique. Read the file first.",
        read_only: false,
        kind: ToolKind::Edit,
    };
    type Args = EditArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("edit {}", field(input, "path"))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        if a.old_text.is_empty() {
            return ToolOutput::error("old_text is empty; use write to make a new file");
        }
        let path = match cx.workspace.resolve(&a.path) {
            Ok(p) => p,
            Err(e) => return ToolOutput::error(e),
        };
        let text = match cx.workspace.read_file(&a.path).map(String::from_utf8) {
            Ok(Ok(t)) => t,
            Ok(Err(_)) => return ToolOutput::error(format!("{} is not UTF-8 text", a.path)),
            Err(e) => return ToolOutput::error(e),
        };
        let count = text.matches(&a.old_text).count();
        if count != 1 {
            return ToolOutput::error(if count == 0 {
                format!("old_text was not found in {}", a.path)
            } else {
                format!(
                    "old_text appears {count} times in {}; give more context so it matches once",
                    a.path
                )
            });
        }
        cx.workspace.before_write(&path);
        let updated = text.replacen(&a.old_text, &a.new_text, 1);
        match cx.workspace.write_file(&a.path, updated.as_bytes()) {
            Ok(()) => ToolOutput::ok(format!("edited {}", cx.workspace.shown(&path))),
            Err(e) => ToolOutput::error(e),
        }
    }
}
