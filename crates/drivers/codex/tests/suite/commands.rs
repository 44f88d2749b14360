//! Codex's slash commands on the real codex: offered in the `/` menu, `/compact` and
//! `/review` run as codex's own turns, `/status` and `/model` are answered, a command
//! of codex's terminal UI is explained; none reaches the model as text.

use weft_codex::{CodexDriver, CODEX_ID};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_protocol::DriverEvent;
use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{Script, Turn};

use super::support::{fast_config, new_sink, require_codex, run_turn, CodexModel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn slash_commands_run_as_codex_commands() {
    if require_codex().is_none() {
        return;
    }
    let model =
        CodexModel::start(Script::new().default_reply(Turn::text_reply("Nothing to flag."))).await;
    let work = tempfile::tempdir().unwrap();
    let d = CodexDriver::with_config(fast_config());
    let input = |prompt: &str| AgentTurnInput {
        session_key: format!("{CODEX_ID}:commands"),
        task_id: prompt.into(),
        prompt: prompt.into(),
        workdir: work.path().canonicalize().unwrap(),
        env: model.env(),
        ..Default::default()
    };
    let (first, _) = run_turn(&d, input("Hello there"), &new_sink()).await;
    assert!(first.ok, "{first:?}");
    let thread = first.session_id.clone().unwrap();
    let resumed = |prompt: &str| AgentTurnInput {
        session_id: Some(thread.clone()),
        ..input(prompt)
    };

    let sink = new_sink();
    let (r, snap) = run_turn(&d, resumed("/compact"), &sink).await;
    assert!(r.ok, "{r:?} {snap:#?}");
    let offered: Vec<String> = sink
        .events
        .lock()
        .iter()
        .find_map(|e| match e {
            DriverEvent::Commands { commands } => {
                Some(commands.iter().map(|c| c.name.clone()).collect())
            }
            _ => None,
        })
        .unwrap_or_default();
    for name in ["compact", "review", "status", "model", "approvals"] {
        assert!(offered.iter().any(|o| o == name), "{offered:?}");
    }
    let compacted = sink.events.lock().iter().any(|e| {
        matches!(e, DriverEvent::Notice { text } if text.contains("compacted"))
            || matches!(e, DriverEvent::Activity { text } if text.contains("compacting"))
    });
    assert!(compacted, "{:#?}", sink.events.lock());

    let (r, snap) = run_turn(&d, resumed("/review check the notes"), &new_sink()).await;
    assert!(r.ok, "{r:?} {snap:#?}");
    assert!(snap.text.contains("Nothing to flag."), "{snap:#?}");

    let (r, snap) = run_turn(&d, resumed("/status"), &new_sink()).await;
    assert!(r.ok, "{r:?}");
    assert!(snap.text.contains(&thread), "{}", snap.text);
    assert!(snap.text.contains("approval policy"), "{}", snap.text);

    let (r, snap) = run_turn(&d, resumed("/model gpt-other"), &new_sink()).await;
    assert!(
        r.ok && snap.text.contains("did not change it"),
        "{}",
        snap.text
    );

    let (r, _) = run_turn(&d, resumed("/init"), &new_sink()).await;
    assert!(!r.ok, "{r:?}");
    assert!(r.error.unwrap_or_default().contains("terminal UI"));

    let texts = model.requests().join("\n");
    for line in ["/compact", "/review", "/status", "/model", "/init"] {
        assert!(!texts.contains(line), "{line} reached the model: {texts}");
    }
    d.shutdown().await;
}
