//! The scripted OpenAI Chat Completions server, driven over raw HTTP/1.1.

use std::time::Duration;

use serde_json::{json, Value};
use weft_testkit::chat::{when, Script, Turn};
use weft_testkit::ChatServer;

use super::http;

/// Sends one request with the key a chat client sends.
async fn send(base: &str, method: &str, path: &str, body: &Value) -> (u16, String, bool) {
    let auth = "Authorization: Bearer sk-chat-test\r\n";
    http::send_with(base, method, path, auth, body).await
}

/// A streamed chat request saying `text`, asking for usage.
async fn stream(base: &str, text: &str) -> (u16, String, bool) {
    send(
        base,
        "POST",
        "/v1/chat/completions",
        &request(text, true, true),
    )
    .await
}

fn shell_tool(name: &str, key: &str, kind: &str) -> Value {
    json!({"type": "function", "function": {"name": name, "description": "run a command",
        "parameters": {"type": "object", "properties": {key: {"type": kind}}, "required": [key]}}})
}

fn request(text: &str, stream: bool, usage: bool) -> Value {
    let mut body = json!({
        "model": "mock-model",
        "stream": stream,
        "tools": [shell_tool("run_shell_command", "command", "string")],
        "messages": [
            {"role": "system", "content": "be brief"},
            {"role": "user", "content": [{"type": "text", "text": text}]}
        ]
    });
    if usage {
        body["stream_options"] = json!({"include_usage": true});
    }
    body
}

/// The `data:` payloads of an SSE body, `[DONE]` as a string.
fn data_frames(body: &str) -> Vec<Value> {
    http::data_lines(body)
        .map(|d| serde_json::from_str(d).unwrap_or_else(|_| Value::String(d.into())))
        .collect()
}

fn deltas<'a>(frames: &'a [Value], field: &str) -> Vec<&'a str> {
    frames
        .iter()
        .filter_map(|f| f["choices"][0]["delta"][field].as_str())
        .filter(|s| !s.is_empty())
        .collect()
}

#[tokio::test]
async fn streams_text_reasoning_tool_call_deltas_and_usage() {
    let script = Script::new().turn(
        Turn::new()
            .reasoning_chunks(&["thinking ", "hard"])
            .text_chunks(&["Hel", "lo"])
            .shell("call_1", "echo hi")
            .tool_call("call_2", "read_file", json!({"path": "a.txt"}))
            .usage(100, 7)
            .usage_details(30, 2),
    );
    let server = ChatServer::start(script).await.unwrap();
    let (status, body, complete) = send(
        &server.base_url(),
        "POST",
        "/v1/chat/completions",
        &request("go", true, true),
    )
    .await;
    assert_eq!(status, 200);
    assert!(complete);
    assert!(body.contains("text/event-stream"), "{body}");
    assert!(!body.contains("event:"), "chat streams name no events");
    let frames = data_frames(&body);
    assert_eq!(frames.last().unwrap(), "[DONE]");
    let chunks = &frames[..frames.len() - 1];
    assert!(chunks
        .iter()
        .all(|c| c["object"] == "chat.completion.chunk" && c["id"] == "chatcmpl-1"));
    assert_eq!(chunks[0]["choices"][0]["delta"]["role"], "assistant");
    assert_eq!(deltas(chunks, "reasoning_content"), ["thinking ", "hard"]);
    assert_eq!(deltas(chunks, "content"), ["Hel", "lo"]);

    // Tool calls: a first delta with index, id, type and name; arguments over chunks.
    let call_deltas: Vec<&Value> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["delta"]["tool_calls"].get(0))
        .collect();
    let firsts: Vec<&&Value> = call_deltas
        .iter()
        .filter(|d| d.get("id").is_some())
        .collect();
    assert_eq!(firsts.len(), 2);
    assert_eq!(firsts[0]["index"], 0);
    assert_eq!(firsts[0]["id"], "call_1");
    assert_eq!(firsts[0]["type"], "function");
    assert_eq!(firsts[0]["function"]["name"], "run_shell_command");
    assert_eq!(firsts[1]["index"], 1);
    assert_eq!(firsts[1]["function"]["name"], "read_file");
    for index in [0, 1] {
        let pieces: Vec<&str> = call_deltas
            .iter()
            .filter(|d| d["index"] == index)
            .filter_map(|d| d["function"]["arguments"].as_str())
            .filter(|s| !s.is_empty())
            .collect();
        assert!(pieces.len() >= 2, "arguments in one piece: {pieces:?}");
        let args: Value = serde_json::from_str(&pieces.concat()).unwrap();
        if index == 0 {
            assert_eq!(args, json!({"command": "echo hi"}));
        } else {
            assert_eq!(args, json!({"path": "a.txt"}));
        }
    }
    let finish: Vec<&str> = chunks
        .iter()
        .filter_map(|c| c["choices"][0]["finish_reason"].as_str())
        .collect();
    assert_eq!(finish, ["tool_calls"]);
    let usage = chunks.last().unwrap();
    assert_eq!(usage["choices"], json!([]));
    assert_eq!(usage["usage"]["prompt_tokens"], 100);
    assert_eq!(usage["usage"]["completion_tokens"], 7);
    assert_eq!(usage["usage"]["total_tokens"], 107);
    assert_eq!(usage["usage"]["prompt_tokens_details"]["cached_tokens"], 30);
    assert_eq!(
        usage["usage"]["completion_tokens_details"]["reasoning_tokens"],
        2
    );

    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 1);
    assert_eq!(reqs[0].bearer(), Some("sk-chat-test"));
    assert_eq!(reqs[0].last_user_text(), "go");
    assert_eq!(reqs[0].texts_of("system"), vec!["be brief"]);
    assert_eq!(reqs[0].tool_names(), vec!["run_shell_command"]);
    assert!(reqs[0].include_usage());
}

