//! The loop's own tools, domain-free and offered under every pack: `update_plan`
//! (the snapshot's plan) and `ask_user` (a question answered through `interact`).

use async_trait::async_trait;
use serde::Deserialize;
use serde_json::{json, Value};
use weft_protocol::{
    Choice, DriverEvent, InteractAction, Interaction, InteractionKind, Plan, PlanStep, Question,
    QuestionType, StepStatus, ToolKind,
};

use super::{args, field, first_line, Tool, ToolCx, ToolOutput};

/// `update_plan {steps: [{text, status}], explanation?}`.
pub struct UpdatePlan;

#[derive(Deserialize)]
struct PlanArgs {
    steps: Vec<StepArg>,
    explanation: Option<String>,
}

#[derive(Deserialize)]
struct StepArg {
    text: String,
    #[serde(default)]
    status: Option<String>,
}

#[async_trait]
impl Tool for UpdatePlan {
    fn name(&self) -> &str {
        "update_plan"
    }
    fn description(&self) -> &str {
        "Show the user your plan as a list of steps, each pending, in_progress or completed. Send the whole list each time."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "explanation": {"type": "string"},
            "steps": {"type": "array", "items": {"type": "object", "properties": {
                "text": {"type": "string"},
                "status": {"type": "string", "enum": ["pending", "in_progress", "completed"]}},
                "required": ["text"]}}},
            "required": ["steps"]})
    }
    fn read_only(&self) -> bool {
        true
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Plan
    }
    fn summary(&self, _input: &Value) -> String {
        "update_plan".into()
    }
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
        let a: PlanArgs = match args("update_plan", input) {
            Ok(a) => a,
            Err(e) => return e,
        };
        let steps = a
            .steps
            .into_iter()
            .map(|s| PlanStep {
                text: s.text,
                status: match s.status.as_deref() {
                    Some("completed") => StepStatus::Completed,
                    Some("in_progress") => StepStatus::InProgress,
                    _ => StepStatus::Pending,
                },
            })
            .collect::<Vec<_>>();
        let n = steps.len();
        cx.ctx.emit(DriverEvent::Plan {
            plan: Plan {
                explanation: a.explanation,
                steps,
            },
        });
        ToolOutput::ok(format!("the plan of {n} step(s) is shown to the user"))
    }
}

/// `ask_user {question, choices?}`.
pub struct AskUser;

#[derive(Deserialize)]
struct AskArgs {
    question: String,
    #[serde(default)]
    choices: Vec<String>,
}

#[async_trait]
impl Tool for AskUser {
    fn name(&self) -> &str {
        "ask_user"
    }
    fn description(&self) -> &str {
        "Ask the user a question when you cannot go on without their answer; offer choices when there are a few clear options."
    }
    fn schema(&self) -> Value {
        json!({"type": "object", "properties": {
            "question": {"type": "string"},
            "choices": {"type": "array", "items": {"type": "string"}}},
            "required": ["question"]})
    }
    fn read_only(&self) -> bool {
        true
    }
    fn kind(&self) -> ToolKind {
        ToolKind::Other
    }
    fn summary(&self, input: &Value) -> String {
        format!("ask_user {}", first_line(field(input, "question"), 80))
    }
    async fn run(&self, input: &Value, cx: &ToolCx<'_>) -> ToolOutput {
        let a: AskArgs = match args("ask_user", input) {
            Ok(a) => a,
            Err(e) => return e,
        };
        let answer = cx
            .ctx
            .ask_user(Interaction {
                verdict: None,
                prompt_id: String::new(),
                kind: InteractionKind::UserInput,
                title: first_line(&a.question, 120),
                detail: None,
                tool_name: None,
                tool_input: None,
                questions: vec![Question {
                    id: "answer".into(),
                    text: a.question.clone(),
                    kind: if a.choices.is_empty() {
                        QuestionType::Text
                    } else {
                        QuestionType::Select
                    },
                    choices: a
                        .choices
                        .iter()
                        .map(|c| Choice {
                            label: c.clone(),
                            value: c.clone(),
                        })
                        .collect(),
                }],
            })
            .await;
        let value = answer.picked();
        match (answer.action, value) {
            (InteractAction::Select | InteractAction::Text, Some(v)) => {
                ToolOutput::ok(format!("The user answered: {v}"))
            }
            (InteractAction::Skip, _) => {
                ToolOutput::ok("The user chose not to answer; go on without.")
            }
            _ => ToolOutput::error("the question was cancelled"),
        }
    }
}
