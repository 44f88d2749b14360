//! `session/request_permission` ↔ permission interactions.
//!
//! The interaction offers the agent's own options, under the agent's own labels. Each
//! choice's value is Weft's shared permission value where the option's kind maps to
//! one (`allow_once` → `allow`, `allow_always` → `allowSession`, `reject_once` →
//! `deny`), so every surface's Allow/Deny buttons work, and the agent's `optionId`
//! otherwise. An answer may name either; `cancel` (or a stopped turn) answers
//! `cancelled`, and `skip` picks the agent's reject option.
//!
//! A permission request whose call carries `rawInput.questions` (Qwen Code's
//! ask_user_question: the user "submits" the answers) becomes a question interaction
//! instead, one select question per question ("0", "1", … as the agent numbers them);
//! the reply picks the agent's allow option and carries `answers: {"0": label, …}`
//! beside `outcome` ([`reply`]), which is where Qwen Code reads them.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    RequestPermissionResponse, SelectedPermissionOutcome,
};
use serde_json::Value;
use weft_protocol::{
    permission, Choice, InteractAction, Interaction, InteractionKind, InteractionResponse,
    Question, QuestionType,
};

use crate::normalize::content_text;

fn canonical(kind: &PermissionOptionKind) -> Option<&'static str> {
    match kind {
        PermissionOptionKind::AllowOnce => Some(permission::ALLOW),
        PermissionOptionKind::AllowAlways => Some(permission::ALLOW_SESSION),
        PermissionOptionKind::RejectOnce => Some(permission::DENY),
        _ => None,
    }
}

/// The value each option is offered under, in the agent's order.
pub fn option_values(options: &[PermissionOption]) -> Vec<(String, &PermissionOption)> {
    let mut used = Vec::new();
    options
        .iter()
        .map(|o| {
            let value = canonical(&o.kind)
                .filter(|c| !used.contains(c))
                .map(|c| {
                    used.push(c);
                    c.to_string()
                })
                .unwrap_or_else(|| o.option_id.0.to_string());
            (value, o)
        })
        .collect()
}

/// The interaction for a permission request; `prompt_id` must be unique in the turn.
pub fn interaction(
    req: &RequestPermissionRequest,
    prompt_id: String,
    tool_name: &str,
) -> Interaction {
    let call = &req.tool_call;
    let title = call
        .fields
        .title
        .clone()
        .filter(|t| !t.is_empty())
        .unwrap_or_else(|| tool_name.to_string());
    let detail = call
        .fields
        .content
        .as_deref()
        .map(content_text)
        .filter(|t| !t.is_empty());
    let choices = option_values(&req.options)
        .into_iter()
        .map(|(value, o)| Choice {
            label: o.name.clone(),
            value,
        })
        .collect();
    Interaction {
        verdict: None,
        prompt_id,
        kind: InteractionKind::Permission,
        title: format!("Allow {tool_name}: {title}?"),
        detail,
        tool_name: Some(tool_name.to_string()),
        tool_input: call.fields.raw_input.clone(),
        questions: vec![Question {
            id: "decision".into(),
            text: title,
            kind: QuestionType::Select,
            choices,
            multiple: false,
            free_text: false,
        }],
    }
}

/// What the user's answer tells the agent, and whether it let the tool run.
pub fn outcome(
    req: &RequestPermissionRequest,
    answer: &InteractionResponse,
) -> (RequestPermissionOutcome, bool) {
    let values = option_values(&req.options);
    let pick = |kinds: &[PermissionOptionKind]| {
        kinds
            .iter()
            .find_map(|k| req.options.iter().find(|o| &o.kind == k))
    };
    let chosen = match answer.action {
        InteractAction::Cancel => None,
        InteractAction::Skip => pick(&[
            PermissionOptionKind::RejectOnce,
            PermissionOptionKind::RejectAlways,
        ]),
        InteractAction::Select | InteractAction::Text => {
            let v = answer.answer_for("decision").unwrap_or_default();
            values
                .iter()
                .find(|(value, o)| value == v || o.option_id.0.as_ref() == v)
                .map(|(_, o)| *o)
        }
    };
    match chosen {
        Some(o) => {
            let allowed = matches!(
                o.kind,
                PermissionOptionKind::AllowOnce | PermissionOptionKind::AllowAlways
            );
            (
                RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(
                    o.option_id.clone(),
                )),
                allowed,
            )
        }
        None => (RequestPermissionOutcome::Cancelled, false),
    }
}

/// The reply to a permission request: the schema's `{outcome}`, plus `answers` when
/// the request was a question.
pub fn reply(
    outcome: RequestPermissionOutcome,
    answers: Option<BTreeMap<String, String>>,
) -> Value {
    let mut v = serde_json::to_value(RequestPermissionResponse::new(outcome))
        .unwrap_or_else(|_| serde_json::json!({"outcome": {"outcome": "cancelled"}}));
    if let (Some(answers), Some(obj)) = (answers, v.as_object_mut()) {
        obj.insert("answers".into(), serde_json::json!(answers));
    }
    v
}

/// The questions a permission request asks, when its call carries them (Qwen Code).
fn asked_questions(req: &RequestPermissionRequest) -> Option<&Vec<Value>> {
    let qs = req.tool_call.fields.raw_input.as_ref()?["questions"].as_array()?;
    let all_questions = !qs.is_empty()
        && qs
            .iter()
            .all(|q| q["question"].is_string() && q["options"].is_array());
    all_questions.then_some(qs)
}

