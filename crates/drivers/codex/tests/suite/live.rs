//! A running command's output reaches its tool row while it runs (the real codex):
//! the row shows the latest part of it, however much came before.

use weft_codex::{CodexDriver, CODEX_ID};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_protocol::{DriverEvent, ToolStatus};
use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{when, Script, Turn};

use super::support::{fast_config, new_sink, require_codex, run_turn, CodexModel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_running_command_shows_its_latest_output() {
    if require_codex().is_none() {
        return;
    }
    // More than the finished row keeps (64 KiB) before the line the running row must
    // show; codex 0.171.0 streams none of what a command writes before its first pause.
    let command = "echo started; sleep 0.5; head -c 70000 /dev/zero | tr '\\0' x; \
                   echo; echo live-marker; sleep 2; echo finished";
    let model = CodexModel::start(
        Script::new()
            .turn_when(
                when::user_text_contains("Run it"),
                Turn::new().shell("call_live", command),
            )
            .turn_when(when::tool_output_for("call_live"), Turn::text_reply("Ran.")),
    )
    .await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let sink = new_sink();
    let input = AgentTurnInput {
        session_key: format!("{CODEX_ID}:live"),
        task_id: "t".into(),
        prompt: "Run it".into(),
        workdir: work.path().canonicalize().unwrap(),
        env: model.env(),
        ..Default::default()
    };
    let (result, snap) = run_turn(&d, input, &sink).await;
    assert!(result.ok, "{result:?} {snap:#?}");
    let rows: Vec<(ToolStatus, String)> = sink
        .events
        .lock()
        .iter()
        .filter_map(|e| match e {
            DriverEvent::Tool { call } if call.id == "call_live" => {
                Some((call.status, call.result.clone().unwrap_or_default()))
            }
            _ => None,
        })
        .collect();
    let live = rows.iter().position(|(status, text)| {
        *status == ToolStatus::Running
            && text.ends_with("live-marker\n")
            && text.starts_with("[… ")
            && text.len() < 9 * 1024
    });
    let done = rows
        .iter()
        .position(|(status, _)| *status == ToolStatus::Done);
    let short: Vec<_> = rows
        .iter()
        .map(|(s, t)| (s, t.len(), t.chars().rev().take(20).collect::<String>()))
        .collect();
    assert!(
        live.is_some_and(|l| done.is_some_and(|d| l < d)),
        "no running row with the latest output before the row finished: {short:?}"
    );
    assert!(rows[done.unwrap()].1.contains("started"), "{short:?}");
    d.shutdown().await;
}