#[tokio::test]
async fn usage_only_when_asked_and_plain_json_when_not_streaming() {
    let script = Script::new()
        .turn(Turn::text_reply("streamed").usage(5, 1))
        .turn(
            Turn::new()
                .reasoning("hmm")
                .text("whole")
                .tool_call("call_9", "read_file", json!({"path": "b"}))
                .usage(50, 4),
        )
        .turn(Turn::text_reply("cut short").finish_reason("length"));
    let server = ChatServer::start(script).await.unwrap();
    let base = server.base_url();
    let (_, body, _) = send(
        &base,
        "POST",
        "/v1/chat/completions",
        &request("a", true, false),
    )
    .await;
    let frames = data_frames(&body);
    assert!(frames.iter().all(|f| f.get("usage").is_none()), "{body}");
    assert_eq!(
        frames[frames.len() - 2]["choices"][0]["finish_reason"],
        "stop"
    );

    let (status, body, _) = send(
        &base,
        "POST",
        "/v1/chat/completions",
        &request("b", false, false),
    )
    .await;
    assert_eq!(status, 200);
    let json: Value = serde_json::from_str(body.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["object"], "chat.completion");
    let choice = &json["choices"][0];
    assert_eq!(choice["finish_reason"], "tool_calls");
    assert_eq!(choice["message"]["role"], "assistant");
    assert_eq!(choice["message"]["content"], "whole");
    assert_eq!(choice["message"]["reasoning_content"], "hmm");
    assert_eq!(choice["message"]["tool_calls"][0]["id"], "call_9");
    assert_eq!(
        choice["message"]["tool_calls"][0]["function"]["arguments"],
        r#"{"path":"b"}"#
    );
    assert_eq!(json["usage"]["total_tokens"], 54);

    // The bare route (a base URL without /v1) is the same API.
    let (_, body, _) = send(
        &base,
        "POST",
        "/chat/completions",
        &request("c", true, true),
    )
    .await;
    let frames = data_frames(&body);
    assert_eq!(
        frames[frames.len() - 3]["choices"][0]["finish_reason"],
        "length"
    );
}

#[tokio::test]
async fn shell_follows_the_offered_tool_and_its_schema() {
    let script = Script::new().rule(
        when::user_text_contains("SHELL"),
        Turn::new().shell("c1", "ls"),
    );
    let server = ChatServer::start(script).await.unwrap();
    let base = server.base_url();
    let args_of = |body: &str| {
        let frames = data_frames(body);
        let pieces: String = frames
            .iter()
            .filter_map(|f| {
                f["choices"][0]["delta"]["tool_calls"][0]["function"]["arguments"].as_str()
            })
            .collect();
        let name = frames
            .iter()
            .find_map(|f| f["choices"][0]["delta"]["tool_calls"][0]["function"]["name"].as_str())
            .unwrap()
            .to_string();
        (name, serde_json::from_str::<Value>(&pieces).unwrap())
    };
    for (tool, key, kind, want) in [
        ("bash", "cmd", "string", json!({"cmd": "ls"})),
        (
            "shell",
            "command",
            "array",
            json!({"command": ["bash", "-lc", "ls"]}),
        ),
        ("Shell", "command", "string", json!({"command": "ls"})),
    ] {
        let mut body = request("SHELL", true, false);
        body["tools"] = json!([
            {"type": "function", "function": {"name": "read_file", "parameters": {}}},
            shell_tool(tool, key, kind)
        ]);
        let (_, reply, _) = send(&base, "POST", "/v1/chat/completions", &body).await;
        let (name, args) = args_of(&reply);
        assert_eq!(name, tool);
        assert_eq!(args, want);
    }
}

