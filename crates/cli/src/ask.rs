//! Asking a pending interaction on the terminal.

use std::io::{BufRead, Write};

use weft_protocol::{permission, InteractAction, Interaction, InteractionResponse, QuestionType};

/// The "yes" answer to a permission or confirmation: its allow choice (or first choice).
pub(crate) fn allow(interaction: &Interaction) -> InteractionResponse {
    let choices: Vec<&str> = interaction
        .questions
        .iter()
        .flat_map(|q| q.choices.iter().map(|c| c.value.as_str()))
        .collect();
    let value = choices
        .iter()
        .find(|v| **v == permission::ALLOW)
        .or(choices.first())
        .map_or(permission::ALLOW, |v| *v);
    InteractionResponse::select(value)
}

/// Asks every question of `interaction` on the terminal; an empty line or EOF cancels.
pub(crate) async fn on_terminal(interaction: Interaction) -> InteractionResponse {
    tokio::task::spawn_blocking(move || ask_blocking(&interaction))
        .await
        .unwrap_or_else(|_| InteractionResponse::cancel())
}

fn read_line() -> Option<String> {
    let mut line = String::new();
    match std::io::stdin().lock().read_line(&mut line) {
        Ok(0) | Err(_) => None,
        Ok(_) => Some(line.trim().to_string()).filter(|l| !l.is_empty()),
    }
}

fn ask_blocking(interaction: &Interaction) -> InteractionResponse {
    let mut err = std::io::stderr();
    let _ = writeln!(err, "\n? {}", interaction.title);
    if let Some(v) = &interaction.verdict {
        let _ = writeln!(err, "  Weft judges it {}", v.verdict.as_str());
        for reason in &v.reasons {
            let _ = writeln!(err, "  - {reason}");
        }
    }
    if let Some(detail) = &interaction.detail {
        let _ = writeln!(err, "  {detail}");
    }
    if let (Some(tool), Some(input)) = (&interaction.tool_name, &interaction.tool_input) {
        let _ = writeln!(err, "  {tool} {input}");
    }
    let mut response = InteractionResponse {
        action: InteractAction::Select,
        value: None,
        answers: Default::default(),
        selected: Default::default(),
        texts: Default::default(),
    };
    for question in &interaction.questions {
        let _ = writeln!(err, "  {}", question.text);
        let answer = match question.kind {
            QuestionType::Select => {
                for (i, choice) in question.choices.iter().enumerate() {
                    let _ = writeln!(err, "    {}) {}", i + 1, choice.label);
                }
                let several = if question.multiple {
                    " (several: 1,3)"
                } else {
                    ""
                };
                let own = if question.free_text {
                    ", or type your own answer"
                } else {
                    ""
                };
                let _ = write!(
                    err,
                    "  choose 1-{}{several}{own} (empty cancels): ",
                    question.choices.len()
                );
                let _ = err.flush();
                let Some(line) = read_line() else {
                    return InteractionResponse::cancel();
                };
                let pick = |word: &str| {
                    word.parse::<usize>()
                        .ok()
                        .and_then(|n| n.checked_sub(1))
                        .and_then(|i| question.choices.get(i))
                        .or_else(|| {
                            question
                                .choices
                                .iter()
                                .find(|c| c.label == word || c.value == word)
                        })
                        .map(|c| c.value.clone())
                };
                let picks: Option<Vec<String>> = if question.multiple {
                    line.split(',').map(|w| pick(w.trim())).collect()
                } else {
                    pick(&line).map(|v| vec![v])
                };
                match picks {
                    Some(values) if question.multiple => {
                        response.selected.insert(question.id.clone(), values);
                        continue;
                    }
                    Some(mut values) => values.remove(0),
                    None if question.free_text => {
                        response.texts.insert(question.id.clone(), line);
                        continue;
                    }
                    None => {
                        let _ = writeln!(err, "  not a choice: cancelled");
                        return InteractionResponse::cancel();
                    }
                }
            }
            QuestionType::Text => {
                let _ = write!(err, "  answer (empty cancels): ");
                let _ = err.flush();
                response.action = InteractAction::Text;
                match read_line() {
                    Some(line) => line,
                    None => return InteractionResponse::cancel(),
                }
            }
        };
        response.answers.insert(question.id.clone(), answer.clone());
        response.value = Some(answer);
    }
    let several = !response.selected.is_empty() || !response.texts.is_empty();
    if interaction.questions.len() > 1 || several {
        response.value = None;
    }
    if response.answers.is_empty() && response.selected.is_empty() {
        response.action = InteractAction::Text;
    }
    response
}
