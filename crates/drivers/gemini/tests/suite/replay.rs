//! Recorded headless output and session files (captured from gemini-cli 0.61.0),
//! asserting whole snapshots.

use weft_agent_spec::sessions::{summary, NativeSessions};
use weft_gemini::sessions;
use weft_gemini::stream::{Outcome, StreamNormalizer};
use weft_protocol::{Accumulator, Phase, UniversalSnapshot};

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!(
        "{}/tests/fixtures/{name}",
        env!("CARGO_MANIFEST_DIR")
    ))
    .unwrap()
}

fn replay(text: &str) -> (UniversalSnapshot, StreamNormalizer) {
    let mut norm = StreamNormalizer::new();
    let mut acc = Accumulator::new(UniversalSnapshot {
        phase: Phase::Streaming,
        agent: "gemini".into(),
        ..Default::default()
    });
    for line in text.lines() {
        let mut out = Vec::new();
        norm.line(line, &mut out);
        for e in &out {
            acc.apply(e, 0);
        }
    }
    acc.finish(None, false, 0);
    (acc.into_snapshot(), norm)
}

#[test]
fn headless_tool_turn() {
    let (snap, norm) = replay(&fixture("sample_stream_tool.jsonl"));
    assert_eq!(norm.outcome, Some(Outcome::Success));
    insta::assert_json_snapshot!(snap);
}

#[test]
fn bad_lines_are_skipped_and_a_failed_result_is_an_error() {
    let text = "not json at all\n\
        {\"type\":\"init\",\"session_id\":\"s-1\",\"model\":\"auto\"}\n\
        {\"type\":\"brand_new\",\"x\":1}\n\
        {\"type\":\"brand_new\",\"x\":2}\n\
        {\"type\":\"message\",\"role\":\"assistant\",\"content\":\"half\",\"delta\":true}\n\
        {\"type\":\"tool_use\",\"tool_name\":\"read_file\",\"tool_id\":\"t1\",\"parameters\":{\"file_path\":\"a.txt\"}}\n\
        {\"type\":\"tool_result\",\"tool_id\":\"t1\",\"status\":\"error\",\"error\":{\"type\":\"tool_not_registered\",\"message\":\"Tool not found\"}}\n\
        {\"type\":\"error\",\"severity\":\"warning\",\"message\":\"Loop detected\"}\n\
        {\"type\":\"error\",\"severity\":\"error\",\"message\":\"Quota exceeded\"}\n\
        {\"type\":\"result\",\"status\":\"error\",\"stats\":{\"input_tokens\":3,\"output_tokens\":1}}\n";
    let (snap, norm) = replay(text);
    assert_eq!(norm.outcome, Some(Outcome::Failed("Quota exceeded".into())));
    insta::assert_json_snapshot!(snap);
}

#[test]
fn the_session_file_lists_and_gives_tool_output() {
    let home = tempfile::tempdir().unwrap();
    let gemini = home.path().join(".gemini");
    let chats = gemini.join("tmp/work/chats");
    std::fs::create_dir_all(&chats).unwrap();
    std::fs::write(
        chats.join("session-2026-11-30T03-08-6f1fd193.jsonl"),
        fixture("chat_file_example.jsonl"),
    )
    .unwrap();
    // An empty session (only its header) is not listed.
    std::fs::write(
        chats.join("session-2026-11-30T03-09-00000000.jsonl"),
        "{\"sessionId\":\"00000000-0000\",\"lastUpdated\":\"2026-11-30T03:09:00.000Z\",\"kind\":\"main\"}\n",
    )
    .unwrap();
    std::fs::write(
        gemini.join("projects.json"),
        r#"{"projects":{"/home/dev/probe/gemini/work":"work"}}"#,
    )
    .unwrap();
    // The session library's reader: the chat with its folder and title, the header-only
    // file without a turn.
    let reader = weft_gemini::native_sessions::GeminiSessions;
    let mut all: Vec<_> = sessions::session_files(&gemini)
        .into_iter()
        .filter(|(p, _)| reader.owns(&gemini, p))
        .filter_map(|(p, _)| summary(&reader, &gemini, &p))
        .filter(|m| m.turns > 0)
        .collect();
    assert_eq!(all.len(), 1, "{all:#?}");
    let s = all.remove(0);
    assert_eq!(
        s.native_id.as_deref(),
        Some("6f1fd193-c4e2-4471-acd0-fc646b5f1f76")
    );
    assert_eq!(s.workdir.as_deref(), Some("/home/dev/probe/gemini/work"));
    assert_eq!(s.title().0, "USE_TOOL please");
    assert_eq!(s.updated_at, 1796008118791);
    assert_eq!(s.messages, 7);
    let results = sessions::tool_results(&gemini, "6f1fd193-c4e2-4471-acd0-fc646b5f1f76");
    let r = &results["run_shell_command__run_shell_command_1796008098165_0"];
    assert!(r.ok);
    assert_eq!(r.text, "hi-from-gemini-tool");
    assert_eq!(
        r.input,
        Some(serde_json::json!({"command": "echo hi-from-gemini-tool", "description": "say hi"}))
    );
    assert_eq!(
        sessions::shell_exit_code("Output: x\nExit Code: 3\nProcess Group PGID: 1"),
        Some(3)
    );
}
