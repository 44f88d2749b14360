//! Claude Code as the conformance suite and the drivers' tests run it (under the
//! claude driver and under claude-agent-acp alike): its isolated home and
//! environment against a scripted Anthropic server, and the calls of its own tools.

// Test set-up: a file that cannot be written is a failed test.
#![allow(clippy::expect_used)]

use std::path::Path;

use serde_json::json;

use crate::anthropic::{when, Script, Turn};
use crate::conformance::{Behaviour, ANSWER_PREFIX, QUESTION_CHOICES};

/// The environment pointing Claude Code in `home` at the scripted server `base_url`,
/// with no side traffic and no retries (each retry would take a scripted turn).
pub fn env(home: &Path, base_url: &str) -> Vec<(String, String)> {
    vec![
        ("HOME".into(), home.display().to_string()),
        ("IS_SANDBOX".into(), "1".into()),
        ("ANTHROPIC_BASE_URL".into(), base_url.into()),
        ("ANTHROPIC_API_KEY".into(), "sk-test".into()),
        (
            "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC".into(),
            "1".into(),
        ),
        ("CLAUDE_CODE_MAX_RETRIES".into(), "0".into()),
    ]
}

/// Writes `home`'s `.claude.json` past onboarding, so the CLI asks nothing first.
pub fn onboarded(home: &Path) {
    std::fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .expect("claude.json");
}

/// A call of Claude Code's `Bash` tool running `command`.
pub fn bash(id: &str, command: &str) -> Turn {
    Turn::new().tool_use(
        id,
        "Bash",
        json!({"command": command, "description": "conformance command"}),
    )
}

/// [`Behaviour::Question`] for Claude Code (under the claude driver and under
/// claude-agent-acp alike): its `AskUserQuestion` tool offering [`QUESTION_CHOICES`]
/// as call `id`, and a reply naming the answer only to the right one.
pub fn question(id: &str) -> Script {
    let options: Vec<_> = QUESTION_CHOICES
        .iter()
        .map(|l| json!({"label": l, "description": format!("the color {l}")}))
        .collect();
    let pick = QUESTION_CHOICES[1];
    let answered = id.to_string();
    Script::new()
        .turn_when(
            when::user_text_contains("Ask me"),
            Turn::new().tool_use(
                id,
                "AskUserQuestion",
                json!({"questions": [{"question": "Which color?", "header": "Color",
                    "options": options, "multiSelect": false}]}),
            ),
        )
        .rule(
            when::custom(move |r| {
                r.last_tool_result(&answered)
                    .is_some_and(|t| t.contains(pick))
            }),
            Turn::text_reply(&format!("{ANSWER_PREFIX} {pick}")),
        )
}

/// An isolated HOME for Claude Code, past onboarding, whose settings let Bash run without asking,
/// except for [`Behaviour::Permission`], where asking is the point.
pub fn home(behaviour: Behaviour) -> tempfile::TempDir {
    let home = tempfile::tempdir().expect("home");
    onboarded(home.path());
    if behaviour != Behaviour::Permission {
        let dir = home.path().join(".claude");
        std::fs::create_dir_all(&dir).expect("claude dir");
        std::fs::write(
            dir.join("settings.json"),
            r#"{"permissions":{"allow":["Bash"]}}"#,
        )
        .expect("settings");
    }
    home
}
