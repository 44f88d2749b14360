//! A real Claude Code turn from a phone: the `claude` binary (scripts/setup.sh puts it
//! in .tools/agents) against the testkit's scripted Anthropic server (the main
//! workspace's `scripted_anthropic` example), started by a session from the control
//! room.

use std::path::PathBuf;
use std::process::{Command, Stdio};

use super::harness::World;

/// The scripted server (`WEFT_SCRIPTED_ANTHROPIC`, else the main workspace's debug
/// example) and the `claude` binary (`WEFT_CLAUDE_BIN`, else .tools/agents).
fn parts() -> Result<(PathBuf, PathBuf), String> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join("target"));
    let server = std::env::var_os("WEFT_SCRIPTED_ANTHROPIC")
        .map(PathBuf::from)
        .unwrap_or_else(|| target.join("debug/examples/scripted_anthropic"));
    let claude = std::env::var_os("WEFT_CLAUDE_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| root.join(".tools/agents/node_modules/.bin/claude"));
    if !server.is_file() {
        return Err(format!(
            "no scripted Anthropic server at {} (cargo build -p weft-claude --example scripted_anthropic in the main workspace, or set WEFT_SCRIPTED_ANTHROPIC)",
            server.display()
        ));
    }
    if !claude.exists() {
        return Err(format!(
            "no claude at {} (scripts/setup.sh)",
            claude.display()
        ));
    }
    Ok((server, claude))
}

/// The scripted server, killed when the test ends (also when it fails).
struct Server(std::process::Child);

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_real_claude_turn_streams_into_its_room() {
    let (server, claude) = match parts() {
        Ok(p) => p,
        Err(why) if std::env::var("CI").as_deref() == Ok("true") => panic!("{why}"),
        Err(why) => {
            eprintln!("SKIPPED: {why}");
            return;
        }
    };
    let Some(mut w) = World::new(true).await else {
        return;
    };
    let mut srv = Server(
        Command::new(&server)
            .arg("12")
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("{e}")),
    );
    let url = {
        use std::io::BufRead;
        let out = srv.0.stdout.take().unwrap_or_else(|| panic!("no stdout"));
        let mut line = String::new();
        std::io::BufReader::new(out)
            .read_line(&mut line)
            .unwrap_or_else(|e| panic!("{e}"));
        line.trim().to_string()
    };
    let home = w.dir.path().join("claude-home");
    std::fs::create_dir_all(&home).unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(
        home.join(".claude.json"),
        r#"{"hasCompletedOnboarding":true}"#,
    )
    .unwrap_or_else(|e| panic!("{e}"));
    for (k, v) in [
        ("HOME", home.display().to_string()),
        ("IS_SANDBOX", "1".into()),
        ("ANTHROPIC_BASE_URL", url),
        ("ANTHROPIC_API_KEY", "sk-test".into()),
        ("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1".into()),
        ("WEFT_CLAUDE_BIN", claude.display().to_string()),
    ] {
        w.bot_env.push((k.to_string(), v));
    }
    w.start_bot();
    let control = w.control_room().await;
    let work = w.dir.path().join("work");
    std::fs::create_dir_all(&work).unwrap_or_else(|e| panic!("{e}"));
    w.say(
        &control,
        &format!("new claude {} say the words", work.display()),
    )
    .await;
    let room = w.join_invite().await;
    w.wait_message(&room, "the done message", |t| t.starts_with("✅ Done"))
        .await;
    // What the scripted model made Claude say is in the room, whole.
    let key = w.status()["rooms"]
        .as_array()
        .and_then(|rooms| {
            rooms
                .iter()
                .find(|r| r["roomId"] == room.room_id().as_str())
        })
        .and_then(|r| r["sessionKey"].as_str().map(String::from))
        .unwrap_or_default();
    assert!(key.starts_with("claude:"), "{key}");
    let history = w
        .daemon(weft_protocol::verb::GetHistory {
            session_key: key,
            limit: Some(5),
            before: None,
        })
        .await;
    let turn = history.last().unwrap_or_else(|| panic!("no turn"));
    assert!(turn.error.is_none(), "{:?}", turn.error);
    assert!(!turn.text.trim().is_empty());
    let text = turn.text.clone();
    w.wait_message(&room, "claude's reply", |t| t == text).await;
    drop(srv);
}
