//! Tools: what a pack offers the model. Each knows its name, schema, whether it
//! mutates, its normalized kind, a one-line summary, and how to run; the loop runs
//! every call through the guard chain first ([`crate::guard`]).

pub mod bash;
pub mod builtin;
pub mod fs;
pub mod git;
pub mod search;
pub mod workspace;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use serde::de::DeserializeOwned;
use serde_json::Value;
use tokio_util::sync::CancellationToken;
use weft_protocol::ToolKind;

pub use workspace::Workspace;

/// What a tool call gave back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ToolOutput {
    /// The text the model sees.
    pub content: String,
    /// True when the call failed or was refused.
    pub is_error: bool,
}

impl ToolOutput {
    /// A success.
    pub fn ok(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: false,
        }
    }

    /// A failure, told to the model.
    pub fn error(content: impl Into<String>) -> Self {
        Self {
            content: content.into(),
            is_error: true,
        }
    }
}

/// What a running tool may use.
pub struct ToolCx<'a> {
    /// The session's workspace (root, files read, undo log).
    pub workspace: &'a Workspace,
    /// The turn's stop signal.
    pub cancel: &'a CancellationToken,
    /// The environment for processes the tool starts.
    pub env: &'a [(String, String)],
    /// The turn (to show a plan, ask the user, start a subagent).
    pub ctx: &'a weft_kernel::DriverContext,
}

impl ToolCx<'_> {
    /// The workspace root.
    pub fn root(&self) -> &Path {
        self.workspace.root()
    }
}

/// One tool.
#[async_trait]
pub trait Tool: Send + Sync {
    /// Its name, as the model calls it.
    fn name(&self) -> &str;
    /// What it does, for the model.
    fn description(&self) -> &str;
    /// JSON Schema of its arguments.
    fn schema(&self) -> Value;
    /// True when it changes nothing (may run in parallel with other read-only calls).
    fn read_only(&self) -> bool;
    /// Its normalized kind for the snapshot.
    fn kind(&self) -> ToolKind;
    /// One line saying what a call does.
    fn summary(&self, input: &Value) -> String {
        let _ = input;
        self.name().to_string()
    }
    /// Runs one call.
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput;
}

/// A shared tool.
pub type ToolRef = Arc<dyn Tool>;

/// `input` as the tool's argument type, or the error the model is told.
pub fn args<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, ToolOutput> {
    if let Some(raw) = input.get("_raw").and_then(Value::as_str) {
        return Err(ToolOutput::error(format!(
            "the arguments of {tool} are not a JSON object: {}",
            raw.chars().take(200).collect::<String>()
        )));
    }
    serde_json::from_value(input.clone())
        .map_err(|e| ToolOutput::error(format!("bad arguments for {tool}: {e}")))
}

/// A string field of `input`, for summaries.
pub fn field<'a>(input: &'a Value, key: &str) -> &'a str {
    input.get(key).and_then(Value::as_str).unwrap_or_default()
}

/// The first line of `s`, at most `max` characters.
pub fn first_line(s: &str, max: usize) -> String {
    let line = s.lines().next().unwrap_or_default().trim();
    if line.chars().count() > max {
        format!("{}…", line.chars().take(max).collect::<String>())
    } else {
        line.to_string()
    }
}

/// The most a tool result may hold before it is cut (the model is told).
pub const OUTPUT_CAP: usize = 30_000;

/// `content` cut to `cap` bytes (at a character boundary) with a note saying so.
pub fn cap_output(content: String, cap: usize) -> String {
    if content.len() <= cap {
        return content;
    }
    let total = content.len();
    let mut end = cap;
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = content;
    cut.truncate(end);
    cut.push_str(&format!(
        "\n[output capped: showing the first {end} of {total} bytes]"
    ));
    cut
}
