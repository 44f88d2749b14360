//! An MCP server's own form (`mcpServer/elicitation/request` in `form` mode, not
//! codex's tool approval) as questions, and the answers as the form's content.
//!
//! Each property of `requestedSchema` is one question: a string with `enum`/`oneOf` a
//! choice, an array of such strings several choices, a boolean yes or no, anything
//! else free text (numbers are sent as numbers when they parse). The answer goes back
//! as `{action: "accept", content: {key: value}}`; a skip declines and a cancel
//! cancels, as the MCP spec has it. URL mode is declined: Weft opens no page for a
//! server.

use serde_json::{json, Map, Value};
use weft_protocol::{
    Choice, InteractAction, Interaction, InteractionKind, InteractionResponse, Question,
    QuestionType,
};

use crate::interact::Pending;
use crate::wire::McpElicitation;

/// How one field's answer is typed.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Field {
    Text,
    Choice,
    Several,
    Boolean,
    Number { integer: bool },
}

fn choices(schema: &Value) -> Vec<Choice> {
    let titled = |list: &Value| -> Vec<Choice> {
        list.as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|o| {
                        let value = o["const"].as_str()?;
                        Some(Choice {
                            label: o["title"].as_str().unwrap_or(value).to_string(),
                            value: value.to_string(),
                        })
                    })
                    .collect()
            })
            .unwrap_or_default()
    };
    if let Some(one_of) = schema.get("oneOf").or_else(|| schema.get("anyOf")) {
        return titled(one_of);
    }
    let names = schema["enumNames"].as_array();
    schema["enum"]
        .as_array()
        .map(|values| {
            values
                .iter()
                .enumerate()
                .filter_map(|(i, v)| {
                    let value = v.as_str()?;
                    let label = names
                        .and_then(|n| n.get(i))
                        .and_then(Value::as_str)
                        .unwrap_or(value);
                    Some(Choice {
                        label: label.to_string(),
                        value: value.to_string(),
                    })
                })
                .collect()
        })
        .unwrap_or_default()
}

/// The questions of a form, or None for a mode Weft does not show.
pub fn form(prompt_id: String, req: &McpElicitation) -> Option<Pending> {
    if !matches!(req.mode.as_str(), "form" | "openai/form" | "openaiForm") {
        return None;
    }
    let schema = req.requested_schema.clone().unwrap_or(Value::Null);
    let props = schema["properties"]
        .as_object()
        .cloned()
        .unwrap_or_default();
    let mut questions = Vec::new();
    let mut fields = Vec::new();
    for (key, p) in &props {
        let text = p["description"]
            .as_str()
            .or(p["title"].as_str())
            .unwrap_or(key)
            .to_string();
        let (kind, offered, field) = match p["type"].as_str() {
            Some("array") => (QuestionType::Select, choices(&p["items"]), Field::Several),
            Some("boolean") => (
                QuestionType::Select,
                vec![
                    Choice {
                        label: "Yes".into(),
                        value: "true".into(),
                    },
                    Choice {
                        label: "No".into(),
                        value: "false".into(),
                    },
                ],
                Field::Boolean,
            ),
            Some(t @ ("number" | "integer")) => (
                QuestionType::Text,
                Vec::new(),
                Field::Number {
                    integer: t == "integer",
                },
            ),
            _ => match choices(p) {
                c if c.is_empty() => (QuestionType::Text, c, Field::Text),
                c => (QuestionType::Select, c, Field::Choice),
            },
        };
        questions.push(Question {
            id: key.clone(),
            text,
            kind,
            multiple: field == Field::Several,
            free_text: kind == QuestionType::Text,
            choices: offered,
        });
        fields.push((key.clone(), field));
    }
    let interaction = Interaction {
        verdict: None,
        prompt_id,
        kind: InteractionKind::UserInput,
        title: match req.message.trim() {
            "" => format!("The MCP server {} asks", req.server_name),
            m => m.to_string(),
        },
        detail: Some(format!("asked by the MCP server {}", req.server_name)),
        tool_name: None,
        tool_input: None,
        questions,
    };
    Some(Pending::form(interaction, fields))
}

/// The elicitation result for `response`.
pub(crate) fn result(fields: &[(String, Field)], response: &InteractionResponse) -> Value {
    match response.action {
        InteractAction::Skip => return json!({"action": "decline", "content": null}),
        InteractAction::Cancel => return json!({"action": "cancel", "content": null}),
        InteractAction::Select | InteractAction::Text => {}
    }
    let mut content = Map::new();
    for (key, field) in fields {
        let given = response.given(key);
        let all = given.all();
        let value = match field {
            Field::Several if !all.is_empty() => json!(all),
            Field::Several => continue,
            _ => match all.first() {
                Some(v) => match field {
                    Field::Boolean => json!(matches!(v.as_str(), "true" | "yes" | "Yes")),
                    Field::Number { integer: true } => match v.trim().parse::<i64>() {
                        Ok(n) => json!(n),
                        Err(_) => continue,
                    },
                    Field::Number { integer: false } => match v.trim().parse::<f64>() {
                        Ok(n) => json!(n),
                        Err(_) => continue,
                    },
                    _ => json!(v),
                },
                None => continue,
            },
        };
        content.insert(key.clone(), value);
    }
    json!({"action": "accept", "content": content})
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    #[test]
    fn a_form_is_questions_and_the_answers_its_content() {
        let req = McpElicitation {
            server_name: "rec".into(),
            mode: "form".into(),
            message: "Your order".into(),
            requested_schema: Some(json!({"type": "object", "properties": {
                "toppings": {"type": "array", "title": "Toppings",
                    "items": {"type": "string", "enum": ["cheese", "basil"]}},
                "size": {"type": "string", "oneOf": [
                    {"const": "s", "title": "Small"}, {"const": "l", "title": "Large"}]},
                "count": {"type": "integer"},
                "note": {"type": "string", "description": "Anything else?"}}})),
            ..Default::default()
        };
        let p = form("e1".into(), &req).unwrap();
        let qs = &p.interaction.questions;
        let top = qs.iter().find(|q| q.id == "toppings").unwrap();
        assert!(top.multiple && top.choices.len() == 2);
        let size = qs.iter().find(|q| q.id == "size").unwrap();
        assert_eq!(size.choices[1].label, "Large");
        let mut r = InteractionResponse::select("x");
        r.value = None;
        r.selected
            .insert("toppings".into(), vec!["cheese".into(), "basil".into()]);
        r.answers.insert("size".into(), "l".into());
        r.answers.insert("count".into(), "2".into());
        r.answers.insert("note".into(), "thin crust".into());
        assert_eq!(
            p.result(&r),
            json!({"action": "accept", "content": {
                "toppings": ["cheese", "basil"], "size": "l", "count": 2, "note": "thin crust"}})
        );
        assert_eq!(p.result(&InteractionResponse::cancel())["action"], "cancel");
    }
}
