//! The PTY rail's command line: Claude Code's own interactive UI for a session.
//!
//! Same binary, environment (accounts, model endpoint) and plugin arguments as the
//! structured rail, without the stream-json flags. A session the CLI has saved is
//! continued with `--resume <id>`; any other session starts under an id chosen here
//! (`--session-id`), reported in [`TuiSpec::session_id`] so the kernel records it and
//! the structured rail resumes the same conversation once the terminal closes.
//!
//! The permission mode is passed only when `WEFT_CLAUDE_PERMISSION_MODE` asks for one
//! other than `default`: in its own UI the user answers permission prompts there, and
//! their own `defaultMode` setting should rule.

use std::path::Path;

use weft_kernel::driver::{AgentTurnInput, TuiSpec};

use crate::config::Config;
use crate::recover;
use crate::spawn::SessionArg;

/// Flags that only mean something with `-p` (a plugin may contribute them for the
/// structured rail); the interactive UI rejects or ignores them.
const PRINT_ONLY: &[&str] = &[
    "--permission-prompt-tool",
    "--input-format",
    "--output-format",
    "--include-partial-messages",
    "--replay-user-messages",
];

fn has_flag(args: &[String], flag: &str) -> bool {
    args.iter()
        .any(|a| a == flag || a.starts_with(&format!("{flag}=")))
}

/// The extra arguments without print-only flags (and the value of those that take one).
fn interactive_args(extra: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    let mut skip_value = false;
    for a in extra {
        if skip_value {
            skip_value = false;
            if !a.starts_with("--") {
                continue;
            }
        }
        let flag = a.split('=').next().unwrap_or(a);
        if PRINT_ONLY.contains(&flag) {
            // `--flag value` takes the next argument along; boolean flags don't.
            skip_value = !a.contains('=')
                && matches!(
                    flag,
                    "--permission-prompt-tool" | "--input-format" | "--output-format"
                );
            continue;
        }
        out.push(a.clone());
    }
    out
}

/// The interactive UI for `input`'s session, run from `program`.
pub fn spec(program: &Path, input: &AgentTurnInput, cfg: &Config) -> TuiSpec {
    // Known to the kernel but never saved by the CLI (killed early, or a terminal
    // closed before its first prompt): `--resume` would fail with "No conversation
    // found", so it starts under the same id (a fork forks again).
    let never = input
        .session_id
        .as_deref()
        .is_some_and(|id| never_saved(input, id));
    let session = SessionArg::choose(input, input.session_id.clone(), never);
    let mut args = session.args();
    args.extend(crate::spawn::untrusted_args(input));
    let session_id = match session {
        SessionArg::Resume(_) => None,
        other => Some(other.id().to_string()),
    };
    if let Some(m) = input.model.as_ref().filter(|m| *m != "default") {
        args.extend(["--model".to_string(), m.clone()]);
    }
    if let Some(e) = &input.effort {
        args.extend(["--effort".to_string(), e.clone()]);
    }
    let extra = interactive_args(&input.extra_args);
    if cfg.permission_mode != "default"
        && !has_flag(&extra, "--permission-mode")
        && !has_flag(&extra, "--dangerously-skip-permissions")
    {
        args.extend(["--permission-mode".to_string(), cfg.permission_mode.clone()]);
    }
    if let Some(sp) = input.system_prompt.as_ref().filter(|s| !s.is_empty()) {
        args.extend(["--append-system-prompt".to_string(), sp.clone()]);
    }
    args.extend(extra);
    TuiSpec {
        program: program.to_path_buf(),
        args,
        env: input.env.clone(),
        cwd: input.workdir.clone(),
        session_id,
    }
}

/// True when Claude Code's config folder is known and holds no session file for `id`.
pub fn never_saved(input: &AgentTurnInput, id: &str) -> bool {
    recover::config_dir(input)
        .is_some_and(|config| recover::session_file(&config, &input.workdir, id).is_none())
}

#[cfg(test)]
#[allow(clippy::unwrap_used, clippy::expect_used)]
mod tests {
    use super::*;

