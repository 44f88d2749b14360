//! `can_use_tool` control requests as interactions, and answers as control responses.
//!
//! Three shapes arrive the same way (`--permission-prompt-tool stdio`):
//! - a tool wanting permission: a permission with allow / allow for the session / deny;
//! - `AskUserQuestion`: one select question per question (several picks when it is
//!   `multiSelect`, free text always: Claude's own dialog offers "Other"); the answer
//!   goes back as `allow` with the input plus `answers: {question text: answer}`, the
//!   picks and the text joined with ", " as Claude's own dialog joins them;
//! - `ExitPlanMode`: a confirmation showing the plan; approve is `allow`.
//!
//! A cancelled or skipped interaction is denied, with a message saying so: the CLI
//! always gets an answer, so it never waits on a request nobody will answer.

use serde_json::{json, Value};
use weft_protocol::{
    permission, Choice, InteractAction, Interaction, InteractionKind, InteractionResponse,
    Question, QuestionType,
};

use crate::tools;
use crate::wire::CanUseTool;

fn choice(label: &str, value: &str) -> Choice {
    Choice {
        label: label.into(),
        value: value.into(),
    }
}

/// The interaction for a `can_use_tool` request.
pub fn interaction(request_id: &str, req: &CanUseTool) -> Interaction {
    match req.tool_name.as_str() {
        "AskUserQuestion" => ask_user_question(request_id, req),
        "ExitPlanMode" => Interaction {
            verdict: None,
            prompt_id: request_id.into(),
            kind: InteractionKind::Confirmation,
            title: "Approve the plan and leave plan mode?".into(),
            detail: req
                .input
                .get("plan")
                .and_then(Value::as_str)
                .map(String::from),
            tool_name: Some(req.tool_name.clone()),
            tool_input: Some(req.input.clone()),
            questions: vec![Question {
                id: "confirm".into(),
                text: "Approve the plan?".into(),
                kind: QuestionType::Select,
                choices: vec![
                    choice("Approve", permission::ALLOW),
                    choice("Keep planning", permission::DENY),
                ],
                multiple: false,
                free_text: false,
            }],
        },
        _ => {
            let summary = tools::summary(&req.tool_name, &req.input);
            let mut detail = req.description.clone();
            if let Some(p) = &req.blocked_path {
                let line = format!("outside the allowed folders: {p}");
                detail = Some(match detail {
                    Some(d) => format!("{d}\n{line}"),
                    None => line,
                });
            }
            Interaction {
                verdict: None,
                prompt_id: request_id.into(),
                kind: InteractionKind::Permission,
                title: format!("Allow {summary}?"),
                detail,
                tool_name: Some(req.tool_name.clone()),
                tool_input: Some(req.input.clone()),
                questions: vec![Question {
                    id: "permission".into(),
                    text: format!("Allow {}?", req.tool_name),
                    kind: QuestionType::Select,
                    choices: vec![
                        choice("Allow", permission::ALLOW),
                        choice("Allow for this session", permission::ALLOW_SESSION),
                        choice("Deny", permission::DENY),
                    ],
                    multiple: false,
                    free_text: false,
                }],
            }
        }
    }
}

fn ask_user_question(request_id: &str, req: &CanUseTool) -> Interaction {
    let questions: Vec<Question> = req
        .input
        .get("questions")
        .and_then(Value::as_array)
        .map(|qs| {
            qs.iter()
                .enumerate()
                .map(|(i, q)| {
                    let choices: Vec<Choice> = q
                        .get("options")
                        .and_then(Value::as_array)
                        .map(|opts| {
                            opts.iter()
                                .filter_map(|o| o.get("label").and_then(Value::as_str))
                                .map(|l| choice(l, l))
                                .collect()
                        })
                        .unwrap_or_default();
                    Question {
                        id: format!("q{i}"),
                        text: q
                            .get("question")
                            .and_then(Value::as_str)
                            .unwrap_or_default()
                            .to_string(),
                        kind: if choices.is_empty() {
                            QuestionType::Text
                        } else {
                            QuestionType::Select
                        },
                        multiple: !choices.is_empty()
                            && q.get("multiSelect").and_then(Value::as_bool) == Some(true),
                        // Claude's own dialog always offers "Other" with a text box.
                        free_text: true,
                        choices,
                    }
                })
                .collect()
        })
        .unwrap_or_default();
    let title = match questions.as_slice() {
        [one] => one.text.clone(),
        _ => format!("Claude asks {} questions", questions.len()),
    };
    Interaction {
        verdict: None,
        prompt_id: request_id.into(),
        kind: InteractionKind::UserInput,
        title,
        detail: None,
        tool_name: Some(req.tool_name.clone()),
        tool_input: Some(req.input.clone()),
        questions,
    }
}

