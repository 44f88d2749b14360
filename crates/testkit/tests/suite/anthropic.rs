//! The scripted Anthropic server, driven over raw HTTP/1.1.

use std::time::Duration;

use serde_json::{json, Value};
use weft_testkit::anthropic::when;
use weft_testkit::{AnthropicServer, Script, Turn};

use super::http::{data_events, post};

fn messages(text: &str, stream: bool) -> Value {
    json!({
        "model": "claude-test",
        "stream": stream,
        "tools": [{"name": "Bash"}],
        "messages": [
            {"role": "user", "content": [{"type": "text", "text": text}]},
            {"role": "system", "content": "Available agent types: none"}
        ]
    })
}

#[tokio::test]
async fn streams_scripted_turns_in_order_and_records_requests() {
    let script = Script::new()
        .turn(
            Turn::new()
                .thinking("hmm")
                .text_chunks(&["Hel", "lo"])
                .tool_use("toolu_1", "Bash", json!({"command": "echo hi"}))
                .usage(100, 7),
        )
        .turn(Turn::text_reply("second"));
    let server = AnthropicServer::start(script).await.unwrap();
    let (status, body, complete) = post(
        &server.base_url(),
        "/v1/messages?beta=true",
        &messages("go", true),
    )
    .await;
    assert_eq!(status, 200);
    assert!(complete);
    let events = data_events(&body);
    let kinds: Vec<&str> = events.iter().map(|e| e["type"].as_str().unwrap()).collect();
    assert_eq!(kinds.first(), Some(&"message_start"));
    assert_eq!(kinds.last(), Some(&"message_stop"));
    let text: String = events
        .iter()
        .filter_map(|e| e["delta"]["text"].as_str())
        .collect();
    assert_eq!(text, "Hello");
    assert!(events.iter().any(|e| e["delta"]["thinking"] == "hmm"));
    let json_input: String = events
        .iter()
        .filter_map(|e| e["delta"]["partial_json"].as_str())
        .collect();
    assert_eq!(
        serde_json::from_str::<Value>(&json_input).unwrap(),
        json!({"command": "echo hi"})
    );
    let stop = events
        .iter()
        .find(|e| e["type"] == "message_delta")
        .unwrap();
    assert_eq!(stop["delta"]["stop_reason"], "tool_use");
    assert_eq!(stop["usage"]["output_tokens"], 7);

    let (_, body, _) = post(&server.base_url(), "/v1/messages", &messages("again", true)).await;
    assert!(body.contains("second"));
    // The queue is empty: the default reply.
    let (_, body, _) = post(&server.base_url(), "/v1/messages", &messages("more", true)).await;
    assert!(body.contains("\"ok\""));

    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].last_user_text(), "go");
    assert_eq!(
        reqs[0].system_entries(),
        vec!["Available agent types: none"]
    );
    assert_eq!(
        server.recorder().requests()[0].path,
        "/v1/messages?beta=true"
    );
}

#[tokio::test]
async fn non_streamed_requests_get_one_message() {
    let server = AnthropicServer::start(Script::new().turn(Turn::new().text("a title").tool_use(
        "t1",
        "Read",
        json!({"file_path": "/x"}),
    )))
    .await
    .unwrap();
    let (status, body, _) = post(&server.base_url(), "/v1/messages", &messages("x", false)).await;
    assert_eq!(status, 200);
    let json: Value = serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["content"][0]["text"], "a title");
    assert_eq!(json["content"][1]["name"], "Read");
    assert_eq!(json["stop_reason"], "tool_use");
}

