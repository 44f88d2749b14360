//! `weft answer ID`: the flags turned into one answer.
//!
//! `--select VALUE` may come more than once (several picks of a question that allows
//! several) and `--text TEXT` adds free text; a prompt with several questions names
//! each with `QID=`. The prefix is taken as a question id only when the prompt has a
//! question of that id, so a value holding `=` for a prompt of one question still
//! works. The prompt's questions come from the inbox; when the prompt is not there the
//! flags go as given and the daemon says what is wrong.

use std::collections::BTreeMap;

use weft_protocol::{InteractAction, InteractionResponse, Question, QuestionType};

/// Which question `arg` is for, and its value.
fn split<'a>(arg: &'a str, questions: &[Question]) -> (Option<&'a str>, &'a str) {
    match arg.split_once('=') {
        Some((qid, value)) if questions.iter().any(|q| q.id == qid) => (Some(qid), value),
        _ => (None, arg),
    }
}

/// The question an unnamed `--select` or `--text` answers: the only one.
fn only(questions: &[Question], flag: &str) -> Result<Option<String>, String> {
    match questions {
        [] => Ok(None),
        [one] => Ok(Some(one.id.clone())),
        many => Err(format!(
            "this prompt has {} questions: name one with {flag} QID=… (ids: {})",
            many.len(),
            many.iter()
                .map(|q| q.id.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The answer the flags give; `questions` is None when the prompt was not found.
pub(crate) fn response(
    questions: Option<&[Question]>,
    select: &[String],
    text: &[String],
    cancel: bool,
) -> Result<InteractionResponse, String> {
    if cancel {
        if !select.is_empty() || !text.is_empty() {
            return Err("--cancel goes alone".into());
        }
        return Ok(InteractionResponse::cancel());
    }
    if select.is_empty() && text.is_empty() {
        return Err("give --select VALUE, --text TEXT (each may repeat) or --cancel".into());
    }
    let qs = questions.unwrap_or_default();
    let mut picks: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
    for arg in select {
        let (qid, value) = split(arg, qs);
        let qid = match qid {
            Some(q) => Some(q.to_string()),
            None => only(qs, "--select")?,
        };
        if let Some(q) = qid.as_ref().and_then(|id| qs.iter().find(|q| &q.id == id)) {
            if !q.choices.is_empty() && !q.choices.iter().any(|c| c.value == value) {
                let offered: Vec<&str> = q.choices.iter().map(|c| c.value.as_str()).collect();
                return Err(format!(
                    "`{value}` is not a choice of \"{}\" (choices: {})",
                    q.text,
                    offered.join(", ")
                ));
            }
        }
        picks.entry(qid).or_default().push(value.to_string());
    }
    let mut typed: BTreeMap<Option<String>, String> = BTreeMap::new();
    for arg in text {
        let (qid, value) = split(arg, qs);
        let qid = match qid {
            Some(q) => Some(q.to_string()),
            None => only(qs, "--text")?,
        };
        if typed.insert(qid, value.to_string()).is_some() {
            return Err("one --text per question".into());
        }
    }
    let mut r = InteractionResponse {
        action: if picks.is_empty() {
            InteractAction::Text
        } else {
            InteractAction::Select
        },
        value: None,
        answers: BTreeMap::new(),
        selected: BTreeMap::new(),
        texts: BTreeMap::new(),
    };
    for (qid, values) in picks {
        let q = qid.as_ref().and_then(|id| qs.iter().find(|q| &q.id == id));
        let several = values.len() > 1 || q.is_some_and(|q| q.multiple);
        if values.len() > 1 && q.is_some_and(|q| !q.multiple) {
            let q = q.map(|q| q.text.as_str()).unwrap_or_default();
            return Err(format!("\"{q}\" takes one choice"));
        }
        match qid {
            None => match values.as_slice() {
                [one] => r.value = Some(one.clone()),
                _ => {
                    r.selected.insert(String::new(), values);
                }
            },
            Some(id) if several => {
                r.selected.insert(id, values);
            }
            Some(id) => {
                r.answers
                    .insert(id, values.into_iter().next().unwrap_or_default());
            }
        }
    }
    for (qid, value) in typed {
        let q = qid.as_ref().and_then(|id| qs.iter().find(|q| &q.id == id));
        if let Some(q) = q.filter(|q| !q.free_text && q.kind == QuestionType::Select) {
            return Err(format!("\"{}\" takes no free text, only --select", q.text));
        }
        match (qid, q) {
            // A text question's text is its answer.
            (Some(id), Some(q)) if q.kind == QuestionType::Text => {
                r.answers.insert(id, value);
            }
            (Some(id), _) => {
                r.texts.insert(id, value);
            }
            (None, _) if r.value.is_none() => r.value = Some(value),
            (None, _) => {
                r.texts.insert(String::new(), value);
            }
        }
    }
    // One question answered with one value: the single `value` too, as every agent
    // has always read it.
    if let ([q], true) = (qs, r.value.is_none()) {
        let given = r.given(&q.id);
        if let ([one], None, true) = (given.choices.as_slice(), &given.text, r.selected.is_empty())
        {
            r.value = Some(one.clone());
            r.answers.clear();
        }
    }
    Ok(r)
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use weft_protocol::Choice;

    fn q(id: &str, choices: &[&str], multiple: bool, free_text: bool) -> Question {
        Question {
            id: id.into(),
            text: format!("{id}?"),
            kind: if choices.is_empty() {
                QuestionType::Text
            } else {
                QuestionType::Select
            },
            choices: choices
                .iter()
                .map(|c| Choice {
                    label: c.to_string(),
                    value: c.to_string(),
                })
                .collect(),
            multiple,
            free_text,
        }
    }

    fn s(v: &[&str]) -> Vec<String> {
        v.iter().map(|x| x.to_string()).collect()
    }

    #[test]
    fn several_picks_and_text_of_one_question() {
        let qs = [q("top", &["Cheese", "Olives", "Basil"], true, true)];
        let r = response(Some(&qs), &s(&["Cheese", "Basil"]), &s(&["extra"]), false).unwrap();
        let given = r.given("top");
        assert_eq!(given.choices, ["Cheese", "Basil"]);
        assert_eq!(given.text.as_deref(), Some("extra"));
        assert_eq!(r.action, InteractAction::Select);
    }

    #[test]
    fn several_questions_are_named_by_id() {
        let qs = [
            q("color", &["Red", "Blue"], false, true),
            q("size", &["S", "L"], false, true),
            q("name", &[], false, true),
        ];
        let r = response(
            Some(&qs),
            &s(&["color=Blue"]),
            &s(&["size=Family", "name=a=b"]),
            false,
        )
        .unwrap();
        assert_eq!(r.given("color").all(), ["Blue"]);
        assert_eq!(r.given("size").all(), ["Family"]);
        assert_eq!(r.given("name").all(), ["a=b"]);
        let unnamed = response(Some(&qs), &s(&["Blue"]), &[], false).unwrap_err();
        assert!(unnamed.contains("color, size, name"), "{unnamed}");
    }

    #[test]
    fn what_a_question_does_not_take_is_refused() {
        let qs = [q("color", &["Red", "Blue"], false, false)];
        assert!(response(Some(&qs), &s(&["Green"]), &[], false)
            .unwrap_err()
            .contains("not a choice"));
        assert!(response(Some(&qs), &s(&["Red", "Blue"]), &[], false)
            .unwrap_err()
            .contains("takes one choice"));
        assert!(response(Some(&qs), &[], &s(&["Green"]), false)
            .unwrap_err()
            .contains("no free text"));
        assert!(response(Some(&qs), &s(&["Red"]), &[], true).is_err());
    }

    #[test]
    fn one_value_is_the_single_value_as_before() {
        let qs = [q("permission", &["allow", "deny"], false, false)];
        let r = response(Some(&qs), &s(&["allow"]), &[], false).unwrap();
        assert_eq!(r.value.as_deref(), Some("allow"));
        assert!(r.answers.is_empty());
        assert_eq!(r.picked(), Some("allow"));
        let unknown = response(None, &s(&["x=y"]), &[], false).unwrap();
        assert_eq!(unknown.value.as_deref(), Some("x=y"));
        let text = response(Some(&[q("t", &[], false, true)]), &[], &s(&["hi"]), false).unwrap();
        assert_eq!(
            (text.action, text.value.as_deref()),
            (InteractAction::Text, Some("hi"))
        );
    }
}
