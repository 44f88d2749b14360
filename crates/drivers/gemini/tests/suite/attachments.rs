//! An image attached to a prompt reaches the real `gemini`'s model request as inline
//! image data (ACP image content, the CLI's `promptCapabilities.image`); the slash
//! commands its ACP side announces are the snapshot's.

use image::{Rgb, RgbImage};
use serde_json::json;
use weft_kernel::AgentDriver;
use weft_testkit::gemini::{Script, Turn};
use weft_testkit::GeminiServer;

use super::support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_attached_image_reaches_the_model_as_inline_data() {
    let Some(_) = gemini_bin() else { return };
    let server =
        GeminiServer::start(Script::new().default_reply(Turn::text_reply("Blue stripes.")))
            .await
            .unwrap();
    let h = Home::new(json!({}));
    let img = h.workdir().join("stripes.png");
    RgbImage::from_fn(4000, 1000, |x, _| {
        Rgb([0, 0, if x % 20 < 10 { 255 } else { 40 }])
    })
    .save(&img)
    .unwrap();
    let d = driver();
    let sink = TestSink::new();
    let mut input = h.input("gemini:img", "what is this?", &server.base_url());
    input.attachments = vec![img];
    let (r, snap) = run(&d, input, &sink).await;
    assert!(r.ok, "{r:?} {snap:#?}");
    let reqs = server.generate_requests();
    let inline: Vec<serde_json::Value> = reqs
        .iter()
        .flat_map(|r| r.contents().to_vec())
        .filter(|c| c["role"] == "user")
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("inlineData").is_some())
        .collect();
    assert!(
        !inline.is_empty(),
        "no inline image in {} requests",
        reqs.len()
    );
    let data = &inline[0]["inlineData"];
    assert_eq!(data["mimeType"], "image/jpeg");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(data["data"].as_str().unwrap())
        .unwrap();
    let sent = image::load_from_memory(&bytes).unwrap();
    assert_eq!((sent.width(), sent.height()), (3072, 768));
    // Its ACP side's available_commands_update is the snapshot's command list. Gemini
    // announces them a moment after session/new: on a loaded machine after the first
    // turn ended, when the next turn's snapshot gets them.
    let snap = if snap.commands.is_empty() {
        let sink = TestSink::new();
        let (r, next) = run(
            &d,
            h.input("gemini:img", "and now?", &server.base_url()),
            &sink,
        )
        .await;
        assert!(r.ok, "{r:?}");
        next
    } else {
        snap
    };
    for name in ["init", "about", "memory"] {
        assert!(
            snap.commands.iter().any(|c| c.name == name),
            "no /{name} in {:?}",
            snap.commands
        );
    }
    d.shutdown().await;
}

/// A resumed turn runs the headless CLI, which expands `@path` itself but skips a path
/// outside its workspace without a word: an image attached from another folder still
/// reaches the model, fitted to Gemini's 3072 px.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_from_another_folder_reaches_a_resumed_headless_turn_fitted() {
    let Some(_) = gemini_bin() else { return };
    let script = Script::new()
        .turn(Turn::text_reply("Noted."))
        .default_reply(Turn::text_reply("Blue stripes."));
    let server = GeminiServer::start(script).await.unwrap();
    let h = Home::new(json!({}));
    let d = driver();
    let (r1, _) = run(
        &d,
        h.input("gemini:img2", "Hello.", &server.base_url()),
        &TestSink::new(),
    )
    .await;
    assert!(r1.ok, "{r1:?}");
    d.shutdown().await;

    let elsewhere = tempfile::tempdir().unwrap();
    let img = elsewhere.path().join("stripes.png");
    RgbImage::from_fn(4000, 1000, |x, _| {
        Rgb([0, 0, if x % 20 < 10 { 255 } else { 40 }])
    })
    .save(&img)
    .unwrap();
    let d2 = driver();
    let mut input = h.input("gemini:img2", "what is this?", &server.base_url());
    input.session_id = r1.session_id.clone();
    input.attachments = vec![img.clone()];
    // The headless rail reads attachments its own way (`@path`s): that is what is tried.
    input
        .env
        .push(("WEFT_GEMINI_RESUME".into(), "headless".into()));
    let (r2, snap) = run(&d2, input, &TestSink::new()).await;
    assert!(r2.ok, "{r2:?} {snap:#?}");
    assert!(
        snap.notices.iter().any(|n| n.contains("--resume")),
        "not a headless turn: {:?}",
        snap.notices
    );
    let last = server.generate_requests().pop().unwrap();
    let inline: Vec<serde_json::Value> = last
        .contents()
        .iter()
        .filter(|c| c["role"] == "user")
        .flat_map(|c| c["parts"].as_array().cloned().unwrap_or_default())
        .filter(|p| p.get("inlineData").is_some())
        .collect();
    assert!(!inline.is_empty(), "no inline image in {last:?}");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inline[0]["inlineData"]["data"].as_str().unwrap())
        .unwrap();
    let sent = image::load_from_memory(&bytes).unwrap();
    assert_eq!((sent.width(), sent.height()), (3072, 768));
    assert!(img.exists(), "the user's own file stays where it was");
}
