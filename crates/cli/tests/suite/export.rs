//! `weft sessions export`: a managed (echo) session and a native Claude session (a
//! transcript the real CLI wrote, placed in the daemon's Claude home) as Markdown and
//! JSON, in order; an unknown key's error.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::Value;

use super::support::{wait_for, Env};

const CLAUDE_ID: &str = "2beba834-ea9e-4d74-9e9f-b4a9f23cf57b";

/// The agents' homes are the test's own, never the machine user's.
fn with_homes(mut cmd: Command, home: &Path) -> Command {
    cmd.env("HOME", home)
        .env("CLAUDE_CONFIG_DIR", home.join(".claude"))
        .env("CODEX_HOME", home.join(".codex"))
        .env("GEMINI_CLI_HOME", home);
    cmd
}

fn text(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// Each needle found after the one before it.
fn assert_in_order(doc: &str, needles: &[&str]) {
    let mut from = 0;
    for n in needles {
        match doc[from..].find(n) {
            Some(i) => from += i + n.len(),
            None => panic!("`{n}` not found (in order) in:\n{doc}"),
        }
    }
}

#[test]
fn sessions_export_markdown_and_json_of_managed_and_native_sessions() {
    let env = Env::new();
    let agents = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let project = agents
        .path()
        .join(".claude/projects/-home-dev-probe-claude-work");
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    let fixture = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../library/tests/fixtures/claude_session.jsonl");
    std::fs::copy(&fixture, project.join(format!("{CLAUDE_ID}.jsonl")))
        .unwrap_or_else(|e| panic!("{}: {e}", fixture.display()));
    let weft = |args: &[&str]| {
        let out = with_homes(env.cmd(args), agents.path())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        env.keep_output(&out);
        out
    };
    let json = |out: &Output| -> Value {
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
            panic!(
                "not JSON ({e}): {}\nstderr: {}",
                text(out),
                String::from_utf8_lossy(&out.stderr)
            )
        })
    };

    // A managed session of two turns.
    let first = weft(&["run", "--json", "first ask about otters"]);
    assert!(first.status.success(), "{first:?}");
    let key = json(&first)["sessionKey"]
        .as_str()
        .unwrap_or_else(|| panic!("no key"))
        .to_string();
    let second = weft(&["run", "--session", &key, "second ask about badgers"]);
    assert!(second.status.success(), "{second:?}");

    let md = weft(&["sessions", "export", &key]);
    assert!(md.status.success(), "{md:?}");
    let md = text(&md);
    assert!(md.starts_with("# "), "{md}");
    assert!(md.contains("**Agent:** echo"), "{md}");
    assert_in_order(
        &md,
        &[
            "## Turn 1",
            "> first ask about otters",
            "Echo: first ask about otters",
            "— done",
            "— failed",
            "## Turn 2",
            "> second ask about badgers",
            "Echo: second ask about badgers",
        ],
    );
    assert!(!md.contains("## Turn 3"), "{md}");

    let js = weft(&["sessions", "export", &key, "--format", "json"]);
    assert!(js.status.success(), "{js:?}");
    let doc = json(&js);
    assert_eq!(doc["session"]["sessionKey"], key.as_str());
    assert_eq!(doc["session"]["origin"], "managed");
    let turns = doc["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("no turns: {doc}"));
    assert_eq!(turns.len(), 2);
    assert_eq!(turns[0]["prompt"], "first ask about otters");
    assert!(
        turns[1]["text"]
            .as_str()
            .is_some_and(|t| t.starts_with("Echo: second ask about badgers")),
        "{doc}"
    );

    // --output writes the same document to a file, readable as a document is.
    let file = env.work.path().join("export.md");
    let to_file = weft(&[
        "sessions",
        "export",
        &key,
        "--output",
        &file.to_string_lossy(),
    ]);
    assert!(to_file.status.success(), "{to_file:?}");
    assert!(to_file.stdout.is_empty());
    assert_eq!(
        std::fs::read_to_string(&file).unwrap_or_else(|e| panic!("{e}")),
        md
    );
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file)
            .unwrap_or_else(|e| panic!("{e}"))
            .permissions()
            .mode();
        assert_eq!(mode & 0o600, 0o600, "{mode:o}");
        assert_eq!(mode & 0o133, 0, "{mode:o}");
    }

    // The native session, read from Claude's own file once indexed.
    let native = format!("claude:{CLAUDE_ID}");
    let row = wait_for("the native session to be indexed", 30, || {
        let list = json(&weft(&["sessions", "--all", "--native", "--json"]));
        list.as_array()?
            .iter()
            .find(|s| s["sessionKey"] == native.as_str())
            .cloned()
    });
    assert_eq!(row["turns"], 3);
    let md = weft(&["sessions", "export", &native, "--format", "markdown"]);
    assert!(md.status.success(), "{md:?}");
    let md = text(&md);
    assert!(md.starts_with("# hello turn one\n"), "{md}");
    assert!(md.contains("`/home/dev/probe/claude/work`"), "{md}");
    assert_in_order(
        &md,
        &[
            "## Turn 1",
            "> hello turn one",
            "MOCK-REPLY: done (call 3)",
            "## Turn 2",
            "> USE_TOOL turn two",
            "tool said",
            "**Tool calls**",
            "— done",
            "## Turn 3",
            "> resumed message",
            "MOCK-REPLY: done (call 5)",
        ],
    );
    let js = weft(&["sessions", "export", &native, "--format", "json"]);
    assert!(js.status.success(), "{js:?}");
    let doc = json(&js);
    assert_eq!(doc["session"]["origin"], "native");
    assert_eq!(doc["session"]["title"], "hello turn one");
    let turns = doc["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("no turns: {doc}"));
    assert_eq!(turns.len(), 3);
    assert_eq!(turns[1]["prompt"], "USE_TOOL turn two");
    assert_eq!(turns[1]["toolCalls"][0]["result"], "hi-from-tool");
}

#[test]
fn sessions_export_of_an_unknown_session_or_format_exits_2() {
    let env = Env::new();
    let agents = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (args, needle) in [
        (
            vec!["sessions", "export", "echo:missing"],
            "unknown session `echo:missing`",
        ),
        (
            vec!["sessions", "export", "claude:nope", "--format", "json"],
            "unknown session `claude:nope`",
        ),
        (
            vec!["sessions", "export", "echo:x", "--format", "xml"],
            "invalid value 'xml'",
        ),
        (vec!["sessions", "export"], "<KEY>"),
    ] {
        let out = with_homes(env.cmd(&args), agents.path())
            .output()
            .unwrap_or_else(|e| panic!("{e}"));
        env.keep_output(&out);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
        assert!(out.stdout.is_empty(), "{args:?}");
    }
}
