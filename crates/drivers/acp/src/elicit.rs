//! `elicitation/create` (form mode) ↔ question interactions.
//!
//! Weft advertises form elicitation, so agents ask their questions through it
//! (claude-agent-acp presents Claude's AskUserQuestion this way). Each form property
//! becomes one question: a single-select enum (`enum`/`oneOf`) or a boolean becomes a
//! select question, a multi-select array a select question taking several picks
//! (`multiple`), anything else free text. A free-text property named `<key>_custom`
//! next to a select or multi-select property `<key>` (claude-agent-acp's "Other" box,
//! which it takes instead of the picks) is folded into
//! that question as its free text (`freeText`): the typed answer goes there, and so
//! does an answer that is none of its choices.

use std::collections::BTreeMap;

use agent_client_protocol::v1::schema::{
    CreateElicitationRequest, CreateElicitationResponse, ElicitationAcceptAction,
    ElicitationAction, ElicitationContentValue, ElicitationMode, ElicitationPropertySchema,
    MultiSelectItems,
};
use weft_protocol::{
    Choice, InteractAction, Interaction, InteractionKind, InteractionResponse, Question,
    QuestionType,
};

/// How one question's answer goes back.
#[derive(Debug, Clone, PartialEq)]
enum Field {
    Select { custom: Option<String> },
    Multi { custom: Option<String> },
    Boolean,
    Integer,
    Number,
    Text,
}

/// A form turned into questions, remembering how to answer it.
#[derive(Debug, Clone)]
pub struct Form {
    /// The interaction to ask.
    pub interaction: Interaction,
    fields: Vec<(String, Field, Vec<String>)>,
}

fn choice(value: &str, label: &str) -> Choice {
    Choice {
        label: label.to_string(),
        value: value.to_string(),
    }
}

/// The interaction for a form elicitation (`None` for URL mode and unknown modes,
/// which are declined).
pub fn form(req: &CreateElicitationRequest, prompt_id: String) -> Option<Form> {
    let ElicitationMode::Form(form) = &req.mode else {
        return None;
    };
    let props = &form.requested_schema.properties;
    let mut questions = Vec::new();
    let mut fields = Vec::new();
    for (key, schema) in props {
        if let Some(base) = key.strip_suffix("_custom") {
            let base_is_select = matches!(
                props.get(base),
                Some(ElicitationPropertySchema::String(s)) if s.one_of.is_some() || s.enum_values.is_some()
            ) || matches!(
                props.get(base),
                Some(ElicitationPropertySchema::Array(_))
            );
            if base_is_select {
                continue;
            }
        }
        let (text, kind, choices, field) = match schema {
            ElicitationPropertySchema::String(s) => {
                let text = s.description.clone().or(s.title.clone());
                let choices: Vec<Choice> = if let Some(one_of) = &s.one_of {
                    one_of.iter().map(|o| choice(&o.value, &o.title)).collect()
                } else if let Some(values) = &s.enum_values {
                    values.iter().map(|v| choice(v, v)).collect()
                } else {
                    Vec::new()
                };
                if choices.is_empty() {
                    (text, QuestionType::Text, choices, Field::Text)
                } else {
                    let custom_key = format!("{key}_custom");
                    let custom = props.contains_key(&custom_key).then_some(custom_key);
                    (
                        text,
                        QuestionType::Select,
                        choices,
                        Field::Select { custom },
                    )
                }
            }
            ElicitationPropertySchema::Boolean(b) => (
                b.description.clone().or(b.title.clone()),
                QuestionType::Select,
                vec![choice("true", "Yes"), choice("false", "No")],
                Field::Boolean,
            ),
            ElicitationPropertySchema::Array(a) => {
                let choices = match &a.items {
                    MultiSelectItems::String(s) => s.values.iter().map(|v| choice(v, v)).collect(),
                    MultiSelectItems::Titled(t) => t
                        .options
                        .iter()
                        .map(|o| choice(&o.value, &o.title))
                        .collect(),
                    _ => Vec::new(),
                };
                let custom_key = format!("{key}_custom");
                let custom = props.contains_key(&custom_key).then_some(custom_key);
                (
                    a.description.clone().or(a.title.clone()),
                    QuestionType::Select,
                    choices,
                    Field::Multi { custom },
                )
            }
            ElicitationPropertySchema::Integer(i) => (
                i.description.clone().or(i.title.clone()),
                QuestionType::Text,
                Vec::new(),
                Field::Integer,
            ),
            ElicitationPropertySchema::Number(n) => (
                n.description.clone().or(n.title.clone()),
                QuestionType::Text,
                Vec::new(),
                Field::Number,
            ),
            _ => (None, QuestionType::Text, Vec::new(), Field::Text),
        };
        let values = choices.iter().map(|c| c.value.clone()).collect();
        let multiple = matches!(field, Field::Multi { .. });
        let free_text = matches!(
            &field,
            Field::Select { custom: Some(_) } | Field::Multi { custom: Some(_) } | Field::Text
        );
        questions.push(Question {
            id: key.clone(),
            text: text.unwrap_or_else(|| req.message.clone()),
            kind,
            choices,
            multiple,
            free_text,
        });
        fields.push((key.clone(), field, values));
    }
    Some(Form {
        interaction: Interaction {
            verdict: None,
            prompt_id,
            kind: InteractionKind::UserInput,
            title: req.message.clone(),
            detail: form.requested_schema.description.clone(),
            tool_name: None,
            tool_input: None,
            questions,
        },
        fields,
    })
}