/// The `response` body of the control_response answering `req` with `answer`, and a
/// one-line note of the decision for the turn's notices (None for a plain allow).
pub fn response(
    interaction: &Interaction,
    req: &CanUseTool,
    answer: &InteractionResponse,
) -> (Value, Option<String>) {
    let deny = |message: &str| json!({"behavior": "deny", "message": message});
    match answer.action {
        InteractAction::Cancel => {
            return (
                deny("The user cancelled this request."),
                Some(format!("{} cancelled", interaction.title)),
            )
        }
        InteractAction::Skip => {
            return (
                deny("The user declined to answer."),
                Some(format!("{} skipped", interaction.title)),
            )
        }
        _ => {}
    }
    if req.tool_name == "AskUserQuestion" {
        let mut input = req.input.clone();
        let mut answers = serde_json::Map::new();
        for q in &interaction.questions {
            // Claude's own dialog sends several picks, and "Other"'s text, as one
            // comma-separated answer.
            let given = answer.given(&q.id);
            if !given.is_empty() {
                answers.insert(q.text.clone(), Value::String(given.all().join(", ")));
            }
        }
        if let Some(obj) = input.as_object_mut() {
            obj.insert("answers".into(), Value::Object(answers));
        }
        return (json!({"behavior": "allow", "updatedInput": input}), None);
    }
    let value = answer
        .answer_for(
            interaction
                .questions
                .first()
                .map(|q| q.id.as_str())
                .unwrap_or(""),
        )
        .unwrap_or(permission::DENY);
    match value {
        permission::ALLOW => (
            json!({"behavior": "allow", "updatedInput": req.input}),
            None,
        ),
        permission::ALLOW_SESSION => {
            let mut body = json!({"behavior": "allow", "updatedInput": req.input});
            if let Some(s) = &req.permission_suggestions {
                body["updatedPermissions"] = s.clone();
            }
            (body, None)
        }
        _ => (
            // A Weft rule's refusal says which rule, so the agent knows why.
            deny(
                answer
                    .answers
                    .get("reason")
                    .map_or("The user denied this tool call.", String::as_str),
            ),
            Some(format!(
                "denied: {}",
                tools::summary(&req.tool_name, &req.input)
            )),
        ),
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn req(tool: &str, input: Value) -> CanUseTool {
        CanUseTool {
            tool_name: tool.into(),
            input,
            ..Default::default()
        }
    }

    #[test]
    fn permission_allow_session_and_deny() {
        let mut r = req(
            "Bash",
            json!({"command": "touch x", "description": "touch a file"}),
        );
        r.permission_suggestions = Some(json!([{"type": "addRules"}]));
        let i = interaction("r1", &r);
        assert_eq!(i.kind, InteractionKind::Permission);
        assert_eq!(i.title, "Allow Bash touch a file?");
        let (body, note) = response(&i, &r, &InteractionResponse::select(permission::ALLOW));
        assert_eq!(body["behavior"], "allow");
        assert!(note.is_none());
        let (body, _) = response(
            &i,
            &r,
            &InteractionResponse::select(permission::ALLOW_SESSION),
        );
        assert_eq!(body["updatedPermissions"][0]["type"], "addRules");
        let (body, note) = response(&i, &r, &InteractionResponse::select(permission::DENY));
        assert_eq!(body["behavior"], "deny");
        assert!(note.unwrap().starts_with("denied"));
        let (body, note) = response(&i, &r, &InteractionResponse::cancel());
        assert_eq!(body["behavior"], "deny");
        assert!(note.unwrap().ends_with("cancelled"));
    }

    #[test]
    fn ask_user_question_answers_by_question_text() {
        let r = req(
            "AskUserQuestion",
            json!({"questions": [{"question": "Which color?", "header": "Color",
                "options": [{"label": "Red"}, {"label": "Blue"}], "multiSelect": false}]}),
        );
        let i = interaction("r2", &r);
        assert_eq!(i.kind, InteractionKind::UserInput);
        assert_eq!(i.questions[0].kind, QuestionType::Select);
        assert_eq!(i.questions[0].choices.len(), 2);
        let (body, _) = response(&i, &r, &InteractionResponse::select("Blue"));
        assert_eq!(body["updatedInput"]["answers"]["Which color?"], "Blue");
        assert_eq!(body["updatedInput"]["questions"][0]["header"], "Color");
    }

    #[test]
    fn exit_plan_mode_is_a_confirmation() {
        let r = req("ExitPlanMode", json!({"plan": "1. A"}));
        let i = interaction("r3", &r);
        assert_eq!(i.kind, InteractionKind::Confirmation);
        assert_eq!(i.detail.as_deref(), Some("1. A"));
        let (body, _) = response(&i, &r, &InteractionResponse::select(permission::ALLOW));
        assert_eq!(body["behavior"], "allow");
    }
}
