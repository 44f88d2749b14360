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