impl Form {
    /// The agent's answer for the user's.
    pub fn response(&self, answer: &InteractionResponse) -> CreateElicitationResponse {
        let action = match answer.action {
            InteractAction::Cancel => ElicitationAction::Cancel,
            InteractAction::Skip => ElicitationAction::Decline,
            InteractAction::Select | InteractAction::Text => {
                let mut content = BTreeMap::new();
                for (key, field, values) in &self.fields {
                    let given = answer.given(key);
                    if let (
                        Field::Select { custom: Some(c) } | Field::Multi { custom: Some(c) },
                        Some(text),
                    ) = (field, &given.text)
                    {
                        content.insert(c.clone(), ElicitationContentValue::String(text.clone()));
                    }
                    if let Field::Multi { .. } = field {
                        // Picks given one by one; an older surface's one
                        // comma-separated answer is split.
                        let picks: Vec<String> = match given.choices.as_slice() {
                            [one] => one.split(',').map(|s| s.trim().to_string()).collect(),
                            many => many.to_vec(),
                        };
                        if !picks.is_empty() {
                            content
                                .insert(key.clone(), ElicitationContentValue::StringArray(picks));
                        }
                        continue;
                    }
                    let Some(v) = given.choices.first().cloned().or_else(|| {
                        matches!(field, Field::Text)
                            .then(|| given.text.clone())
                            .flatten()
                    }) else {
                        continue;
                    };
                    let value = match field {
                        Field::Select { custom } => match custom {
                            Some(c) if !values.contains(&v) => {
                                content.insert(c.clone(), ElicitationContentValue::String(v));
                                continue;
                            }
                            _ => ElicitationContentValue::String(v),
                        },
                        Field::Multi { .. } => continue,
                        Field::Boolean => ElicitationContentValue::Boolean(matches!(
                            v.as_str(),
                            "true" | "yes" | "Yes"
                        )),
                        Field::Integer => match v.trim().parse() {
                            Ok(n) => ElicitationContentValue::Integer(n),
                            Err(_) => continue,
                        },
                        Field::Number => match v.trim().parse() {
                            Ok(n) => ElicitationContentValue::Number(n),
                            Err(_) => continue,
                        },
                        Field::Text => ElicitationContentValue::String(v),
                    };
                    content.insert(key.clone(), value);
                }
                ElicitationAction::Accept(ElicitationAcceptAction::new().content(content))
            }
        };
        CreateElicitationResponse::new(action)
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn claude_ask_user_question_form_becomes_one_select_question() {
        let req: CreateElicitationRequest = serde_json::from_value(json!({
            "mode": "form", "sessionId": "s1", "toolCallId": "toolu_1",
            "message": "Which color?",
            "requestedSchema": {"type": "object", "properties": {
                "question_0": {"type": "string", "title": "Color", "oneOf": [
                    {"const": "Red", "title": "Red"},
                    {"const": "Blue", "title": "Blue — calm"}]},
                "question_0_custom": {"type": "string", "title": "Other",
                    "description": "Type your own answer"}}}
        }))
        .unwrap();
        let f = form(&req, "q-1".into()).unwrap();
        let i = &f.interaction;
        assert_eq!(i.kind, InteractionKind::UserInput);
        assert_eq!(i.questions.len(), 1);
        let q = &i.questions[0];
        assert_eq!((q.id.as_str(), q.text.as_str()), ("question_0", "Color"));
        assert_eq!(q.choices[1], choice("Blue", "Blue — calm"));

        let picked =
            serde_json::to_value(f.response(&InteractionResponse::select("Blue"))).unwrap();
        assert_eq!(
            picked,
            json!({"action": "accept", "content": {"question_0": "Blue"}})
        );
        let typed =
            serde_json::to_value(f.response(&InteractionResponse::select("Green"))).unwrap();
        assert_eq!(
            typed,
            json!({"action": "accept", "content": {"question_0_custom": "Green"}})
        );
        let cancelled = serde_json::to_value(f.response(&InteractionResponse::cancel())).unwrap();
        assert_eq!(cancelled, json!({"action": "cancel"}));
    }

    #[test]
    fn a_multi_select_takes_several_picks_and_its_other_box_the_text() {
        let req: CreateElicitationRequest = serde_json::from_value(json!({
            "mode": "form", "sessionId": "s1", "toolCallId": "toolu_2",
            "message": "Pick",
            "requestedSchema": {"type": "object", "properties": {
                "question_0": {"type": "array", "title": "Toppings",
                    "items": {"type": "string", "enum": ["Cheese", "Olives", "Basil"]}},
                "question_0_custom": {"type": "string", "title": "Other"}}}
        }))
        .unwrap();
        let f = form(&req, "q-2".into()).unwrap();
        let q = &f.interaction.questions[0];
        assert_eq!(f.interaction.questions.len(), 1);
        assert!(q.multiple && q.free_text);
        let mut r = InteractionResponse::select("Cheese");
        r.value = None;
        r.selected
            .insert("question_0".into(), vec!["Cheese".into(), "Basil".into()]);
        assert_eq!(
            serde_json::to_value(f.response(&r)).unwrap(),
            json!({"action": "accept", "content": {"question_0": ["Cheese", "Basil"]}})
        );
        r.selected.clear();
        r.texts.insert("question_0".into(), "Anchovies".into());
        assert_eq!(
            serde_json::to_value(f.response(&r)).unwrap(),
            json!({"action": "accept", "content": {"question_0_custom": "Anchovies"}})
        );
    }
}
