//! An image attached to a prompt reaches the model as an image in each protocol's own
//! wire shape (Messages `image` block, Responses `input_image`, Chat `image_url`,
//! Gemini `inlineData`), scaled to the vendors' limits; another file is named by path;
//! the image is kept in the session, so a later turn — even on another protocol —
//! replays it, and a compaction summarizes it as `[image: name]`.

use base64::Engine;
use serde_json::{json, Value};
use weft_testkit::anthropic::when;
use weft_testkit::{AnthropicServer, GeminiServer, ResponsesServer, Script, Turn};

use super::support::{anthropic, assert_notice, driver, endpoint_env, run_turn, Dirs};

/// A 2000 x 1000 PNG (fitted: a 1568 x 784 JPEG) and a text file, in the workspace.
fn attachments(dirs: &Dirs) -> (std::path::PathBuf, std::path::PathBuf) {
    let work = dirs.work();
    let shot = work.join("shot.png");
    image::RgbImage::from_fn(2000, 1000, |x, y| {
        image::Rgb([200, (x % 256) as u8, (y % 256) as u8])
    })
    .save(&shot)
    .unwrap();
    let notes = work.join("notes.md");
    std::fs::write(&notes, "# notes\n").unwrap();
    (shot, notes)
}

/// The pixel size of a base64 image.
fn size_of(b64: &str) -> (u32, u32) {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(b64)
        .unwrap();
    let img = image::load_from_memory(&bytes).unwrap();
    (img.width(), img.height())
}

/// The base64 tail of a `data:` URL, after checking its MIME type.
fn data_url_tail<'a>(url: &'a str, mime: &str) -> &'a str {
    let prefix = format!("data:{mime};base64,");
    url.strip_prefix(&prefix)
        .unwrap_or_else(|| panic!("not a {mime} data URL: {}", &url[..url.len().min(60)]))
}

/// True when `text` (a JSON string) names the attached file by its path.
fn names(text: &Value, file: &std::path::Path) -> bool {
    text.as_str().unwrap().contains(&file.display().to_string())
}