#[tokio::test]
async fn rules_take_side_requests_before_the_queue() {
    let script = Script::new()
        .rule(
            when::model_contains("haiku"),
            Turn::text_reply("Side title"),
        )
        .rule_times(
            when::user_text_contains("KEYWORD"),
            Turn::text_reply("keyword!"),
            1,
        )
        .turn_when(
            when::tool_result_for("toolu_9"),
            Turn::text_reply("after tool"),
        )
        .turn(Turn::text_reply("never first"));
    let server = AnthropicServer::start(script).await.unwrap();
    let base = server.base_url();
    let mut side = messages("title please", false);
    side["model"] = json!("claude-haiku-4");
    let (_, body, _) = post(&base, "/v1/messages", &side).await;
    assert!(body.contains("Side title"));
    let (_, body, _) = post(&base, "/v1/messages", &messages("KEYWORD", true)).await;
    assert!(body.contains("keyword!"));
    // The rule was for once; the guarded turn does not fit: default.
    let (_, body, _) = post(&base, "/v1/messages", &messages("KEYWORD", true)).await;
    assert!(body.contains("\"ok\""));
    let with_result = json!({"model": "m", "stream": true, "messages": [
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_9", "content": "done"}]}
    ]});
    let (_, body, _) = post(&base, "/v1/messages", &with_result).await;
    assert!(body.contains("after tool"));
    assert_eq!(server.queued_turns(), 1);
    assert_eq!(
        server.messages_requests()[3]
            .last_tool_result("toolu_9")
            .as_deref(),
        Some("done")
    );
}

#[tokio::test]
async fn count_tokens_errors_drops_and_delays() {
    let script = Script::new()
        .turn(Turn::status(500))
        .turn(Turn::new().text("partial").then_drop())
        .turn(Turn::dropped())
        .turn(Turn::new().delay(Duration::from_millis(200)).text("late"));
    let server = AnthropicServer::start(script).await.unwrap();
    let base = server.base_url();
    let (status, body, _) = post(
        &base,
        "/v1/messages/count_tokens?beta=true",
        &messages("count me", false),
    )
    .await;
    assert_eq!(status, 200);
    assert!(body.contains("input_tokens"));

    let (status, body, _) = post(&base, "/v1/messages", &messages("a", true)).await;
    assert_eq!(status, 500);
    assert!(body.contains("api_error"));

    let (status, body, complete) = post(&base, "/v1/messages", &messages("b", true)).await;
    assert_eq!(status, 200);
    assert!(body.contains("partial"));
    assert!(!body.contains("message_stop"));
    assert!(!complete, "a dropped stream must not end cleanly");

    let (_, body, complete) = post(&base, "/v1/messages", &messages("c", true)).await;
    assert!(!complete);
    assert!(!body.contains("message_start"));

    let started = std::time::Instant::now();
    let (_, body, complete) = post(&base, "/v1/messages", &messages("d", true)).await;
    assert!(complete && body.contains("late"));
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(server.messages_requests().len(), 4);
    assert_eq!(server.recorder().len(), 5);
}

#[tokio::test]
async fn injected_shutdown_cuts_a_hanging_stream() {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let server = AnthropicServer::start_with_shutdown(
        Script::new().turn(Turn::new().text("before hang").then_hang()),
        async move {
            let _ = rx.await;
        },
    )
    .await
    .unwrap();
    let base = server.base_url();
    let client =
        tokio::spawn(async move { post(&base, "/v1/messages", &messages("x", true)).await });
    assert!(server.wait_for_messages(1, Duration::from_secs(10)).await);
    tx.send(()).unwrap();
    let (_, body, complete) = tokio::time::timeout(Duration::from_secs(10), client)
        .await
        .expect("shutdown must cut the stream")
        .unwrap();
    assert!(body.contains("before hang"));
    assert!(!complete);
}

#[tokio::test]
async fn a_recorder_keeping_the_last_few_holds_only_those_and_counts_every_request() {
    let server = AnthropicServer::start_recording(
        Script::new(),
        std::future::pending(),
        weft_testkit::Recorder::keeping_last(3),
    )
    .await
    .unwrap();
    for i in 0..20 {
        let (status, _, complete) = post(
            &server.base_url(),
            "/v1/messages",
            &messages(&format!("turn {i}"), false),
        )
        .await;
        assert_eq!((status, complete), (200, true));
    }
    assert_eq!(server.recorder().len(), 20);
    assert_eq!(server.recorder().kept(), 3);
    let kept: Vec<String> = server
        .messages_requests()
        .iter()
        .map(|r| r.last_user_text())
        .collect();
    assert_eq!(kept, ["turn 17", "turn 18", "turn 19"]);
}
