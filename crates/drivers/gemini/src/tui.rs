//! The PTY rail's command line: the Gemini CLI's own interactive UI for a session.
//!
//! Same binary, environment (API key, base URL) and extra arguments as the structured
//! rail, and like it `--skip-trust` (trust this folder for this run only; nothing is
//! written to the user's settings). A session with an id continues with
//! `--resume <id>`; a new one starts under an id chosen here (`--session-id`),
//! reported in [`TuiSpec::session_id`] so the kernel records it and the structured
//! rail continues the same conversation (with `gemini -p --resume`) once the terminal
//! closes.

use std::path::Path;

use weft_kernel::driver::{AgentTurnInput, TuiSpec};

/// The interactive UI for `input`'s session, run from `program`.
pub fn spec(program: &Path, input: &AgentTurnInput) -> TuiSpec {
    let mut args = crate::trust::tui_args(input);
    let session_id = match &input.session_id {
        Some(id) => {
            args.extend(["--resume".to_string(), id.clone()]);
            None
        }
        None => {
            let id = uuid::Uuid::new_v4().to_string();
            args.extend(["--session-id".to_string(), id.clone()]);
            Some(id)
        }
    };
    if let Some(m) = input.model.as_ref().filter(|m| *m != "default") {
        args.extend(["--model".to_string(), m.clone()]);
    }
    args.extend(input.extra_args.iter().cloned());
    let mut env = input.env.clone();
    // gemini runs headless (no UI, reads a prompt from stdin) whenever CI=true or
    // GITHUB_ACTIONS=true, even on a terminal; a terminal the user opened is interactive.
    // As the terminal will see them: the client's variables, not the kernel's.
    for var in ["CI", "GITHUB_ACTIONS"] {
        if input.var(var).is_some_and(|v| v == "true") {
            env.push((var.to_string(), "false".to_string()));
        }
    }
    TuiSpec {
        program: program.to_path_buf(),
        args,
        env,
        cwd: input.workdir.clone(),
        session_id,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn new_sessions_get_an_id_and_known_ones_resume() {
        let mut input = AgentTurnInput {
            workdir: "/w".into(),
            model: Some("gemini-x".into()),
            ..Default::default()
        };
        let s = spec(Path::new("/bin/gemini"), &input);
        let id = s.session_id.clone().unwrap_or_default();
        assert_eq!(
            s.args,
            ["--skip-trust", "--session-id", &id, "--model", "gemini-x"]
        );
        input.session_id = Some("abc".into());
        input.model = Some("default".into());
        let s = spec(Path::new("/bin/gemini"), &input);
        assert_eq!(s.args, ["--skip-trust", "--resume", "abc"]);
        assert_eq!(s.session_id, None);
    }

    #[test]
    fn the_clients_ci_flag_is_turned_off_for_its_terminal() {
        let mut client = weft_protocol::ClientEnv::default();
        client.0.insert("CI".into(), "true".into());
        let input = AgentTurnInput {
            client_env: Some(std::sync::Arc::new(client)),
            ..Default::default()
        };
        let s = spec(Path::new("/bin/gemini"), &input);
        assert!(s.env.contains(&("CI".to_string(), "false".to_string())));
        let none = AgentTurnInput {
            client_env: Some(Default::default()),
            ..Default::default()
        };
        assert!(spec(Path::new("/bin/gemini"), &none).env.is_empty());
    }
}
