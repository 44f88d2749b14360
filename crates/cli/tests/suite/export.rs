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

/// A Claude transcript of `turns` turns, each reply `reply_bytes` long and starting
/// with its turn's number.
fn big_claude_transcript(id: &str, turns: usize, reply_bytes: usize) -> String {
    let filler = "lorem ipsum dolor sit amet ".repeat(reply_bytes / 27 + 1);
    let mut out = String::new();
    let mut parent = serde_json::Value::Null;
    for k in 1..=turns {
        let at = format!("2026-11-30T03:{:02}:{:02}.000Z", k / 60, k % 60);
        let user = serde_json::json!({
            "parentUuid": parent, "isSidechain": false, "type": "user",
            "message": {"role": "user", "content": format!("big ask {k}")},
            "uuid": format!("u-{k}"), "timestamp": at, "cwd": "/w/big", "sessionId": id,
        });
        let reply = format!("reply {k}: {}", &filler[..reply_bytes]);
        let assistant = serde_json::json!({
            "parentUuid": format!("u-{k}"), "isSidechain": false, "type": "assistant",
            "message": {
                "id": format!("msg_{k}"), "type": "message", "role": "assistant",
                "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": reply}],
                "stop_reason": "end_turn",
                "usage": {"input_tokens": 3, "output_tokens": 5},
            },
            "requestId": format!("req_{k}"), "uuid": format!("a-{k}"), "timestamp": at,
            "cwd": "/w/big", "sessionId": id,
        });
        out.push_str(&format!("{user}\n{assistant}\n"));
        parent = serde_json::json!(format!("a-{k}"));
    }
    out
}

#[test]
fn a_session_too_big_for_one_reply_exports_whole_to_a_file_and_to_stdout() {
    const ID: &str = "7d1e6b0a-5a4c-4c47-9d9b-0c3f1f6e2a11";
    const TURNS: usize = 72;
    let env = Env::new();
    let agents = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let project = agents.path().join(".claude/projects/-w-big");
    std::fs::create_dir_all(&project).unwrap_or_else(|e| panic!("{e}"));
    // 72 MiB of replies: more than the 64 MiB one reply of the daemon's can carry.
    std::fs::write(
        project.join(format!("{ID}.jsonl")),
        big_claude_transcript(ID, TURNS, 1 << 20),
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let weft = |args: &[&str]| {
        with_homes(env.cmd(args), agents.path())
            .output()
            .unwrap_or_else(|e| panic!("{e}"))
    };
    let key = format!("claude:{ID}");
    wait_for("the big session to be indexed", 60, || {
        let out = weft(&["sessions", "--all", "--native", "--json"]);
        let list: Value = serde_json::from_slice(&out.stdout).ok()?;
        list.as_array()?
            .iter()
            .any(|s| s["sessionKey"] == key.as_str() && s["turns"] == TURNS)
            .then_some(())
    });

    let file = env.work.path().join("big.json");
    // What was there stays until the export is whole.
    std::fs::write(&file, "old").unwrap_or_else(|e| panic!("{e}"));
    let out = weft(&[
        "sessions", "export", &key, "--format", "json", "-o", "big.json",
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let bytes = std::fs::read(&file).unwrap_or_else(|e| panic!("{e}"));
    assert!(bytes.len() > 72 << 20, "{} bytes", bytes.len());
    let doc: Value = serde_json::from_slice(&bytes).unwrap_or_else(|e| panic!("{e}"));
    let turns = doc["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("no turns"));
    assert_eq!(turns.len(), TURNS);
    for (i, t) in turns.iter().enumerate() {
        assert_eq!(t["prompt"], format!("big ask {}", i + 1));
        let text = t["text"].as_str().unwrap_or_default();
        assert!(
            text.starts_with(&format!("reply {}: lorem", i + 1)),
            "turn {i}"
        );
        assert!(text.len() > 1 << 20, "turn {i}: {} bytes", text.len());
    }
    // Nothing of the write is left beside it.
    let names: Vec<String> = std::fs::read_dir(env.work.path())
        .unwrap_or_else(|e| panic!("{e}"))
        .flatten()
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".part")), "{names:?}");

    // To stdout, through the daemon's file: the same turns, in order.
    let md = weft(&["sessions", "export", &key]);
    assert!(
        md.status.success(),
        "{}",
        String::from_utf8_lossy(&md.stderr)
    );
    assert!(md.stdout.len() > 72 << 20, "{} bytes", md.stdout.len());
    let md = String::from_utf8_lossy(&md.stdout);
    let needles: Vec<String> = (1..=TURNS).map(|k| format!("## Turn {k} ")).collect();
    assert_in_order(&md, &needles.iter().map(String::as_str).collect::<Vec<_>>());

    // A failed export leaves the file as it was.
    let out = weft(&["sessions", "export", "claude:nope", "-o", "big.json"]);
    assert_eq!(out.status.code(), Some(2));
    assert_eq!(
        std::fs::metadata(&file).map(|m| m.len()).ok(),
        Some(bytes.len() as u64)
    );

    // A folder that is not there: a clear error, nothing written.
    let out = weft(&["sessions", "export", &key, "-o", "no/such/dir/x.md"]);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("no such folder"), "{stderr}");
}
