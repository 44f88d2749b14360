//! A question or permission as a chat message, and a chat answer turned back into the
//! interaction's response.
//!
//! Each question's choices are numbered from 1. One question is answered by its
//! number, its label or its value (several, comma-separated, for a question that takes
//! several), or by free text where the question takes it; several questions are
//! answered one line each, in order. A permission also takes ✅ and ❌ as reactions,
//! and a question of one choice its number as a keycap reaction.

use std::collections::BTreeMap;

use weft_protocol::{
    permission, InteractAction, Interaction, InteractionKind, InteractionResponse, Question,
    QuestionType,
};

/// The keycap reactions for choices 1 to 10.
pub const KEYCAPS: [&str; 10] = ["1️⃣", "2️⃣", "3️⃣", "4️⃣", "5️⃣", "6️⃣", "7️⃣", "8️⃣", "9️⃣", "🔟"];
/// Allow, as a reaction.
pub const YES: &str = "✅";
/// Deny, as a reaction.
pub const NO: &str = "❌";

/// The message that asks `interaction`.
pub fn render(interaction: &Interaction) -> String {
    let mut out = match interaction.kind {
        InteractionKind::Permission => format!("🔐 Permission needed: {}", interaction.title),
        InteractionKind::Confirmation => format!("❓ Please confirm: {}", interaction.title),
        InteractionKind::UserInput => format!("❓ {}", interaction.title),
    };
    if let Some(v) = &interaction.verdict {
        out.push_str(&format!("\nWeft judges it {}", v.verdict.as_str()));
        for reason in &v.reasons {
            out.push_str(&format!("\n  - {reason}"));
        }
    }
    if let Some(detail) = &interaction.detail {
        out.push_str(&format!("\n{detail}"));
    }
    if let (Some(tool), Some(input)) = (&interaction.tool_name, &interaction.tool_input) {
        let mut input = input.to_string();
        if input.len() > 500 {
            let mut end = 500;
            while !input.is_char_boundary(end) {
                end -= 1;
            }
            input.truncate(end);
            input.push('…');
        }
        out.push_str(&format!("\n{tool} {input}"));
    }
    let several = interaction.questions.len() > 1;
    for (i, q) in interaction.questions.iter().enumerate() {
        out.push_str("\n\n");
        if several {
            out.push_str(&format!("{}) ", (b'A' + (i as u8 % 26)) as char));
        }
        out.push_str(&q.text);
        for (n, c) in q.choices.iter().enumerate() {
            out.push_str(&format!("\n  {}. {}", n + 1, c.label));
        }
        let mut how = Vec::new();
        if q.kind == QuestionType::Select && q.multiple {
            how.push("several: 1,3".to_string());
        }
        if q.kind == QuestionType::Text {
            how.push("type your answer".to_string());
        } else if q.free_text {
            how.push("or type your own".to_string());
        }
        if !how.is_empty() {
            out.push_str(&format!("\n  ({})", how.join("; ")));
        }
    }
    out.push_str(if several {
        "\n\nReply with one line per question, in order."
    } else if is_permission_like(interaction) {
        "\n\nReply with a number, or react ✅ to allow / ❌ to deny."
    } else if reaction_choices(interaction) > 0 {
        "\n\nReply with a number or the answer, or react with the number."
    } else {
        "\n\nReply with your answer."
    });
    out
}

fn is_permission_like(interaction: &Interaction) -> bool {
    matches!(
        interaction.kind,
        InteractionKind::Permission | InteractionKind::Confirmation
    )
}

/// How many keycap reactions to offer: the choices of a one-question, one-choice select.
pub fn reaction_choices(interaction: &Interaction) -> usize {
    match interaction.questions.as_slice() {
        [q] if q.kind == QuestionType::Select && !q.multiple => q.choices.len().min(KEYCAPS.len()),
        _ => 0,
    }
}

/// The reactions offered on the question's message.
pub fn reactions(interaction: &Interaction) -> Vec<&'static str> {
    if is_permission_like(interaction) && allow_value(interaction).is_some() {
        return vec![YES, NO];
    }
    KEYCAPS[..reaction_choices(interaction)].to_vec()
}