    fn input(home: &Path) -> AgentTurnInput {
        AgentTurnInput {
            workdir: "/w".into(),
            env: vec![("HOME".into(), home.display().to_string())],
            workspace_trusted: true,
            ..Default::default()
        }
    }

    #[test]
    fn an_untrusted_folder_s_settings_and_mcp_json_are_not_loaded() {
        let home = tempfile::tempdir().unwrap();
        let mut i = input(home.path());
        i.workspace_trusted = false;
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        assert!(
            s.args.join(" ").contains("--setting-sources user"),
            "{:?}",
            s.args
        );
        i.workspace_trusted = true;
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        assert!(
            !s.args.iter().any(|a| a == "--setting-sources"),
            "{:?}",
            s.args
        );
    }

    #[test]
    fn a_new_session_gets_an_id_chosen_here() {
        let home = tempfile::tempdir().unwrap();
        let mut i = input(home.path());
        i.model = Some("sonnet".into());
        i.effort = Some("high".into());
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        let id = s.session_id.clone().unwrap();
        assert_eq!(
            s.args,
            ["--session-id", &id, "--model", "sonnet", "--effort", "high"]
        );
        assert_eq!(s.cwd, Path::new("/w"));
        assert_eq!(s.env, i.env);
    }

    #[test]
    fn a_saved_session_is_resumed_and_an_unsaved_one_restarts_under_its_id() {
        let home = tempfile::tempdir().unwrap();
        let mut i = input(home.path());
        i.session_id = Some("abc".into());
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        assert_eq!(s.args, ["--session-id", "abc"]);
        assert_eq!(s.session_id.as_deref(), Some("abc"));

        let dir = home.path().join(".claude/projects/-w");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("abc.jsonl"), "{}\n").unwrap();
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        assert_eq!(s.args, ["--resume", "abc"]);
        assert_eq!(s.session_id, None);
    }

    #[test]
    fn a_fork_opens_in_the_terminal_as_claudes_own_fork_until_its_file_exists() {
        let home = tempfile::tempdir().unwrap();
        let mut i = input(home.path());
        i.fork = Some(weft_protocol::ForkOrigin {
            parent_key: "claude:p".into(),
            parent_id: "p".into(),
            at: Some("u1".into()),
            turns: 1,
            session_id: Some("n".into()),
        });
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        assert_eq!(
            s.args.join(" "),
            "--resume p --fork-session --session-id n --resume-session-at u1"
        );
        assert_eq!(s.session_id.as_deref(), Some("n"));
        // Once claude wrote the fork's own file, the terminal resumes that.
        i.session_id = Some("n".into());
        let dir = home.path().join(".claude/projects/-w");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("n.jsonl"), "{}\n").unwrap();
        let s = spec(Path::new("/bin/claude"), &i, &Config::default());
        assert_eq!(s.args, ["--resume", "n"]);
    }

    #[test]
    fn plugin_args_pass_without_print_only_flags_and_the_mode_knob_applies() {
        let home = tempfile::tempdir().unwrap();
        let mut i = input(home.path());
        i.session_id = Some("abc".into());
        i.system_prompt = Some("be brief".into());
        i.extra_args = [
            "--permission-prompt-tool",
            "stdio",
            "--add-dir",
            "/x",
            "--output-format=stream-json",
            "--include-partial-messages",
            "--verbose",
        ]
        .map(String::from)
        .to_vec();
        let cfg = Config {
            permission_mode: "acceptEdits".into(),
            ..Config::default()
        };
        let s = spec(Path::new("/bin/claude"), &i, &cfg);
        assert_eq!(
            s.args.join(" "),
            "--session-id abc --permission-mode acceptEdits --append-system-prompt be brief \
             --add-dir /x --verbose"
        );
        i.extra_args = vec!["--permission-mode".into(), "plan".into()];
        let s = spec(Path::new("/bin/claude"), &i, &cfg);
        assert_eq!(s.args.join(" ").matches("--permission-mode").count(), 1);
    }
}