/// The question interaction for a permission request that asks questions.
pub fn question_interaction(
    req: &RequestPermissionRequest,
    prompt_id: String,
) -> Option<Interaction> {
    let qs = asked_questions(req)?;
    let questions = qs
        .iter()
        .enumerate()
        .map(|(i, q)| Question {
            id: i.to_string(),
            text: q["question"].as_str().unwrap_or_default().to_string(),
            kind: QuestionType::Select,
            choices: q["options"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|o| o["label"].as_str())
                .map(|l| Choice {
                    label: l.to_string(),
                    value: l.to_string(),
                })
                .collect(),
            multiple: false,
            free_text: false,
        })
        .collect();
    let title = qs
        .first()
        .and_then(|q| q["header"].as_str().or(q["question"].as_str()))
        .unwrap_or("A question")
        .to_string();
    Some(Interaction {
        verdict: None,
        prompt_id,
        kind: InteractionKind::UserInput,
        title,
        detail: None,
        tool_name: None,
        tool_input: req.tool_call.fields.raw_input.clone(),
        questions,
    })
}

/// The reply to a permission request and whether the tool may run: a question's
/// answers go with the agent's allow option (a cancel picks its reject option), a
/// plain permission as [`outcome`] says.
pub fn answer(req: &RequestPermissionRequest, answer: &InteractionResponse) -> (Value, bool) {
    let Some(qs) = asked_questions(req) else {
        let (outcome, allowed) = outcome(req, answer);
        return (reply(outcome, None), allowed);
    };
    let find = |kind: PermissionOptionKind| req.options.iter().find(|o| o.kind == kind);
    let selected = |o: &PermissionOption| {
        RequestPermissionOutcome::Selected(SelectedPermissionOutcome::new(o.option_id.clone()))
    };
    let answers: BTreeMap<String, String> = (0..qs.len())
        .filter_map(|i| {
            let id = i.to_string();
            let v = answer
                .answers
                .get(&id)
                .cloned()
                .or_else(|| (i == 0).then(|| answer.value.clone()).flatten())?;
            Some((id, v))
        })
        .collect();
    let submit = matches!(answer.action, InteractAction::Select | InteractAction::Text)
        && !answers.is_empty();
    match (submit, find(PermissionOptionKind::AllowOnce)) {
        (true, Some(allow)) => (reply(selected(allow), Some(answers)), true),
        _ => match find(PermissionOptionKind::RejectOnce) {
            Some(reject) => (reply(selected(reject), None), false),
            None => (reply(RequestPermissionOutcome::Cancelled, None), false),
        },
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;

    /// Qwen Code 0.24.4's ask_user_question, as its permission request carries it.
    fn qwen_question() -> RequestPermissionRequest {
        serde_json::from_value(json!({"sessionId": "s", "toolCall": {"toolCallId": "call_t4",
            "title": "Ask user 1 question", "kind": "think", "status": "pending",
            "rawInput": {"questions": [{"question": "Which color?", "header": "Color",
                "options": [{"label": "Red", "description": "r"}, {"label": "Blue", "description": "b"}],
                "multiSelect": false}]}},
            "options": [{"optionId": "proceed_once", "name": "Submit", "kind": "allow_once"},
                        {"optionId": "cancel", "name": "Cancel", "kind": "reject_once"}]}))
        .unwrap()
    }

    fn select(answers: &[(&str, &str)]) -> InteractionResponse {
        InteractionResponse {
            action: InteractAction::Select,
            value: None,
            answers: answers
                .iter()
                .map(|(k, v)| (k.to_string(), v.to_string()))
                .collect(),
            selected: Default::default(),
            texts: Default::default(),
        }
    }

    #[test]
    fn a_permission_carrying_questions_is_a_question_answered_beside_the_outcome() {
        let req = qwen_question();
        let i = question_interaction(&req, "ask-1".into()).unwrap();
        assert_eq!(i.kind, InteractionKind::UserInput);
        assert_eq!(i.questions[0].id, "0");
        assert_eq!(i.questions[0].choices[1].value, "Blue");
        let (v, allowed) = answer(&req, &select(&[("0", "Blue")]));
        assert!(allowed);
        assert_eq!(
            v,
            json!({"outcome": {"outcome": "selected", "optionId": "proceed_once"},
                   "answers": {"0": "Blue"}})
        );
        let cancel = InteractionResponse {
            action: InteractAction::Cancel,
            ..select(&[])
        };
        let (v, allowed) = answer(&req, &cancel);
        assert!(!allowed);
        assert_eq!(v["outcome"]["optionId"], "cancel");
        assert!(v.get("answers").is_none());
    }

    #[test]
    fn a_plain_permission_has_no_answers() {
        let mut req = qwen_question();
        req.tool_call.fields.raw_input = Some(json!({"command": "ls"}));
        assert!(question_interaction(&req, "x".into()).is_none());
        let (v, allowed) = answer(&req, &select(&[("decision", "allow")]));
        assert!(allowed);
        assert_eq!(
            v,
            json!({"outcome": {"outcome": "selected", "optionId": "proceed_once"}})
        );
    }
}
