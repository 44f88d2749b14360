//! The PTY rail's command line: codex's own interactive UI for a session.
//!
//! Same binary and the same `-c` overrides as the structured rail (the turn's model
//! provider, retries, `WEFT_CODEX_CONFIG`), so the terminal talks to the endpoint and
//! account the session uses. A session with a thread id continues with
//! `codex resume <id>`; a new one starts fresh (codex takes no id from outside: the
//! follower finds the new rollout and reports its id). Approval policy and sandbox are
//! passed only when `WEFT_CODEX_APPROVAL_POLICY` / `WEFT_CODEX_SANDBOX` set them: in
//! its own UI the user answers codex's prompts there, and their config should rule.

use std::path::Path;

use weft_kernel::driver::{AgentTurnInput, TuiSpec};

use crate::config::TurnKnobs;
use crate::spawn::{config_overrides, toml_str};

/// A knob the turn's environment sets.
fn explicit(input: &AgentTurnInput, name: &str) -> Option<String> {
    input.var(name).filter(|v| !v.trim().is_empty())
}

/// The thread a terminal opened on `input` forks (`codex fork PARENT`): a fork of a
/// whole thread that has no thread of its own yet. `codex fork` takes no turn to stop
/// at: a fork at a turn is made before the terminal opens (`fork_for_tui`), which then
/// resumes it.
pub fn forks_from(input: &AgentTurnInput) -> Option<&str> {
    if input.session_id.is_some() || input.fresh {
        return None;
    }
    input
        .fork
        .as_ref()
        .filter(|f| f.at.is_none())
        .map(|f| f.parent_id.as_str())
}

/// The interactive UI for `input`'s session, run from `program`.
pub fn spec(program: &Path, input: &AgentTurnInput) -> TuiSpec {
    let mut args = Vec::new();
    if let Some(id) = &input.session_id {
        args.extend(["resume".to_string(), id.clone()]);
    } else if let Some(parent) = forks_from(input) {
        args.extend(["fork".to_string(), parent.to_string()]);
    }
    let mut overrides = config_overrides(&TurnKnobs::of(input));
    if let Some(p) = explicit(input, "WEFT_CODEX_APPROVAL_POLICY") {
        overrides.push(format!("approval_policy={}", toml_str(&p)));
    }
    if let Some(s) = explicit(input, "WEFT_CODEX_SANDBOX") {
        overrides.push(format!("sandbox_mode={}", toml_str(&s)));
    }
    if let Some(e) = &input.effort {
        overrides.push(format!("model_reasoning_effort={}", toml_str(e)));
    }
    if let Some(sp) = input.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        overrides.push(format!("developer_instructions={}", toml_str(sp)));
    }
    for c in overrides {
        args.extend(["-c".to_string(), c]);
    }
    if let Some(m) = input.model.as_ref().filter(|m| *m != "default") {
        args.extend(["-m".to_string(), m.clone()]);
    }
    args.extend(input.extra_args.iter().cloned());
    TuiSpec {
        program: program.to_path_buf(),
        args,
        env: input.env.clone(),
        cwd: input.workdir.clone(),
        session_id: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resume_provider_and_knobs_go_on_the_command_line() {
        let input = AgentTurnInput {
            session_id: Some("th-1".into()),
            model: Some("gpt-x".into()),
            effort: Some("high".into()),
            workdir: "/w".into(),
            env: vec![
                ("WEFT_CODEX_BASE_URL".into(), "http://127.0.0.1:9/v1".into()),
                ("WEFT_CODEX_SANDBOX".into(), "danger-full-access".into()),
            ],
            extra_args: vec!["--flag".into()],
            ..Default::default()
        };
        let s = spec(Path::new("/bin/codex"), &input);
        let line = s.args.join(" ");
        assert!(line.starts_with("resume th-1 -c "), "{line}");
        assert!(line.contains("-c model_providers.weft.base_url=\"http://127.0.0.1:9/v1\""));
        assert!(line.contains("-c sandbox_mode=\"danger-full-access\""));
        assert!(line.contains("-c model_reasoning_effort=\"high\""));
        assert!(line.ends_with("-m gpt-x --flag"), "{line}");
        assert_eq!(s.session_id, None);
        assert_eq!(s.env, input.env);
    }

    #[test]
    fn a_new_session_has_no_subcommand_and_leaves_the_users_provider() {
        let s = spec(Path::new("/bin/codex"), &AgentTurnInput::default());
        assert_eq!(s.args.first().map(String::as_str), Some("-c"));
        assert!(!s.args.join(" ").contains("model_provider"));
    }
}
