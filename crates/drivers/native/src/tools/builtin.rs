//! The loop's own tools, domain-free and offered under every pack: `update_plan`
//! (the snapshot's plan) and `ask_user` (a question answered through `interact`).

use async_trait::async_trait;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use weft_protocol::{
    Choice, DriverEvent, InteractAction, Interaction, InteractionKind, Plan, PlanStep, Question,
    QuestionType, StepStatus, ToolKind,
};

use super::{field, first_line, Native, Spec, ToolCx, ToolOutput};

/// `update_plan {steps: [{text, status}], explanation?}`.
pub struct UpdatePlan;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct PlanArgs {
    steps: Vec<StepArg>,
    explanation: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct StepArg {
    text: String,
    #[serde(default)]
    #[schemars(extend("enum" = ["pending", "in_progress", "completed"]))]
    status: Option<String>,
}

#[async_trait]
impl Native for UpdatePlan {
    const SPEC: Spec = Spec {
        name: "update_plan",
        description: "Show the user your plan as a list of steps, each pending, in_progress or completed. Send the whole list each time.",
        read_only: true,
        kind: ToolKind::Plan,
    };
    type Args = PlanArgs;
    fn summarize(&self, _input: &Value) -> String {
        "update_plan".into()
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
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

/// `ask_user {question, choices?, multiple?, other?}`.
pub struct AskUser;

/// The arguments of a call (their JSON Schema is what the model is shown).
#[derive(Deserialize, JsonSchema)]
pub struct AskArgs {
    question: String,
    #[serde(default)]
    choices: Vec<String>,
    #[serde(default)]
    #[schemars(description = "the user may pick several of the choices")]
    multiple: bool,
    #[serde(default)]
    #[schemars(description = "the user may also answer in their own words")]
    other: bool,
}

#[async_trait]
impl Native for AskUser {
    const SPEC: Spec = Spec {
        name: "ask_user",
        description: "Ask the user a question when you cannot go on without their answer; offer choices when there are a few clear options (several may be picked with `multiple`, and `other` lets the user also answer in their own words).",
        read_only: true,
        kind: ToolKind::Other,
    };
    type Args = AskArgs;
    fn summarize(&self, input: &Value) -> String {
        format!("ask_user {}", first_line(field(input, "question"), 80))
    }
    async fn call(&self, a: Self::Args, cx: &ToolCx<'_>) -> ToolOutput {
        let choices = !a.choices.is_empty();
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
                    kind: if choices {
                        QuestionType::Select
                    } else {
                        QuestionType::Text
                    },
                    choices: a
                        .choices
                        .iter()
                        .map(|c| Choice {
                            label: c.clone(),
                            value: c.clone(),
                        })
                        .collect(),
                    multiple: choices && a.multiple,
                    free_text: choices && a.other,
                }],
            })
            .await;
        match answer.action {
            InteractAction::Select | InteractAction::Text => {}
            InteractAction::Skip => {
                return ToolOutput::ok("The user chose not to answer; go on without.")
            }
            _ => return ToolOutput::error("the question was cancelled"),
        }
        let given = answer.given("answer");
        let picked = given
            .choices
            .iter()
            .map(|c| format!("\"{c}\""))
            .collect::<Vec<_>>();
        let said = given.text.as_deref().map(|t| format!("\"{t}\""));
        match (picked.is_empty(), said) {
            (true, None) => ToolOutput::ok("The user gave no answer; go on without."),
            (true, Some(t)) if choices => {
                ToolOutput::ok(format!("The user answered in their own words: {t}"))
            }
            (true, Some(t)) => ToolOutput::ok(format!("The user answered: {t}")),
            (false, None) if picked.len() == 1 && !a.multiple => {
                ToolOutput::ok(format!("The user answered: {}", given.choices[0]))
            }
            (false, None) => ToolOutput::ok(format!("The user picked: {}", picked.join(", "))),
            (false, Some(t)) => ToolOutput::ok(format!(
                "The user picked: {}; and added in their own words: {t}",
                picked.join(", ")
            )),
        }
    }
}
