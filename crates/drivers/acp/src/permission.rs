//! `session/request_permission` ↔ permission interactions.
//!
//! The interaction offers the agent's own options, under the agent's own labels. Each
//! choice's value is Weft's shared permission value where the option's kind maps to
//! one (`allow_once` → `allow`, `allow_always` → `allowSession`, `reject_once` →
//! `deny`), so every surface's Allow/Deny buttons work, and the agent's `optionId`
//! otherwise. An answer may name either; `cancel` (or a stopped turn) answers
//! `cancelled`, and `skip` picks the agent's reject option.

use agent_client_protocol::v1::schema::{
    PermissionOption, PermissionOptionKind, RequestPermissionOutcome, RequestPermissionRequest,
    SelectedPermissionOutcome,
};
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
