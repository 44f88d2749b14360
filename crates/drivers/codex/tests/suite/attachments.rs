//! An image attached to a prompt reaches the real `codex`'s Responses request as an
//! `input_image`, fitted to OpenAI's limits by Weft first.

use image::{Rgb, RgbImage};
use weft_codex::{CodexDriver, CODEX_ID};
use weft_kernel::driver::AgentTurnInput;
use weft_kernel::AgentDriver;
use weft_testkit::conformance::ScriptedModel;
use weft_testkit::openai::{Script, Turn};

use super::support::{fast_config, new_sink, require_codex, run_turn, CodexModel};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_image_reaches_the_model_as_an_input_image() {
    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(Script::new().turn(Turn::text_reply("A gradient."))).await;
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let big = work.path().join("wide.png");
    RgbImage::from_fn(3000, 1500, |x, y| {
        Rgb([(x % 256) as u8, (y % 256) as u8, 90])
    })
    .save(&big)
    .unwrap();
    let d = CodexDriver::with_config(fast_config());
    let input = AgentTurnInput {
        session_key: format!("{CODEX_ID}:img"),
        task_id: "t-img".into(),
        prompt: "describe the picture".into(),
        workdir: work.path().canonicalize().unwrap(),
        env: model.env(),
        state_dir: state.path().to_path_buf(),
        attachments: vec![big],
        ..Default::default()
    };
    let (result, snap) = run_turn(&d, input, &new_sink()).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "A gradient.");
    let reqs = model.server.responses_requests();
    let images: Vec<String> = reqs[0]
        .input()
        .iter()
        .filter(|i| i["role"] == "user")
        .flat_map(|i| i["content"].as_array().cloned().unwrap_or_default())
        .filter(|c| c["type"] == "input_image")
        .filter_map(|c| c["image_url"].as_str().map(String::from))
        .collect();
    assert_eq!(images.len(), 1, "{:?}", reqs[0].input());
    let data = images[0].split_once(";base64,").unwrap().1;
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data)
        .unwrap();
    let sent = image::load_from_memory(&bytes).unwrap();
    assert!(
        sent.width() <= 2048 && sent.height() <= 2048,
        "{}x{}",
        sent.width(),
        sent.height()
    );
    assert_eq!(sent.width(), 2 * sent.height(), "aspect kept");
    // Weft's fitted copy is what codex read.
    let copy = state.path().join("run/attachments/t-img/wide.jpg");
    assert!(copy.is_file(), "{copy:?}");
    d.shutdown().await;
}

/// A steer with an image, sent while a command runs, goes to the real `codex` as
/// `turn/steer` input items (a `localImage` beside the text): the model's next request
/// in the same turn carries it as an `input_image`, and a file sent with it is named.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_attached_to_a_steer_reaches_the_model_as_an_input_image() {
    use std::sync::Arc;
    use std::time::Duration;

    use tokio_util::sync::CancellationToken;
    use weft_kernel::driver::{DriverContext, Steer};
    use weft_protocol::{permission, InteractionResponse};
    use weft_testkit::openai::when;

    if require_codex().is_none() {
        return;
    }
    let model = CodexModel::start(
        Script::new()
            .turn(
                Turn::new()
                    .text("Sleeping.")
                    .shell("call_si", "sleep 3; echo slept"),
            )
            .rule(
                when::any_text_contains("STEER-IMG"),
                Turn::text_reply("Saw the picture."),
            ),
    )
    .await;
    let work = tempfile::tempdir().unwrap();
    let state = tempfile::tempdir().unwrap();
    let shot = work.path().join("steer-shot.png");
    RgbImage::from_fn(64, 32, |x, _| Rgb([0, 0, (x * 4) as u8]))
        .save(&shot)
        .unwrap();
    let notes = work.path().join("steer-notes.md");
    std::fs::write(&notes, "# more notes\n").unwrap();
    let d = Arc::new(CodexDriver::with_config(fast_config()));
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let input = AgentTurnInput {
        session_key: format!("{CODEX_ID}:steer-img"),
        task_id: "t-steer-img".into(),
        prompt: "run the slow command".into(),
        workdir: work.path().canonicalize().unwrap(),
        env: model.env(),
        state_dir: state.path().to_path_buf(),
        ..Default::default()
    };
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let run = {
        let d = d.clone();
        tokio::spawn(async move { d.run(input, ctx).await })
    };
    assert!(
        sink.wait_for(Duration::from_secs(60), |s| s
            .tool_calls
            .iter()
            .any(|c| c.status == weft_protocol::ToolStatus::Running))
            .await
    );
    assert!(sink.steer_with(Steer {
        text: "STEER-IMG: what colour is this?".into(),
        attachments: vec![shot.clone(), notes.clone()],
    }));
    let result = tokio::time::timeout(Duration::from_secs(90), run)
        .await
        .unwrap()
        .unwrap();
    let snap = sink.snapshot();
    assert!(result.ok, "{result:?} {:?}", snap.notices);
    assert!(snap.text.ends_with("Saw the picture."), "{}", snap.text);
    let reqs = model.server.responses_requests();
    let steered = reqs
        .iter()
        .flat_map(|r| r.input().to_vec())
        .find(|i| {
            i["role"] == "user"
                && i["content"].as_array().is_some_and(|c| {
                    c.iter()
                        .any(|p| p["text"].as_str().unwrap_or("").contains("STEER-IMG"))
                })
        })
        .unwrap_or_else(|| panic!("no user input carries the steer"));
    let content = steered["content"].as_array().unwrap();
    assert!(
        content.iter().any(|c| c["type"] == "input_image"),
        "the steer came without its image: {steered}"
    );
    let text = serde_json::to_string(content).unwrap();
    assert!(text.contains(&format!("- {}", notes.display())), "{text}");
    d.shutdown().await;
}
