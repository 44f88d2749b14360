//! The handover a session's new agent starts from when the session changes agent: the
//! conversation so far (the newest turns that fit, when it all would not), the
//! workspace and the open plan. It is given as the first turn's system prompt, so the
//! new agent's own session starts knowing what the old one did.

use weft_protocol::{StepStatus, UniversalSnapshot};

/// About 8k tokens: room for the new agent's own work.
const MAX_CHARS: usize = 32_000;
/// One turn's prompt or reply is cut past this.
const TURN_CHARS: usize = 6_000;

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.trim().to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{}… (cut)", head.trim_end())
}

/// The handover text for moving a session from `from` to `to`, over `history`
/// (oldest first).
pub fn text(from: &str, to: &str, workdir: &str, history: &[UniversalSnapshot]) -> String {
    let mut turns: Vec<String> = Vec::new();
    let mut used = 0;
    let mut left_out = 0;
    for s in history.iter().rev() {
        let agent = if s.agent.is_empty() { from } else { &s.agent };
        let mut t = format!(
            "User: {}\n\n{agent}: {}",
            cut(&s.prompt, TURN_CHARS),
            cut(&s.text, TURN_CHARS)
        );
        if let Some(e) = &s.error {
            t.push_str(&format!("\n(the turn failed: {})", cut(e, 400)));
        }
        if used + t.len() > MAX_CHARS {
            left_out = history.len() - turns.len();
            break;
        }
        used += t.len();
        turns.push(t);
    }
    turns.reverse();
    let mut out = format!(
        "This Weft session was run by another agent ({from}) until now; you ({to}) take it over from here. \
         The workspace is {workdir}. Continue from the conversation below as if you had taken part in it."
    );
    if left_out > 0 {
        out.push_str(&format!(
            " ({left_out} earlier turn(s) are left out to keep this short.)"
        ));
    }
    out.push_str("\n\n<conversation>\n");
    out.push_str(&turns.join("\n\n---\n\n"));
    out.push_str("\n</conversation>");
    if let Some(plan) = history.last().and_then(|s| s.plan.as_ref()) {
        let open: Vec<String> = plan
            .steps
            .iter()
            .filter(|s| s.status != StepStatus::Completed)
            .map(|s| format!("- [{:?}] {}", s.status, s.text))
            .collect();
        if !open.is_empty() {
            out.push_str("\n\nThe open plan:\n");
            out.push_str(&open.join("\n"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use weft_protocol::{Plan, PlanStep};

    fn turn(agent: &str, prompt: &str, text: &str) -> UniversalSnapshot {
        UniversalSnapshot {
            agent: agent.into(),
            prompt: prompt.into(),
            text: text.into(),
            ..Default::default()
        }
    }

    #[test]
    fn the_handover_carries_the_turns_the_workspace_and_the_open_plan() {
        let mut last = turn("claude", "and then?", "then the tests");
        last.plan = Some(Plan {
            explanation: None,
            steps: vec![
                PlanStep {
                    text: "write it".into(),
                    status: StepStatus::Completed,
                },
                PlanStep {
                    text: "test it".into(),
                    status: StepStatus::Pending,
                },
            ],
        });
        let h = text(
            "claude",
            "codex",
            "/w",
            &[turn("claude", "name a colour", "teal, surely"), last],
        );
        assert!(h.contains("/w"), "{h}");
        assert!(
            h.contains("User: name a colour\n\nclaude: teal, surely"),
            "{h}"
        );
        assert!(h.find("teal").unwrap_or(0) < h.find("then the tests").unwrap_or(0));
        assert!(h.contains("test it") && !h.contains("write it"), "{h}");
    }

    #[test]
    fn a_long_history_keeps_its_newest_turns() {
        let big = "x".repeat(5_000);
        let history: Vec<UniversalSnapshot> = (0..20)
            .map(|i| turn("claude", &format!("prompt {i}"), &big))
            .collect();
        let h = text("claude", "codex", "/w", &history);
        assert!(h.len() < MAX_CHARS + 2_000, "{}", h.len());
        assert!(
            h.contains("prompt 19") && !h.contains("prompt 0\n"),
            "newest kept"
        );
        assert!(h.contains("earlier turn(s) are left out"));
    }
}
