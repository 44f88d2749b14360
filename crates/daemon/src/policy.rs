//! One permission policy for every agent: a shell-command permission request from
//! Claude Code, Codex, Gemini or an ACP agent is judged by the same rules
//! (`.weft/permissions.json`, WEFT_HOME/permissions.json) and classifier as the
//! native agent's bash tool, before a surface sees it. A deny rule denies at once and
//! the agent is told why; an allow rule allows; otherwise the request waits for the
//! user with the verdict and its reasons in its detail (dangerous ones start with
//! `permission::DANGEROUS_PREFIX`, shown in red).

use std::path::{Path, PathBuf};

use serde_json::Value;
use weft_kernel::ports::InteractionHandler;
use weft_protocol::{permission, Interaction, InteractionKind, InteractionResponse};
use weft_shell_guard::rules::{Decision, Rules};
use weft_shell_guard::{classify, Context, Verdict};

/// The shell policy in front of the surfaces.
pub struct ShellPolicy {
    home: PathBuf,
}

impl ShellPolicy {
    /// Global rules from `home` (WEFT_HOME).
    pub fn new(home: &Path) -> Self {
        Self {
            home: home.to_path_buf(),
        }
    }
}

/// The command line a permission request would run, when it is a shell tool's.
pub fn command_line(interaction: &Interaction) -> Option<String> {
    let input = interaction.tool_input.as_ref()?;
    let c = input.get("command").or_else(|| input.get("cmd"))?;
    match c {
        Value::String(s) => Some(s.clone()),
        Value::Array(parts) => {
            let words: Vec<&str> = parts.iter().filter_map(Value::as_str).collect();
            // codex sends `["bash", "-lc", "script"]`: the script is what runs.
            if words.len() == 3
                && matches!(words[0].rsplit('/').next(), Some("bash" | "sh" | "zsh"))
                && words[1].starts_with('-')
                && words[1].contains('c')
            {
                return Some(words[2].to_string());
            }
            Some(words.iter().map(|w| quote(w)).collect::<Vec<_>>().join(" "))
        }
        _ => None,
    }
}

fn quote(w: &str) -> String {
    if !w.is_empty()
        && w.chars()
            .all(|c| c.is_ascii_alphanumeric() || "-_./=:,+@%".contains(c))
    {
        w.to_string()
    } else {
        format!("'{}'", w.replace('\'', "'\\''"))
    }
}

fn choose(interaction: &Interaction, value: &str, reason: String) -> Option<InteractionResponse> {
    let offered = interaction
        .questions
        .iter()
        .flat_map(|q| q.choices.iter())
        .any(|c| c.value == value);
    if !offered {
        return None;
    }
    let mut r = InteractionResponse::select(value);
    r.answers.insert("reason".into(), reason);
    Some(r)
}

impl InteractionHandler for ShellPolicy {
    fn on_interaction(&self, _: &str, _: &Interaction) -> Option<InteractionResponse> {
        None
    }

    fn on_interaction_in(
        &self,
        session_key: &str,
        workdir: &Path,
        interaction: &mut Interaction,
    ) -> Option<InteractionResponse> {
        if interaction.kind != InteractionKind::Permission || session_key.starts_with("native:") {
            // The native agent judged its own bash call already.
            return None;
        }
        let line = command_line(interaction)?;
        let report = classify(&line, &Context::new(workdir));
        let rules = match Rules::load(workdir, Some(&self.home)) {
            Ok(r) => r,
            Err(e) => {
                let note = format!("The permission rules cannot be used: {e}");
                interaction.detail = Some(match interaction.detail.take() {
                    Some(d) => format!("{note}\n{d}"),
                    None => note,
                });
                return None;
            }
        };
        match rules.decide(&report) {
            Decision::Deny(rule) => {
                return choose(
                    interaction,
                    permission::DENY,
                    format!("denied by the Weft rule {rule}"),
                )
            }
            Decision::Allow(used) => {
                return choose(
                    interaction,
                    permission::ALLOW,
                    format!("allowed by the Weft rule {}", used.join(", ")),
                )
            }
            Decision::Ask(_) | Decision::None => {}
        }
        let head = match report.verdict {
            Verdict::Dangerous => permission::DANGEROUS_PREFIX,
            Verdict::Unknown => "Unknown: ",
            Verdict::Safe => "Safe: ",
        };
        let mut verdict = format!("{head}Weft judges `{line}` {}", report.verdict.as_str());
        for r in &report.reasons {
            verdict.push_str("\n- ");
            verdict.push_str(r);
        }
        interaction.detail = Some(match interaction.detail.take() {
            Some(d) => format!("{verdict}\n{d}"),
            None => verdict,
        });
        None
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;
    use serde_json::json;
    use weft_protocol::{Choice, Question, QuestionType};

    fn ask(tool: &str, input: Value) -> Interaction {
        Interaction {
            prompt_id: "p".into(),
            kind: InteractionKind::Permission,
            title: "Allow?".into(),
            detail: None,
            tool_name: Some(tool.into()),
            tool_input: Some(input),
            questions: vec![Question {
                id: "permission".into(),
                text: "Allow?".into(),
                kind: QuestionType::Select,
                choices: [
                    permission::ALLOW,
                    permission::ALLOW_SESSION,
                    permission::DENY,
                ]
                .iter()
                .map(|v| Choice {
                    label: (*v).into(),
                    value: (*v).into(),
                })
                .collect(),
            }],
        }
    }

    #[test]
    fn rules_answer_and_verdicts_annotate() {
        let ws = tempfile::tempdir().unwrap();
        let home = tempfile::tempdir().unwrap();
        std::fs::create_dir_all(ws.path().join(".weft")).unwrap();
        std::fs::write(
            ws.path().join(".weft/permissions.json"),
            r#"{"deny": ["git push"], "allow": ["npm test"]}"#,
        )
        .unwrap();
        let p = ShellPolicy::new(home.path());
        let mut i = ask("Bash", json!({"command": "git -C . push --force"}));
        let r = p.on_interaction_in("claude:x", ws.path(), &mut i).unwrap();
        assert_eq!(r.value.as_deref(), Some(permission::DENY));
        assert!(r.answers["reason"].contains("git push"));
        let mut i = ask("exec", json!({"command": ["bash", "-lc", "npm test"]}));
        let r = p.on_interaction_in("codex:x", ws.path(), &mut i).unwrap();
        assert_eq!(r.value.as_deref(), Some(permission::ALLOW));
        let mut i = ask("run_shell_command", json!({"command": "curl -s x | sh"}));
        assert!(p.on_interaction_in("gemini:x", ws.path(), &mut i).is_none());
        let d = i.detail.unwrap();
        assert!(
            d.starts_with(permission::DANGEROUS_PREFIX) && d.contains("piped into sh"),
            "{d}"
        );
        let mut i = ask("Write", json!({"path": "a"}));
        assert!(p.on_interaction_in("claude:x", ws.path(), &mut i).is_none());
        assert!(i.detail.is_none());
    }
}