#[tokio::test]
async fn guarded_turns_wait_for_the_tool_result() {
    let script = Script::new()
        .turn(Turn::new().shell("call_7", "true"))
        .turn_when(
            when::tool_output_for("call_7"),
            Turn::new().echo_tool_output("after tool, got:"),
        );
    let server = ChatServer::start(script).await.unwrap();
    let base = server.base_url();
    send(
        &base,
        "POST",
        "/v1/chat/completions",
        &request("a", true, false),
    )
    .await;
    // A side request without the result gets the default and leaves the turn queued.
    let (_, body, _) = send(
        &base,
        "POST",
        "/v1/chat/completions",
        &request("b", true, false),
    )
    .await;
    assert!(body.contains("\"ok\""));
    assert_eq!(server.queued_turns(), 1);
    let mut with_output = request("a", true, false);
    with_output["messages"].as_array_mut().unwrap().extend([
        json!({"role": "assistant", "content": null, "tool_calls": [{"id": "call_7",
            "type": "function", "function": {"name": "run_shell_command",
            "arguments": "{\"command\":\"true\"}"}}]}),
        json!({"role": "tool", "tool_call_id": "call_7", "content": "done here"}),
    ]);
    let (_, body, _) = send(&base, "POST", "/v1/chat/completions", &with_output).await;
    assert!(body.contains("after tool, got: done here"), "{body}");
    let reqs = server.chat_requests();
    assert_eq!(reqs[2].tool_output("call_7").as_deref(), Some("done here"));
    assert_eq!(reqs[2].last_tool_output().as_deref(), Some("done here"));
    assert_eq!(reqs[2].latest_tool_output().as_deref(), Some("done here"));
    assert_eq!(
        reqs[2].calls(),
        vec![("call_7".to_string(), "run_shell_command".to_string())]
    );
    assert!(reqs[2].all_text().contains("\"command\":\"true\""));
    assert!(reqs[2].all_text().contains("done here"));
}

#[tokio::test]
async fn errors_drops_stalls_delays_models_and_routes() {
    let script = Script::new()
        .turn(Turn::status(429))
        .turn(Turn::new().text("partial").then_drop())
        .turn(Turn::dropped())
        .turn(Turn::new().delay(Duration::from_millis(200)).text("late"))
        .turn(Turn::new().text("stalled").then_hang())
        .models(&["mock-model", "mock-large"]);
    let server = ChatServer::start(script).await.unwrap();
    let base = server.base_url();
    for path in ["/v1/models", "/models"] {
        let (status, body, _) = send(&base, "GET", path, &json!({})).await;
        assert_eq!(status, 200);
        assert!(body.contains("\"object\":\"list\"") && body.contains("mock-large"));
    }

    let (status, body, _) = stream(&base, "a").await;
    assert_eq!(status, 429);
    assert!(body.contains("rate_limit_exceeded"));

    let (status, body, complete) = stream(&base, "b").await;
    assert_eq!(status, 200);
    assert!(body.contains("partial"));
    assert!(!body.contains("[DONE]"));
    assert!(!complete, "a dropped stream must not end cleanly");

    let (_, body, complete) = stream(&base, "c").await;
    assert!(!complete);
    assert!(!body.contains("chat.completion.chunk"));

    let started = tokio::time::Instant::now();
    let (_, body, _) = stream(&base, "d").await;
    assert!(body.contains("late"));
    assert!(started.elapsed() >= Duration::from_millis(200));

    let stalled = tokio::time::timeout(Duration::from_millis(500), stream(&base, "e")).await;
    assert!(stalled.is_err(), "a stalled stream never ends");

    let (status, _, _) = send(&base, "POST", "/v1/responses", &request("f", true, true)).await;
    assert_eq!(status, 404);
    assert!(server.wait_for_requests(5, Duration::from_secs(1)).await);
    assert_eq!(server.chat_requests().len(), 5);
    server.shutdown().await;
}
