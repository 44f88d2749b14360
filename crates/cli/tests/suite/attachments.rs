//! `weft run --attach` through the built binary and its daemon: a relative path is
//! attached by its absolute one and listed in the turn's snapshot; a file that claims
//! to be an image but is not, and a 200 MB file, are refused with the reason; an image
//! attached to a turn of Weft's own agent reaches its model's request as an image;
//! `weft steer --attach` sends files with a steer the same way.

use super::support::{wait_for, Env};

#[test]
fn attachments_are_listed_and_bad_ones_refused_with_the_reason() {
    let env = Env::new();
    let work = env.real_work();
    std::fs::write(work.join("notes.md"), "# notes\n").unwrap_or_else(|e| panic!("{e}"));
    let (code, v, stderr) = env.json(&["run", "--json", "--attach", "notes.md", "hi"]);
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(
        v["snapshot"]["attachments"],
        serde_json::json!([work.join("notes.md").display().to_string()])
    );

    std::fs::write(work.join("fake.png"), "plain text, not pixels")
        .unwrap_or_else(|e| panic!("{e}"));
    let out = env.weft(&["run", "--attach", "fake.png", "look at it"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(stderr.contains("fake.png is not an image"), "{stderr}");

    let huge = std::fs::File::create(work.join("huge.bin")).unwrap_or_else(|e| panic!("{e}"));
    huge.set_len(200 * 1024 * 1024)
        .unwrap_or_else(|e| panic!("{e}"));
    let out = env.weft(&["run", "--attach", "huge.bin", "read it"]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(
        stderr.contains("is 209715200 bytes; the limit is 33554432 bytes (32 MiB)"),
        "{stderr}"
    );
}

/// `weft run --agent native --attach shot.png` against the scripted Anthropic server:
/// the model's request carries the image as a base64 `image` block and the other file by
/// path; a broken image and an oversized file are refused for the native agent too,
/// before any request.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_image_attached_to_a_native_turn_reaches_the_model_as_an_image() {
    use weft_testkit::{AnthropicServer, Script, Turn};
    let server = AnthropicServer::start(Script::new().default_reply(Turn::text_reply("a square")))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let env = Env::new();
    let work = env.real_work();
    image::RgbImage::from_fn(64, 32, |x, _| image::Rgb([200, (x * 4) as u8, 0]))
        .save(work.join("shot.png"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(work.join("notes.md"), "# notes\n").unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(work.join("fake.png"), "plain text, not pixels")
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::File::create(work.join("huge.bin"))
        .and_then(|f| f.set_len(200 * 1024 * 1024))
        .unwrap_or_else(|e| panic!("{e}"));
    let base = server.base_url();
    let run = move |args: &[&str]| {
        let mut cmd = env.cmd(args);
        cmd.env("WEFT_NATIVE_PROTOCOL", "anthropic-messages")
            .env("WEFT_NATIVE_BASE_URL", &base)
            .env("WEFT_NATIVE_API_KEY", "sk-test")
            .env("WEFT_NATIVE_MODEL", "scripted-model")
            .env("WEFT_NATIVE_PERMISSION", "auto");
        cmd.output().unwrap_or_else(|e| panic!("run weft: {e}"))
    };
    let env_and_runs = tokio::task::spawn_blocking(move || {
        let ok = run(&[
            "run",
            "--agent",
            "native",
            "--json",
            "--attach",
            "shot.png",
            "--attach",
            "notes.md",
            "what is in the picture?",
        ]);
        let fake = run(&["run", "--agent", "native", "--attach", "fake.png", "look"]);
        let huge = run(&[
            "run", "--agent", "native", "--attach", "huge.bin", "read it",
        ]);
        (ok, fake, huge)
    })
    .await
    .unwrap_or_else(|e| panic!("{e}"));
    let (ok, fake, huge) = env_and_runs;
    let stdout = String::from_utf8_lossy(&ok.stdout);
    assert!(
        ok.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&ok.stderr)
    );
    let v: serde_json::Value =
        serde_json::from_str(stdout.trim()).unwrap_or_else(|e| panic!("{e}: {stdout}"));
    assert_eq!(v["snapshot"]["text"], "a square", "{v}");
    assert_eq!(
        v["snapshot"]["attachments"],
        serde_json::json!([
            work.join("shot.png").display().to_string(),
            work.join("notes.md").display().to_string()
        ])
    );
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 1, "the refused prompts reached no model");
    let user = reqs[0]
        .messages()
        .last()
        .cloned()
        .unwrap_or_else(|| panic!("no messages"));
    let content = user["content"].as_array().cloned().unwrap_or_default();
    let image = content
        .iter()
        .find(|b| b["type"] == "image")
        .unwrap_or_else(|| panic!("no image block in {user}"));
    assert_eq!(image["source"]["type"], "base64");
    assert_eq!(image["source"]["media_type"], "image/png");
    // Small enough to go byte for byte: the PNG's own signature, base64-encoded.
    assert!(
        image["source"]["data"]
            .as_str()
            .is_some_and(|d| d.starts_with("iVBORw0KGgo")),
        "{image}"
    );
    let text = reqs[0].last_user_text();
    assert!(
        text.contains(&format!("- {}", work.join("notes.md").display())),
        "{text}"
    );
    let stderr = String::from_utf8_lossy(&fake.stderr);
    assert!(!fake.status.success());
    assert!(stderr.contains("fake.png is not an image"), "{stderr}");
    let stderr = String::from_utf8_lossy(&huge.stderr);
    assert!(!huge.status.success());
    assert!(
        stderr.contains("is 209715200 bytes; the limit is 33554432 bytes (32 MiB)"),
        "{stderr}"
    );
}

/// `weft steer KEY --attach FILE` (relative paths, repeatable) sends the files with the
/// steer: into echo's running turn (which names what came with a steer), or with the
/// steer as the next turn if the turn ended first. A bad attachment is refused with the
/// reason and nothing is sent.
#[test]
fn steer_takes_attachments_like_run() {
    let env = Env::new();
    let work = env.real_work();
    std::fs::write(work.join("notes.md"), "# notes\n").unwrap_or_else(|e| panic!("{e}"));
    image::RgbImage::from_fn(16, 16, |x, _| image::Rgb([0, (x * 8) as u8, 0]))
        .save(work.join("shot.png"))
        .unwrap_or_else(|e| panic!("{e}"));
    std::fs::write(work.join("fake.png"), "plain text, not pixels")
        .unwrap_or_else(|e| panic!("{e}"));
    let (_, detached, _) = env.json(&["run", "--detach", "slow please"]);
    let key = detached["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    wait_for("the turn to stream", 10, || {
        let (_, status, _) = env.json(&["daemon", "status", "--json"]);
        (status["busySessions"] == 1).then_some(())
    });
    let bad = env.weft(&["steer", &key, "--attach", "fake.png", "look"]);
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("fake.png is not an image"), "{stderr}");
    let steer = env.weft(&[
        "steer", &key, "--attach", "notes.md", "--attach", "shot.png", "look", "at", "these",
    ]);
    assert_eq!(steer.status.code(), Some(0));
    let said = String::from_utf8_lossy(&steer.stderr).to_string();
    let (code, last, _) = env.json(&["wait", &key, "--json"]);
    assert_eq!(code, 0, "{last}");
    let text = last["text"].as_str().unwrap_or_default();
    assert!(
        !text.contains("Steered: \"look\""),
        "the refused steer was sent: {text}"
    );
    if said.contains("sent into the running turn") {
        assert!(
            text.contains("Steered: \"look at these\" with notes.md, shot.png"),
            "{last}"
        );
    } else {
        assert!(said.contains("queued as the next turn"), "{said}");
        assert_eq!(last["prompt"], "look at these", "{last}");
        assert_eq!(
            last["attachments"],
            serde_json::json!([
                work.join("notes.md").display().to_string(),
                work.join("shot.png").display().to_string()
            ])
        );
    }
}
