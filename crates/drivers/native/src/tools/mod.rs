//! Tools: what a pack offers the model. Each knows its name, schema, whether it
//! mutates, its normalized kind, a one-line summary, and how to run; the loop runs
//! every call through the guard chain first ([`crate::guard`]).

pub mod bash;
pub mod beneath;
pub mod builtin;
pub mod fs;
pub mod git;
pub mod search;
pub(crate) mod warm;
pub mod workspace;

use std::path::Path;
use std::sync::Arc;

use async_trait::async_trait;
use schemars::{JsonSchema, Schema, SchemaGenerator};
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
    /// The running call's row, for output as it comes.
    pub progress: &'a Progress,
}

/// A running call's row in the snapshot, for a tool whose output comes over time (a
/// shell command): the output so far replaces the row's result, at most every
/// [`Progress::EVERY`], so a chatty command does not flood the clients.
pub struct Progress {
    ctx: weft_kernel::DriverContext,
    row: parking_lot::Mutex<(weft_protocol::ToolCall, Option<std::time::Instant>)>,
}

impl Progress {
    /// How often the row is updated at most.
    pub const EVERY: std::time::Duration = std::time::Duration::from_millis(250);

    /// The progress of `row` (a running call) in the turn of `ctx`.
    pub fn new(ctx: weft_kernel::DriverContext, row: weft_protocol::ToolCall) -> Self {
        Self {
            ctx,
            row: parking_lot::Mutex::new((row, None)),
        }
    }

