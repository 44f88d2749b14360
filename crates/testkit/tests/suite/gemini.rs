//! The scripted Gemini server, driven over raw HTTP/1.1.

use std::time::Duration;

use serde_json::{json, Value};
use weft_testkit::gemini::{when, Script, Turn};
use weft_testkit::GeminiServer;

use super::http::{data_events, post};

fn body_json(text: &str) -> Value {
    let body = text.split("\r\n\r\n").nth(1).unwrap();
    serde_json::from_str(body).unwrap()
}

fn request(text: &str) -> Value {
    json!({
        "contents": [
            {"role": "user", "parts": [{"text": "<session_context>ctx</session_context>"}]},
            {"role": "user", "parts": [{"text": text}]}
        ],
        "tools": [{"functionDeclarations": [{"name": "run_shell_command"}, {"name": "read_file"}]}],
        "generationConfig": {"thinkingConfig": {"includeThoughts": true}}
    })
}

const STREAM: &str = "/v1beta/models/gemini-test:streamGenerateContent?alt=sse";

#[tokio::test]
async fn streams_text_thoughts_calls_and_usage_then_records() {
    let script = Script::new()
        .turn(
            Turn::new()
                .thought("hmm")
                .text_chunks(&["Hel", "lo"])
                .function_call("run_shell_command", json!({"command": "echo hi"}))
                .usage(100, 7),
        )
        .turn(Turn::text_reply("second"));
    let server = GeminiServer::start(script).await.unwrap();
    let (status, body, complete) = post(&server.base_url(), STREAM, &request("go")).await;
    assert_eq!(status, 200);
    assert!(complete);
    let evs = data_events(&body);
    let parts: Vec<&Value> = evs
        .iter()
        .flat_map(|e| e["candidates"][0]["content"]["parts"].as_array().unwrap())
        .collect();
    assert_eq!(parts[0], &json!({"text": "hmm", "thought": true}));
    let text: String = parts
        .iter()
        .filter(|p| p["thought"].is_null())
        .filter_map(|p| p["text"].as_str())
        .collect();
    assert_eq!(text, "Hello");
    assert_eq!(
        parts.iter().find_map(|p| p.get("functionCall")).unwrap(),
        &json!({"name": "run_shell_command", "args": {"command": "echo hi"}})
    );
    let last = evs.last().unwrap();
    assert_eq!(last["candidates"][0]["finishReason"], "STOP");
    assert_eq!(last["usageMetadata"]["promptTokenCount"], 100);
    assert_eq!(last["usageMetadata"]["candidatesTokenCount"], 7);
    assert_eq!(last["modelVersion"], "gemini-test");

    let (_, body, _) = post(&server.base_url(), STREAM, &request("again")).await;
    let text: String = data_events(&body)
        .iter()
        .filter_map(|e| e["candidates"][0]["content"]["parts"][0]["text"].as_str())
        .collect();
    assert_eq!(text, "second");

    let reqs = server.main_requests();
    assert_eq!(reqs.len(), 2);
    assert_eq!(reqs[0].last_user_text(), "go");
    assert_eq!(reqs[0].tool_names(), vec!["run_shell_command", "read_file"]);
    assert!(reqs[0].stream);
    assert_eq!(reqs[1].model, "gemini-test");
    assert_eq!(server.queued_turns(), 0);
}