/// One turn asking about a screenshot and a notes file, answered "red"; the dirs
/// stay alive with the caller so the server's recorded request can be read.
async fn ask_about_the_picture(env: &[(String, String)]) -> (Dirs, std::path::PathBuf) {
    let dirs = Dirs::new();
    let (shot, notes) = attachments(&dirs);
    let mut input = dirs.input(env, "what is in the picture?", None);
    input.attachments = vec![shot, notes.clone()];
    let (r, snap, _) = run_turn(&driver(), input).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.text, "red");
    (dirs, notes)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn anthropic_messages_gets_a_base64_image_block() {
    let (server, env) =
        anthropic(Script::new().default_reply(Turn::text_reply("red")), "auto").await;
    let (_dirs, notes) = ask_about_the_picture(&env).await;
    let req = &server.messages_requests()[0];
    let user = req.messages().last().unwrap().clone();
    assert_eq!(user["role"], "user");
    let content = user["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "text");
    let text = content[0]["text"].as_str().unwrap();
    assert!(text.contains(&format!("- {}", notes.display())), "{text}");
    assert!(!text.contains("shot.png"), "an image is not listed: {text}");
    let image = &content[1];
    assert_eq!(image["type"], "image", "{user}");
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/jpeg");
    assert_eq!(
        size_of(image["source"]["data"].as_str().unwrap()),
        (1568, 784)
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_responses_gets_an_input_image_data_url() {
    use weft_testkit::openai::{Script, Turn};
    let server = ResponsesServer::start(Script::new().default_reply(Turn::text_reply("red")))
        .await
        .unwrap();
    let env = endpoint_env("openai-responses", &server.v1_url(), "auto");
    let (_dirs, notes) = ask_about_the_picture(&env).await;
    let req = &server.responses_requests()[0];
    let message = req
        .input()
        .iter()
        .rfind(|i| i["type"] == "message" && i["role"] == "user")
        .unwrap()
        .clone();
    let content = message["content"].as_array().unwrap();
    assert_eq!(content[0]["type"], "input_text", "{message}");
    assert!(names(&content[0]["text"], &notes));
    assert_eq!(content[1]["type"], "input_image", "{message}");
    let url = content[1]["image_url"].as_str().unwrap();
    assert_eq!(size_of(data_url_tail(url, "image/jpeg")), (1568, 784));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn openai_chat_gets_an_image_url_content_part() {
    use weft_testkit::chat::{ChatServer, Script, Turn};
    let server = ChatServer::start(Script::new().default_reply(Turn::text_reply("red")))
        .await
        .unwrap();
    let env = endpoint_env("openai-chat", &server.v1_url(), "auto");
    let (_dirs, notes) = ask_about_the_picture(&env).await;
    let req = &server.chat_requests()[0];
    let user = req.messages().last().unwrap().clone();
    assert_eq!(user["role"], "user");
    let parts = user["content"].as_array().unwrap();
    assert_eq!(parts[0]["type"], "text", "{user}");
    assert!(names(&parts[0]["text"], &notes));
    assert_eq!(parts[1]["type"], "image_url", "{user}");
    let url = parts[1]["image_url"]["url"].as_str().unwrap();
    assert_eq!(size_of(data_url_tail(url, "image/jpeg")), (1568, 784));
    // A message without an image stays a plain string (what every compatible server takes).
    assert!(
        req.messages()[0]["content"].is_string(),
        "{:?}",
        req.messages()[0]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gemini_gets_inline_data() {
    use weft_testkit::gemini::{Script, Turn};
    let server = GeminiServer::start(Script::new().default_reply(Turn::text_reply("red")))
        .await
        .unwrap();
    let env = endpoint_env("gemini", &server.base_url(), "auto");
    let (_dirs, notes) = ask_about_the_picture(&env).await;
    let req = &server.main_requests()[0];
    let user = req.contents().last().unwrap().clone();
    assert_eq!(user["role"], "user");
    let parts = user["parts"].as_array().unwrap();
    assert!(names(&parts[0]["text"], &notes));
    let inline = &parts[1]["inlineData"];
    assert_eq!(inline["mimeType"], "image/jpeg", "{user}");
    assert_eq!(size_of(inline["data"].as_str().unwrap()), (1568, 784));
}

/// The image is stored with the session: the next turn, on another protocol and a new
/// driver (a new daemon), still shows it to the model.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_stored_image_replays_on_a_later_turn_and_another_protocol() {
    let anthropic = AnthropicServer::start(Script::new().default_reply(Turn::text_reply("red")))
        .await
        .unwrap();
    let dirs = Dirs::new();
    let (shot, _) = attachments(&dirs);
    let env = endpoint_env("anthropic-messages", &anthropic.base_url(), "auto");
    let mut input = dirs.input(&env, "what is in the picture?", None);
    input.attachments = vec![shot];
    let (r, _, _) = run_turn(&driver(), input).await;
    assert!(r.ok, "{r:?}");
    let id = r.session_id.unwrap();

    use weft_testkit::gemini::{Script as GScript, Turn as GTurn};
    let gemini = GeminiServer::start(GScript::new().default_reply(GTurn::text_reply("still red")))
        .await
        .unwrap();
    let env = endpoint_env("gemini", &gemini.base_url(), "auto");
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "and its colour?", Some(&id))).await;
    assert!(r.ok, "{r:?}");
    assert_eq!(snap.text, "still red");
    let contents = gemini.main_requests()[0].contents().to_vec();
    let first = &contents[0];
    assert_eq!(first["role"], "user");
    let inline = first["parts"]
        .as_array()
        .unwrap()
        .iter()
        .find_map(|p| p.get("inlineData"))
        .unwrap_or_else(|| panic!("no image replayed: {first}"));
    assert_eq!(size_of(inline["data"].as_str().unwrap()), (1568, 784));
}

/// Compaction asks for a text summary: the image in the summarized part goes as
/// `[image: shot.png]`, and the request after it carries the summary, not the image.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn compaction_summarizes_an_image_by_name() {
    let script = Script::new()
        .rule(when::no_tools(), Turn::text_reply("SUMMARY: a red picture"))
        .turn(Turn::text_reply("red"))
        .turn(
            Turn::new()
                .tool_use("l", "ls", json!({"path": "."}))
                .usage(9000, 100),
        )
        .default_reply(Turn::text_reply("finished"));
    let (server, mut env) = anthropic(script, "auto").await;
    env.push(("WEFT_NATIVE_CONTEXT_WINDOW".into(), "10000".into()));
    let dirs = Dirs::new();
    let (shot, _) = attachments(&dirs);
    let d = driver();
    let mut input = dirs.input(&env, "what is in the picture?", None);
    input.attachments = vec![shot];
    let (r, _, _) = run_turn(&d, input).await;
    assert!(r.ok, "{r:?}");
    let id = r.session_id.unwrap();
    let (r, snap, _) = run_turn(&d, dirs.input(&env, "now list the files", Some(&id))).await;
    assert!(r.ok, "{r:?}");
    assert_notice(&snap, "compacted");
    let reqs = server.messages_requests();
    let has_image = |body: &Value| {
        body["messages"]
            .as_array()
            .into_iter()
            .flatten()
            .flat_map(|m| m["content"].as_array().cloned().unwrap_or_default())
            .any(|b| b["type"] == "image")
    };
    let summary = reqs
        .iter()
        .find(|r| r.tool_names().is_empty())
        .expect("a summary request");
    assert!(
        !has_image(&summary.body),
        "the summary request is text only"
    );
    assert!(
        summary.all_text().contains("[image: shot.png]"),
        "{}",
        summary.all_text()
    );
    let last = reqs.last().unwrap();
    assert!(!has_image(&last.body));
    assert!(last.all_text().contains("SUMMARY: a red picture"));
}