    /// The call's output so far (`text()` is asked only when the row is due, so a
    /// caller building it from a buffer pays for that at most every `EVERY`).
    pub fn show(&self, text: impl FnOnce() -> String) {
        let mut row = self.row.lock();
        let now = std::time::Instant::now();
        if row.1.is_some_and(|at| now.duration_since(at) < Self::EVERY) {
            return;
        }
        row.1 = Some(now);
        row.0.result = Some(text());
        self.ctx.emit(weft_protocol::DriverEvent::Tool {
            call: row.0.clone(),
        });
    }
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

/// What the model and the loop are told about a tool of this crate.
pub struct Spec {
    /// Its name, as the model calls it.
    pub name: &'static str,
    /// What it does, for the model.
    pub description: &'static str,
    /// True when it changes nothing.
    pub read_only: bool,
    /// Its normalized kind for the snapshot.
    pub kind: ToolKind,
}

/// A tool written in this crate. Its schema is derived from `Args`, the type its
/// calls parse into, so what the model is shown cannot drift from what runs; tools
/// with a name known only at run time (MCP, declarative packs) implement [`Tool`].
#[async_trait]
pub trait Native: Send + Sync {
    /// Name, description, read-only and kind.
    const SPEC: Spec;
    /// The arguments, whose JSON Schema the model sees.
    type Args: ToolArgs;
    /// One line saying what a call does.
    fn summarize(&self, input: &Value) -> String {
        let _ = input;
        Self::SPEC.name.to_string()
    }
    /// Runs one call whose arguments parsed.
    async fn call(&self, args: Self::Args, cx: &ToolCx<'_>) -> ToolOutput;
    /// `input` as `Args`, or the error the model is told.
    fn parse(input: &Value) -> Result<Self::Args, ToolOutput>
    where
        Self: Sized,
    {
        Self::Args::parse(Self::SPEC.name, input)
    }
}

/// What a tool's calls parse into: its JSON Schema is what the model sees.
pub trait ToolArgs: JsonSchema + Sized + Send {
    /// `input` as these arguments, or the error the model is told.
    fn parse(tool: &str, input: &Value) -> Result<Self, ToolOutput>;
}

impl<T: JsonSchema + DeserializeOwned + Send> ToolArgs for T {
    fn parse(tool: &str, input: &Value) -> Result<Self, ToolOutput> {
        args(tool, input)
    }
}

#[async_trait]
impl<T: Native> Tool for T {
    fn name(&self) -> &str {
        T::SPEC.name
    }
    fn description(&self) -> &str {
        T::SPEC.description
    }
    fn schema(&self) -> Value {
        schema_of::<T::Args>()
    }
    fn read_only(&self) -> bool {
        T::SPEC.read_only
    }
    fn kind(&self) -> ToolKind {
        T::SPEC.kind
    }
    fn summary(&self, input: &Value) -> String {
        self.summarize(input)
    }
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
        match T::parse(input) {
            Ok(args) => self.call(args, cx).await,
            Err(refusal) => refusal,
        }
    }
}

/// The arguments of a tool that takes none.
#[derive(JsonSchema)]
pub struct NoArgs {}

/// Whatever a call passes is ignored: such a tool has nothing in its input to refuse.
impl ToolArgs for NoArgs {
    fn parse(_tool: &str, _input: &Value) -> Result<Self, ToolOutput> {
        Ok(NoArgs {})
    }
}

/// `T`'s JSON Schema in the plain shape tools were always shown: no `$schema`,
/// title, formats or defaults, and an optional field typed as its inner type (it is
/// left out of `required` instead), since model APIs differ in what else they take.
pub fn schema_of<T: JsonSchema>() -> Value {
    let mut settings = schemars::generate::SchemaSettings::draft2020_12();
    settings.meta_schema = None;
    settings.inline_subschemas = true;
    let generator: SchemaGenerator = settings
        .with_transform(schemars::transform::RecursiveTransform(plain))
        .into_generator();
    let mut value = generator.into_root_schema_for::<T>().to_value();
    if let Some(root) = value.as_object_mut() {
        root.remove("description");
        root.entry("properties")
            .or_insert_with(|| Value::Object(Default::default()));
    }
    value
}

fn plain(schema: &mut Schema) {
    let Some(obj) = schema.as_object_mut() else {
        return;
    };
    for key in ["title", "format", "default"] {
        obj.remove(key);
    }
    if let Some(Value::Array(types)) = obj.get("type") {
        let named: Vec<&Value> = types.iter().filter(|t| *t != "null").collect();
        if let [only] = named[..] {
            let only = only.clone();
            obj.insert("type".into(), only);
        }
    }
}

/// The error for arguments no call may run with: not a JSON object, the parsers'
/// marker for text that did not parse, or an object carrying the marker's key. The
/// key is refused whatever its value, because the loop cannot tell a model's own
/// `_raw` from the marker by anything but its shape, and a refusal here must never
/// become a way around the guard chain.
pub fn unusable_args(tool: &str, input: &Value) -> Option<ToolOutput> {
    if let Some(raw) = crate::conversation::raw_arguments(input) {
        return Some(ToolOutput::error(format!(
            "the arguments of {tool} are not a JSON object: {}",
            raw.chars().take(200).collect::<String>()
        )));
    }
    if !input.is_object() {
        return Some(ToolOutput::error(format!(
            "the arguments of {tool} are not a JSON object"
        )));
    }
    let raw = crate::conversation::RAW_KEY;
    input.get(raw).map(|_| {
        ToolOutput::error(format!(
            "the arguments of {tool} are not a JSON object Weft runs: the key `{raw}` is \
             reserved (it marks arguments that did not parse); call {tool} again without it"
        ))
    })
}

/// `input` as the tool's argument type, or the error the model is told.
pub fn args<T: DeserializeOwned>(tool: &str, input: &Value) -> Result<T, ToolOutput> {
    if let Some(refusal) = unusable_args(tool, input) {
        return Err(refusal);
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

/// `content` cut (at a character boundary) with a note saying so, to at most `cap`
/// bytes note included, so that capping it again changes nothing: a result may pass
/// the cap on its way to the snapshot and again on its way to the model.
pub fn cap_output(content: String, cap: usize) -> String {
    if content.len() <= cap {
        return content;
    }
    let total = content.len();
    let note = |end: usize| format!("\n[output capped: showing the first {end} of {total} bytes]");
    // The note for a shorter cut is never longer, so this leaves room for it.
    let mut end = cap.saturating_sub(note(cap).len());
    while !content.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = content;
    cut.truncate(end);
    cut.push_str(&note(end));
    cut
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_capped_output_fits_its_cap_note_included_and_capping_again_keeps_it() {
        let text = "é".repeat(50_000);
        let capped = cap_output(text, OUTPUT_CAP);
        assert!(capped.len() <= OUTPUT_CAP, "{}", capped.len());
        assert!(
            capped.ends_with("of 100000 bytes]"),
            "{}",
            &capped[capped.len() - 80..]
        );
        assert!(capped.starts_with("éé"));
        assert_eq!(cap_output(capped.clone(), OUTPUT_CAP), capped);
        assert_eq!(cap_output("short".into(), OUTPUT_CAP), "short");
    }
}