/// The CLI's router quotes the user's prompt: a rule for that prompt must not answer it
/// with text (the CLI would retry it with backoff for over a minute), and stays for the
/// main request.
#[tokio::test]
async fn a_rule_for_a_prompt_leaves_the_json_mode_side_request_that_quotes_it() {
    let script = Script::new().rule_times(
        when::user_text_contains("route me"),
        Turn::text_reply("the rule's reply"),
        1,
    );
    let server = GeminiServer::start(script).await.unwrap();
    let router = json!({
        "contents": [{"role": "user", "parts": [{"text": "route me"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "OBJECT", "properties": {"model_choice": {"type": "STRING"}}}}
    });
    let (_, text, _) = post(
        &server.base_url(),
        "/v1beta/models/gemini-lite:generateContent",
        &router,
    )
    .await;
    let reply = body_json(&text);
    let answer = reply["candidates"][0]["content"]["parts"][0]["text"]
        .as_str()
        .unwrap();
    assert_eq!(
        serde_json::from_str::<Value>(answer).ok(),
        Some(json!({"model_choice": "flash"})),
        "{answer}"
    );
    let (_, text, _) = post(
        &server.base_url(),
        "/v1beta/models/gemini-test:generateContent",
        &request("route me"),
    )
    .await;
    assert_eq!(
        body_json(&text)["candidates"][0]["content"]["parts"][0]["text"],
        "the rule's reply"
    );
}

#[tokio::test]
async fn json_mode_side_requests_never_take_a_turn() {
    let server = GeminiServer::start(Script::new().turn(Turn::text_reply("main")))
        .await
        .unwrap();
    let router = json!({
        "contents": [{"role": "user", "parts": [{"text": "route me"}]}],
        "generationConfig": {"responseMimeType": "application/json", "responseJsonSchema": {
            "type": "OBJECT",
            "properties": {"complexity_reasoning": {"type": "STRING"},
                           "complexity_score": {"type": "INTEGER"}}}}
    });
    let (status, text, _) = post(
        &server.base_url(),
        "/v1beta/models/gemini-lite:generateContent",
        &router,
    )
    .await;
    assert_eq!(status, 200);
    let reply = body_json(&text);
    let answer: Value = serde_json::from_str(
        reply["candidates"][0]["content"]["parts"][0]["text"]
            .as_str()
            .unwrap(),
    )
    .unwrap();
    assert_eq!(
        answer,
        json!({"complexity_reasoning": "simple request", "complexity_score": 10})
    );
    assert_eq!(server.queued_turns(), 1);
    // A non-streamed main request takes the queued turn as one JSON response.
    let (_, text, _) = post(
        &server.base_url(),
        "/v1beta/models/gemini-test:generateContent",
        &request("hi"),
    )
    .await;
    let reply = body_json(&text);
    assert_eq!(
        reply["candidates"][0]["content"]["parts"][0]["text"],
        "main"
    );
    assert_eq!(reply["usageMetadata"]["totalTokenCount"], 15);
    assert_eq!(server.main_requests().len(), 1);
    assert_eq!(server.generate_requests().len(), 2);
}

#[tokio::test]
async fn rules_count_tokens_errors_drops_and_delays() {
    let script = Script::new()
        .rule(
            when::function_response_for("run_shell_command"),
            Turn::text_reply("tool seen"),
        )
        .token_count(42)
        .turn(Turn::status(500))
        .turn(Turn::new().text("partial").then_drop())
        .turn(Turn::dropped())
        .turn(Turn::new().delay(Duration::from_millis(200)).text("late"));
    let server = GeminiServer::start(script).await.unwrap();
    let base = server.base_url();
    let (status, text, _) = post(
        &base,
        "/v1beta/models/gemini-test:countTokens",
        &request("x"),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(body_json(&text), json!({"totalTokens": 42}));

    let (status, text, _) = post(&base, STREAM, &request("one")).await;
    assert_eq!(status, 500);
    assert_eq!(body_json(&text)["error"]["status"], "INTERNAL");

    let (status, body, complete) = post(&base, STREAM, &request("two")).await;
    assert_eq!(status, 200);
    assert!(body.contains("partial"));
    assert!(!complete, "a dropped stream must not end cleanly");

    let (_, _, complete) = post(&base, STREAM, &request("three")).await;
    assert!(!complete);

    let started = std::time::Instant::now();
    let (_, body, complete) = post(&base, STREAM, &request("four")).await;
    assert!(complete && body.contains("late"));
    assert!(started.elapsed() >= Duration::from_millis(200));

    let mut with_result = request("five");
    with_result["contents"]
        .as_array_mut()
        .unwrap()
        .push(json!({"role": "user", "parts": [{"functionResponse": {
            "name": "run_shell_command", "response": {"output": "hi"}}}]}));
    let (_, body, _) = post(&base, STREAM, &with_result).await;
    assert!(body.contains("tool seen"));
    let last = server.main_requests().pop().unwrap();
    assert_eq!(
        last.last_function_response("run_shell_command"),
        Some(json!({"output": "hi"}))
    );
    assert!(last.all_text().contains("\"output\":\"hi\""));
    assert!(server.wait_for_main(5, Duration::from_secs(1)).await);
}

#[tokio::test]
async fn a_hanging_stream_is_cut_by_shutdown() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = GeminiServer::start_with_shutdown(
        Script::new().turn(Turn::new().text("start").then_hang()),
        async {
            let _ = rx.await;
        },
    )
    .await
    .unwrap();
    let base = server.base_url();
    let req = tokio::spawn(async move { post(&base, STREAM, &request("hang")).await });
    assert!(server.wait_for_main(1, Duration::from_secs(5)).await);
    tx.send(()).unwrap();
    let (_, body, complete) = tokio::time::timeout(Duration::from_secs(5), req)
        .await
        .expect("shutdown must cut the stream")
        .unwrap();
    assert!(body.contains("start"));
    assert!(!complete);
}