fn allow_value(interaction: &Interaction) -> Option<String> {
    choice_value(interaction, permission::ALLOW, |v| {
        v.first().map(|s| s.to_string())
    })
}

fn deny_value(interaction: &Interaction) -> Option<String> {
    choice_value(interaction, permission::DENY, |v| {
        v.last().map(|s| s.to_string())
    })
}

/// The choice valued `want`, else the one `fallback` picks of all the choices' values.
fn choice_value(
    interaction: &Interaction,
    want: &str,
    fallback: impl FnOnce(&[&str]) -> Option<String>,
) -> Option<String> {
    let values: Vec<&str> = interaction
        .questions
        .iter()
        .flat_map(|q| q.choices.iter().map(|c| c.value.as_str()))
        .collect();
    values
        .iter()
        .find(|v| **v == want)
        .map(|v| v.to_string())
        .or_else(|| fallback(&values))
}

/// The answer a reaction `key` gives, if it gives one.
pub fn from_reaction(interaction: &Interaction, key: &str) -> Option<InteractionResponse> {
    // Reactions carry a variation selector or not depending on the app.
    let key = key.trim_end_matches('\u{fe0f}');
    let same = |k: &str| k.trim_end_matches('\u{fe0f}') == key;
    if is_permission_like(interaction) {
        if same(YES) {
            return allow_value(interaction).map(InteractionResponse::select);
        }
        if same(NO) {
            return deny_value(interaction).map(InteractionResponse::select);
        }
    }
    let n = KEYCAPS[..reaction_choices(interaction)]
        .iter()
        .position(|k| same(k))?;
    let q = interaction.questions.first()?;
    q.choices
        .get(n)
        .map(|c| InteractionResponse::select(c.value.clone()))
}

/// The choice `word` names in `q`: its number, label or value.
fn choice(q: &Question, word: &str) -> Option<String> {
    let word = word.trim();
    word.parse::<usize>()
        .ok()
        .and_then(|n| n.checked_sub(1))
        .and_then(|i| q.choices.get(i))
        .or_else(|| {
            q.choices
                .iter()
                .find(|c| c.label.eq_ignore_ascii_case(word) || c.value.eq_ignore_ascii_case(word))
        })
        .map(|c| c.value.clone())
}

/// The answer a message `text` gives. `strict`: only a choice counts (a plain message
/// in a room where a question waits is a prompt unless it picks a choice); otherwise
/// (a reply to the question's message) free text counts too where a question takes it.
pub fn from_text(
    interaction: &Interaction,
    text: &str,
    strict: bool,
) -> Option<InteractionResponse> {
    let qs = &interaction.questions;
    let lines: Vec<&str> = if qs.len() > 1 {
        text.lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .collect()
    } else {
        vec![text.trim()]
    };
    if lines.len() != qs.len() || qs.is_empty() {
        return None;
    }
    let mut r = InteractionResponse {
        action: InteractAction::Select,
        value: None,
        answers: BTreeMap::new(),
        selected: BTreeMap::new(),
        texts: BTreeMap::new(),
    };
    let mut picked_any = false;
    for (q, line) in qs.iter().zip(lines) {
        match q.kind {
            QuestionType::Text => {
                if strict && qs.len() == 1 && interaction.kind != InteractionKind::UserInput {
                    return None;
                }
                r.answers.insert(q.id.clone(), line.to_string());
            }
            QuestionType::Select if q.multiple => {
                let picks: Option<Vec<String>> = line.split(',').map(|w| choice(q, w)).collect();
                match picks {
                    Some(p) if !p.is_empty() => {
                        picked_any = true;
                        r.selected.insert(q.id.clone(), p);
                    }
                    _ if q.free_text && !strict => {
                        r.texts.insert(q.id.clone(), line.to_string());
                    }
                    _ => return None,
                }
            }
            QuestionType::Select => match choice(q, line) {
                Some(v) => {
                    picked_any = true;
                    r.answers.insert(q.id.clone(), v);
                }
                None if q.free_text && !strict => {
                    r.texts.insert(q.id.clone(), line.to_string());
                }
                None => return None,
            },
        }
    }
    if !picked_any {
        r.action = InteractAction::Text;
    }
    // One question, one value: the single `value` as every agent has always read it.
    if let [q] = qs.as_slice() {
        if let Some(v) = r.answers.remove(&q.id) {
            r.value = Some(v);
        } else if let Some(t) = r.texts.get(&q.id).filter(|_| q.kind == QuestionType::Text) {
            r.value = Some(t.clone());
        }
    }
    Some(r)
}

