//! An image attached to a prompt reaches the real `claude`'s model request as an
//! image block, scaled to Anthropic's limits.

use image::{Rgb, RgbImage};
use weft_claude::ClaudeDriver;
use weft_kernel::driver::AgentDriver;
use weft_testkit::{Script, Turn};

use super::support::*;

#[tokio::test]
async fn an_attached_image_reaches_the_model_as_an_image_block() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(Script::new().turn(Turn::text_reply("A red square."))).await;
    let big = env.workdir().join("shot.png");
    RgbImage::from_fn(3000, 1500, |x, _| Rgb([200, (x % 256) as u8, 0]))
        .save(&big)
        .unwrap();
    let notes = env.workdir().join("notes.md");
    std::fs::write(&notes, "# notes\n").unwrap();
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    let mut input = env.input("a1", "what is in the picture?");
    input.attachments = vec![big.clone(), notes.clone()];
    let (result, snap) = run_turn(&driver, input, &sink).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "A red square.");
    let reqs = env.server.messages_requests();
    let user = reqs[0]
        .messages()
        .iter()
        .rev()
        .find(|m| m["role"] == "user")
        .unwrap()
        .clone();
    let blocks = user["content"].as_array().unwrap();
    let image = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block in {user}"));
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/jpeg");
    use base64::Engine;
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(image["source"]["data"].as_str().unwrap())
        .unwrap();
    let sent = image::load_from_memory(&bytes).unwrap();
    assert_eq!((sent.width(), sent.height()), (1568, 784));
    // The other file is named for the agent to read; the image is not.
    let text = reqs[0].last_user_text();
    assert!(text.contains(&format!("- {}", notes.display())), "{text}");
    assert!(!text.contains("shot.png"), "{text}");
    driver.shutdown().await;
}

/// `@path` in the prompt text (the composer's mention) is resolved by the CLI itself in
/// stream-json mode: the model request carries the file's contents, so Weft sends the
/// mention as typed (docs/mentions.md).
#[tokio::test]
async fn an_at_path_mention_in_the_prompt_reaches_the_model_with_the_file() {
    let Some(_) = claude_bin() else { return };
    let env = ClaudeEnv::start(Script::new().turn(Turn::text_reply("Read it."))).await;
    std::fs::create_dir_all(env.workdir().join("src/deep")).unwrap();
    std::fs::write(
        env.workdir().join("src/deep/quokka.md"),
        "QUOKKA_MARKER_7 lives here\n",
    )
    .unwrap();
    let driver = ClaudeDriver::with_config(fast_config());
    let sink = new_sink();
    let input = env.input("m1", "summarise @src/deep/quokka.md please");
    let (result, snap) = run_turn(&driver, input, &sink).await;
    assert!(result.ok, "{result:?}");
    assert_eq!(snap.text, "Read it.");
    let reqs = env.server.messages_requests();
    let sent = serde_json::to_string(reqs[0].messages()).unwrap();
    assert!(
        sent.contains("summarise @src/deep/quokka.md please"),
        "{sent}"
    );
    assert!(
        sent.contains("QUOKKA_MARKER_7 lives here"),
        "the file's contents: {sent}"
    );
    driver.shutdown().await;
}

/// A steer with an image, sent while a tool runs, reaches the real `claude`'s model
/// request as an image block beside the steer's text (stream-json's user message takes
/// the same blocks as the prompt's); a file attached with it is named in its text.
#[tokio::test]
async fn an_image_attached_to_a_steer_reaches_the_model_as_an_image_block() {
    use std::sync::Arc;
    use std::time::Duration;

    use serde_json::json;
    use tokio_util::sync::CancellationToken;
    use weft_kernel::driver::{DriverContext, Steer};
    use weft_protocol::{permission, InteractionResponse};
    use weft_testkit::anthropic::when;

    let Some(_) = claude_bin() else { return };
    let script = Script::new()
        .turn(Turn::new().text("Sleeping.").tool_use(
            "toolu_si",
            "Bash",
            json!({"command": "sleep 3; echo slept", "description": "slow sleep"}),
        ))
        .rule(
            when::any_text_contains("STEER-IMG"),
            Turn::text_reply("Saw the picture."),
        );
    let env = ClaudeEnv::start(script).await;
    let shot = env.workdir().join("steer-shot.png");
    RgbImage::from_fn(64, 32, |x, _| Rgb([0, 0, (x * 4) as u8]))
        .save(&shot)
        .unwrap();
    let notes = env.workdir().join("steer-notes.md");
    std::fs::write(&notes, "# more notes\n").unwrap();
    let driver = Arc::new(ClaudeDriver::with_config(fast_config()));
    let sink = new_sink();
    sink.answer_with(|_| Some(InteractionResponse::select(permission::ALLOW)));
    let ctx = DriverContext::new(CancellationToken::new(), sink.clone());
    let d = driver.clone();
    let input = env.input("si1", "run the slow tool");
    let run = tokio::spawn(async move { d.run(input, ctx).await });
    assert!(
        sink.wait_for(Duration::from_secs(60), |s| s
            .tool_calls
            .iter()
            .any(|c| c.id == "toolu_si"))
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
    let snap = finish(&sink, &result, false);
    assert!(result.ok, "{result:?} {:?}", snap.notices);
    assert!(snap.text.ends_with("Saw the picture."), "{}", snap.text);
    // The CLI's echo of the message (its image as `[image]`) is matched to the steer.
    assert!(
        snap.notices
            .iter()
            .any(|n| n.contains("injected") || n.contains("queued the steer")),
        "{:?}",
        snap.notices
    );
    let reqs = env.server.messages_requests();
    let steered = reqs
        .iter()
        .flat_map(|r| r.messages().to_vec())
        .find(|m| {
            m["role"] == "user"
                && m["content"].as_array().is_some_and(|blocks| {
                    blocks.iter().any(|b| {
                        b["type"] == "text"
                            && b["text"].as_str().unwrap_or("").contains("STEER-IMG")
                    })
                })
        })
        .unwrap_or_else(|| panic!("no user message carries the steer: {reqs:?}"));
    let blocks = steered["content"].as_array().unwrap();
    let image = blocks
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("the steer came without its image: {steered}"));
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    let text = serde_json::to_string(blocks).unwrap();
    assert!(text.contains(&format!("- {}", notes.display())), "{text}");
    driver.shutdown().await;
}
