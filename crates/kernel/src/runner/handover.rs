//! The handover a session's new agent starts from when the session changes agent: the
//! conversation so far, the workspace and the open plan. When it all would not fit, the
//! newest turns are given whole and the older ones condensed to a line each (the
//! prompt and the start of the reply, cut, never reworded), so the new agent still
//! knows what was asked from the start; only past the digest's own budget are the
//! oldest left out, and the handover says how many. It is given as the first turn's
//! system prompt, so the new agent's own session starts knowing what the old one did.
//! (Condensing by cutting rather than asking a model keeps it deterministic, free and
//! honest: nothing in it is a model's paraphrase.)

use weft_protocol::{StepStatus, UniversalSnapshot};

/// About 8k tokens: room for the new agent's own work.
const MAX_CHARS: usize = 32_000;
/// One turn's prompt or reply is cut past this.
const TURN_CHARS: usize = 6_000;
/// The condensed older turns, at most.
const DIGEST_CHARS: usize = 8_000;
/// A condensed turn's prompt and reply are each cut past this.
const DIGEST_PART: usize = 120;

/// The first line of `text`, cut at `max` characters.
fn first_line(text: &str, max: usize) -> String {
    let line = text.trim().lines().next().unwrap_or_default().trim();
    cut(line, max)
}

fn cut(text: &str, max: usize) -> String {
    if text.chars().count() <= max {
        return text.trim().to_string();
    }
    let head: String = text.chars().take(max).collect();
    format!("{}… (cut)", head.trim_end())
}

/// A turn's attachments as text (`[image: shot.png]`, `[file: /w/notes.md]`): the
/// handover is a system prompt, so the new agent learns what was attached, not its
/// pixels; a file keeps its path so an agent with file tools can open it again.
fn attached(s: &UniversalSnapshot) -> String {
    s.attachments
        .iter()
        .map(|a| {
            let path = std::path::Path::new(a);
            if weft_attachments::looks_like_image(path) {
                let name = path
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| a.clone());
                format!(" [image: {name}]")
            } else {
                format!(" [file: {a}]")
            }
        })
        .collect()
}

/// The handover text for moving a session from `from` to `to`, over `history`
/// (oldest first).
pub fn text(from: &str, to: &str, workdir: &str, history: &[UniversalSnapshot]) -> String {
    let header = format!(
        "This Weft session was run by another agent ({from}) until now; you ({to}) take it over from here. \
         The workspace is {workdir}. Continue from the conversation below as if you had taken part in it."
    );
    with_header(header, from, history)
}

/// The same handover for `agent` itself, when it could not reload its own session
/// (an ACP agent whose `session/load` failed starts a new one).
pub fn after_lost_session(agent: &str, workdir: &str, history: &[UniversalSnapshot]) -> String {
    let header = format!(
        "You ({agent}) ran this Weft session until now, but your earlier session could not be \
         loaded, so this is a new one. The workspace is {workdir}. Continue from the \
         conversation below as if you remembered it."
    );
    with_header(header, agent, history)
}

fn with_header(header: String, from: &str, history: &[UniversalSnapshot]) -> String {
    let mut turns: Vec<String> = Vec::new();
    let mut used = 0;
    let mut left_out = 0;
    let agent_of = |s: &UniversalSnapshot| {
        if s.agent.is_empty() {
            from.to_string()
        } else {
            s.agent.clone()
        }
    };
    for s in history.iter().rev() {
        let agent = agent_of(s);
        let mut t = format!(
            "User: {}{}\n\n{agent}: {}",
            cut(&s.prompt, TURN_CHARS),
            attached(s),
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
    // The turns that did not fit whole, newest first, condensed while the digest has room.
    let mut digest: Vec<String> = Vec::new();
    let mut digest_used = 0;
    let older = &history[..left_out];
    for s in older.iter().rev() {
        let mut line = format!(
            "- User: {} | {}: {}",
            first_line(&s.prompt, DIGEST_PART),
            agent_of(s),
            first_line(&s.text, DIGEST_PART)
        );
        if s.error.is_some() {
            line.push_str(" (failed)");
        }
        if digest_used + line.len() > DIGEST_CHARS {
            break;
        }
        digest_used += line.len() + 1;
        digest.push(line);
    }
    digest.reverse();
    let dropped = left_out - digest.len();
    let mut out = header;
    if dropped > 0 {
        out.push_str(&format!(
            " ({dropped} of the oldest turn(s) are left out to keep this short.)"
        ));
    }
    if !digest.is_empty() {
        out.push_str(&format!(
            "\n\nEarlier turns, condensed to one line each (the start of the prompt and of the reply; {} turn(s)):\n",
            digest.len()
        ));
        out.push_str(&digest.join("\n"));
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
    fn attachments_are_named_in_the_turn_they_came_with() {
        let mut t = turn("native", "what is this?", "a red square");
        t.attachments = vec!["/w/shot.png".into(), "/w/notes.md".into()];
        let h = text("native", "claude", "/w", &[t]);
        assert!(
            h.contains(
                "User: what is this? [image: shot.png] [file: /w/notes.md]\n\nnative: a red square"
            ),
            "{h}"
        );
    }

    #[test]
    fn a_long_history_keeps_its_newest_turns_whole_and_condenses_the_older() {
        let history: Vec<UniversalSnapshot> = (0..20)
            .map(|i| {
                let reply = format!("reply {i} starts here.\n{}", "x".repeat(5_000));
                turn("claude", &format!("prompt {i}\nwith more lines"), &reply)
            })
            .collect();
        let h = text("claude", "codex", "/w", &history);
        assert!(h.len() < MAX_CHARS + DIGEST_CHARS + 2_000, "{}", h.len());
        assert!(
            h.contains("User: prompt 19\nwith more lines"),
            "newest whole"
        );
        // The oldest is still there, condensed: its prompt and the start of its reply.
        assert!(
            h.contains("- User: prompt 0 | claude: reply 0 starts here."),
            "{h}"
        );
        assert!(h.contains("condensed to one line each"));
        assert!(!h.contains("left out"), "nothing dropped: {h}");
        let condensed = h.split("<conversation>").next().unwrap_or_default();
        assert!(!condensed.contains("xxxxx"), "a condensed turn is one line");
    }

    #[test]
    fn past_the_digest_budget_the_oldest_are_left_out_and_counted() {
        let history: Vec<UniversalSnapshot> = (0..400)
            .map(|i| {
                turn(
                    "claude",
                    &format!("prompt {i} {}", "p".repeat(200)),
                    &"y".repeat(2_000),
                )
            })
            .collect();
        let h = text("claude", "codex", "/w", &history);
        assert!(h.len() < MAX_CHARS + DIGEST_CHARS + 2_000, "{}", h.len());
        assert!(h.contains("of the oldest turn(s) are left out"), "{h}");
        assert!(!h.contains("- User: prompt 0 "), "the oldest went first");
        assert!(h.contains("prompt 399"));
    }
}
