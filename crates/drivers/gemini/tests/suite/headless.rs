//! The headless (resume) path (`WEFT_GEMINI_RESUME=headless`) against a stand-in
//! `gemini`: a shell script printing stream-json, so crashes, bad lines and stop are
//! deterministic.

use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;
use weft_gemini::{Config, GeminiDriver, Resume};

use super::support::*;

fn stand_in(dir: &std::path::Path, body: &str) -> PathBuf {
    let path = dir.join("gemini");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    path
}

fn driver_for(program: PathBuf) -> GeminiDriver {
    let mut spec = weft_gemini::acp_spec();
    spec.command = program.display().to_string();
    spec.bin_env.clear();
    let cfg = Config {
        resume: Resume::Headless,
        stop_grace: Duration::from_millis(500),
        ..Default::default()
    };
    GeminiDriver::with(spec, cfg)
}

#[tokio::test]
async fn a_cli_that_dies_mid_turn_is_a_clear_error_with_the_text_so_far() {
    let h = Home::new(serde_json::json!({}));
    let bin = stand_in(
        h.home.path(),
        r#"echo '{"type":"init","session_id":"s-1","model":"auto"}'
echo 'this is not json'
echo '{"type":"mystery","x":1}'
echo '{"type":"message","role":"assistant","content":"half a ","delta":true}'
echo '{"type":"tool_use","tool_name":"run_shell_command","tool_id":"t1","parameters":{"command":"ls"}}'
echo 'gemini: lost the connection' >&2
exit 4"#,
    );
    let d = driver_for(bin);
    let mut input = h.input("gemini:x", "go on", "http://127.0.0.1:9");
    input.session_id = Some("s-1".into());
    let (r, snap) = run(&d, input, &TestSink::new()).await;
    assert!(!r.ok);
    let err = snap.error.clone().unwrap();
    assert!(err.contains("exit status 4"), "{err}");
    assert!(err.contains("lost the connection"), "{err}");
    assert!(snap.incomplete);
    assert_eq!(snap.text, "half a ");
    assert_eq!(snap.session_id.as_deref(), Some("s-1"));
    assert_eq!(snap.tool_calls[0].status, weft_protocol::ToolStatus::Failed);
}

#[tokio::test]
async fn the_resumed_turn_passes_resume_and_approval_mode() {
    let h = Home::new(serde_json::json!({}));
    let bin = stand_in(
        h.home.path(),
        r#"printf '{"type":"init","session_id":"s-2","model":"auto"}\n'
printf '{"type":"message","role":"assistant","content":"%s","delta":true}\n' "$*"
printf '{"type":"result","status":"success","stats":{"input_tokens":5,"output_tokens":2}}\n'"#,
    );
    let d = driver_for(bin);
    let mut input = h.input("gemini:y", "hello", "http://127.0.0.1:9");
    input.session_id = Some("s-2".into());
    input
        .env
        .push(("WEFT_GEMINI_RESUME_APPROVAL".into(), "auto_edit".into()));
    input.model = Some("gemini-2.5-pro".into());
    let (r, snap) = run(&d, input, &TestSink::new()).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(
        snap.text,
        "-p hello --output-format stream-json --skip-trust --resume s-2 --approval-mode auto_edit --model gemini-2.5-pro"
    );
    assert_eq!(snap.usage.unwrap().input_tokens, Some(5));
}

#[tokio::test]
async fn stop_interrupts_the_headless_cli() {
    // The stand-in would sleep for ten minutes: only the stop ends it in time for
    // `run_with`'s deadline.
    let h = Home::new(serde_json::json!({}));
    let bin = stand_in(
        h.home.path(),
        r#"echo '{"type":"init","session_id":"s-3","model":"auto"}'
echo '{"type":"message","role":"assistant","content":"thinking","delta":true}'
sleep 600"#,
    );
    let d = Arc::new(driver_for(bin));
    let sink = TestSink::new();
    let cancel = CancellationToken::new();
    let mut input = h.input("gemini:z", "go", "http://127.0.0.1:9");
    input.session_id = Some("s-3".into());
    let turn = {
        let (d, sink, cancel) = (d.clone(), sink.clone(), cancel.clone());
        tokio::spawn(async move { run_with(d.as_ref(), input, &sink, cancel).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(10), |s| s.text == "thinking")
            .await
    );
    cancel.cancel();
    let (r, snap) = turn.await.unwrap();
    assert!(
        !r.ok && snap.incomplete && snap.error.is_none(),
        "{snap:#?}"
    );
    assert_eq!(snap.text, "thinking");
}
