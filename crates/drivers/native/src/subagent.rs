//! The `task` tool: a child loop with the pack's read-only tools, shown as a subagent
//! (its tool calls carry the task call's id as their parent), whose final answer is the
//! task call's result. Its messages stay out of the session; only the answer returns.

use std::future::Future;
use std::pin::Pin;

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::{DriverEvent, SubAgent, ToolKind, ToolStatus};

use crate::conversation::Message;
use crate::tools::{field, Native, Spec, ToolCx, ToolOutput};
use crate::turn::Turn;

/// A subagent's step limit.
const CHILD_STEPS: usize = 25;

/// `task {description, prompt}`.
pub struct Task;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct TaskArgs {
    #[schemars(description = "3-5 words")]
    description: String,
    prompt: String,
}

#[async_trait]
impl Native for Task {
    const SPEC: Spec = Spec {
        name: "task",
        description: "Hand a self-contained research question to a subagent that can only look (read-only tools). Give it a short description and a complete prompt; its final answer comes back as the result.",
        read_only: true,
        kind: ToolKind::Task,
    };
    type Args = TaskArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("task {}", field(input, "description"))
    }
    async fn call(&self, _: Self::Args, _cx: &ToolCx<'_>) -> ToolOutput {
        ToolOutput::error("task runs only inside the loop")
    }
}

/// Runs a `task` call's child loop.
pub(crate) fn run<'a>(
    turn: &'a Turn<'_>,
    id: &'a str,
    input: &'a Value,
) -> Pin<Box<dyn Future<Output = ToolOutput> + Send + 'a>> {
    Box::pin(async move {
        let a = match Task::parse(input) {
            Ok(a) => a,
            Err(e) => return e,
        };
        let parent = turn.setup();
        let mut setup = parent.clone();
        setup.parent = Some(id.to_string());
        setup.max_steps = CHILD_STEPS.min(parent.max_steps);
        setup.tools = parent
            .tools
            .iter()
            .filter(|t| t.read_only() && t.kind() != ToolKind::Task && t.name() != "ask_user")
            .cloned()
            .collect();
        setup.system = format!(
            "{}\n\nYou are a subagent: you may only look, not change anything. Answer the task completely in your final reply; it is all the caller sees.",
            parent.system
        );
        let ctx = turn.ctx();
        let mut agent = SubAgent {
            id: id.into(),
            name: "task".into(),
            summary: a.description.clone(),
            status: ToolStatus::Running,
            result: None,
        };
        ctx.emit(DriverEvent::Subagent {
            agent: agent.clone(),
        });
        let mut messages = vec![Message::user(a.prompt)];
        let result =
            crate::turn::run(&setup, ctx, turn.workspace(), turn.flags(), &mut messages).await;
        let text = result.text.clone().unwrap_or_default();
        let mut out = if result.ok {
            ToolOutput::ok(if text.is_empty() {
                "(the subagent said nothing)".into()
            } else {
                text
            })
        } else {
            ToolOutput::error(format!(
                "the subagent failed: {}",
                result.error.unwrap_or_else(|| "stopped".into())
            ))
        };
        agent.status = if out.is_error {
            ToolStatus::Failed
        } else {
            ToolStatus::Done
        };
        // Capped here as well as by the loop (to no further effect): the answer is also
        // the subagent's result in the snapshot.
        out.content = turn.chain().output(out.content);
        agent.result = Some(out.content.clone());
        ctx.emit(DriverEvent::Subagent { agent });
        out
    })
}