/// What an answer says, for the question's closing edit.
pub fn summary(interaction: &Interaction, r: &InteractionResponse) -> String {
    if r.action == InteractAction::Cancel {
        return "cancelled".into();
    }
    let label = |q: &Question, v: &str| {
        q.choices
            .iter()
            .find(|c| c.value == v)
            .map_or(v.to_string(), |c| c.label.clone())
    };
    interaction
        .questions
        .iter()
        .map(|q| {
            r.given(&q.id)
                .all()
                .iter()
                .map(|v| label(q, v))
                .collect::<Vec<_>>()
                .join(", ")
        })
        .collect::<Vec<_>>()
        .join("; ")
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
                    label: c.to_uppercase(),
                    value: c.to_string(),
                })
                .collect(),
            multiple,
            free_text,
        }
    }

    fn permission() -> Interaction {
        Interaction {
            kind: InteractionKind::Permission,
            title: "write".into(),
            questions: vec![q(
                "decision",
                &["allow", "allowSession", "deny"],
                false,
                false,
            )],
            ..Default::default()
        }
    }

    #[test]
    fn a_permission_by_number_label_and_reaction() {
        let p = permission();
        assert_eq!(
            from_text(&p, "1", true).unwrap().value.as_deref(),
            Some("allow")
        );
        assert_eq!(
            from_text(&p, "deny", true).unwrap().value.as_deref(),
            Some("deny")
        );
        assert!(from_text(&p, "please do it", true).is_none());
        assert_eq!(
            from_reaction(&p, "✅").unwrap().value.as_deref(),
            Some("allow")
        );
        assert_eq!(
            from_reaction(&p, "❌\u{fe0f}").unwrap().value.as_deref(),
            Some("deny")
        );
        assert_eq!(reactions(&p), [YES, NO]);
        assert!(render(&p).contains("  3. DENY"));
    }

    #[test]
    fn several_questions_one_line_each_with_several_picks_and_free_text() {
        let survey = Interaction {
            questions: vec![
                q("toppings", &["cheese", "olives", "basil"], true, true),
                q("size", &["small", "large"], false, true),
            ],
            ..Default::default()
        };
        let r = from_text(&survey, "1,3\nfamily", false).unwrap();
        assert_eq!(r.given("toppings").choices, ["cheese", "basil"]);
        assert_eq!(r.given("size").text.as_deref(), Some("family"));
        assert!(
            from_text(&survey, "1,3\nfamily", true).is_none(),
            "free text needs a reply"
        );
        assert!(
            from_text(&survey, "1,3", false).is_none(),
            "a line per question"
        );
        assert!(reactions(&survey).is_empty());
    }

    #[test]
    fn a_one_choice_question_takes_keycaps_and_a_text_question_its_text() {
        let colour = Interaction {
            questions: vec![q("color", &["red", "green", "blue"], false, false)],
            ..Default::default()
        };
        assert_eq!(reactions(&colour).len(), 3);
        assert_eq!(
            from_reaction(&colour, "2️⃣").unwrap().value.as_deref(),
            Some("green")
        );
        let text = Interaction {
            questions: vec![q("name", &[], false, true)],
            ..Default::default()
        };
        let r = from_text(&text, "Ada", true).unwrap();
        assert_eq!(
            (r.action, r.value.as_deref()),
            (InteractAction::Text, Some("Ada"))
        );
        assert_eq!(
            summary(&colour, &from_text(&colour, "3", true).unwrap()),
            "BLUE"
        );
    }
}
