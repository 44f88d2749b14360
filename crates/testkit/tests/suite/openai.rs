//! The scripted OpenAI Responses server, driven over raw HTTP/1.1.

use std::time::Duration;

use serde_json::{json, Value};
use weft_testkit::openai::{when, Script, Turn};
use weft_testkit::ResponsesServer;

use super::http::{data_events, send};

fn request(text: &str, tools: Value) -> Value {
    json!({
        "model": "mock-model",
        "stream": true,
        "tools": tools,
        "input": [
            {"type": "message", "role": "developer", "content": [{"type": "input_text", "text": "be brief"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "<environment_context/>"}]},
            {"type": "message", "role": "user", "content": [{"type": "input_text", "text": text}]}
        ]
    })
}

fn exec_tools() -> Value {
    json!([{"type": "function", "name": "exec_command"}, {"type": "web_search"}])
}

fn done_items(events: &[Value]) -> Vec<Value> {
    events
        .iter()
        .filter(|e| e["type"] == "response.output_item.done")
        .map(|e| e["item"].clone())
        .collect()
}

#[tokio::test]
async fn streams_items_and_usage_and_records_requests() {
    let script = Script::new()
        .turn(
            Turn::new()
                .reasoning_chunks(&["thinking ", "hard"])
                .text_chunks(&["Hel", "lo"])
                .shell("call_1", "echo hi")
                .usage(100, 7)
                .usage_details(30, 2),
        )
        .turn(Turn::text_reply("second"));
    let server = ResponsesServer::start(script).await.unwrap();
    let (status, body, complete) = send(
        &server.base_url(),
        "POST",
        "/v1/responses",
        &request("go", exec_tools()),
    )
    .await;
    assert_eq!(status, 200);
    assert!(complete);
    let events = data_events(&body);
    assert_eq!(events[0]["type"], "response.created");
    let last = events.last().unwrap();
    assert_eq!(last["type"], "response.completed");
    assert_eq!(last["response"]["usage"]["input_tokens"], 100);
    assert_eq!(
        last["response"]["usage"]["input_tokens_details"]["cached_tokens"],
        30
    );
    assert_eq!(last["response"]["usage"]["total_tokens"], 107);
    let text: String = events
        .iter()
        .filter(|e| e["type"] == "response.output_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(text, "Hello");
    let summary: String = events
        .iter()
        .filter(|e| e["type"] == "response.reasoning_summary_text.delta")
        .filter_map(|e| e["delta"].as_str())
        .collect();
    assert_eq!(summary, "thinking hard");
    let items = done_items(&events);
    assert_eq!(items.len(), 3);
    assert_eq!(items[2]["type"], "function_call");
    assert_eq!(items[2]["name"], "exec_command");
    assert_eq!(items[2]["call_id"], "call_1");
    let args: Value = serde_json::from_str(items[2]["arguments"].as_str().unwrap()).unwrap();
    assert_eq!(args, json!({"cmd": "echo hi"}));

    let (_, body, _) = send(
        &server.base_url(),
        "POST",
        "/v1/responses",
        &request("again", exec_tools()),
    )
    .await;
    assert!(body.contains("second"));
    let (_, body, _) = send(
        &server.base_url(),
        "POST",
        "/v1/responses",
        &request("more", exec_tools()),
    )
    .await;
    assert!(body.contains("\"ok\""), "the empty queue gives the default");

    let reqs = server.responses_requests();
    assert_eq!(reqs.len(), 3);
    assert_eq!(reqs[0].last_user_text(), "go");
    assert_eq!(reqs[0].texts_of("developer"), vec!["be brief"]);
    assert_eq!(reqs[0].tool_names(), vec!["exec_command", "web_search"]);
}

#[tokio::test]
async fn shell_and_patch_follow_the_offered_tools() {
    let script = Script::new()
        .rule(
            when::user_text_contains("SHELL"),
            Turn::new().shell("c1", "ls"),
        )
        .rule(
            when::user_text_contains("PATCH"),
            Turn::new().patch("c2", "*** Begin Patch\n*** End Patch\n"),
        );
    let server = ResponsesServer::start(script).await.unwrap();
    let base = server.base_url();
    let call = |body: String| done_items(&data_events(&body)).into_iter().next().unwrap();
    let (_, body, _) = send(
        &base,
        "POST",
        "/v1/responses",
        &request("SHELL", json!([{"type": "function", "name": "shell"}])),
    )
    .await;
    let item = call(body);
    assert_eq!(item["name"], "shell");
    assert!(item["arguments"]
        .as_str()
        .unwrap()
        .contains("[\"bash\",\"-lc\",\"ls\"]"));

    let (_, body, _) = send(
        &base,
        "POST",
        "/v1/responses",
        &request("PATCH", json!([{"type": "custom", "name": "apply_patch"}])),
    )
    .await;
    let item = call(body);
    assert_eq!(item["type"], "custom_tool_call");
    assert_eq!(item["input"], "*** Begin Patch\n*** End Patch\n");

    let (_, body, _) = send(
        &base,
        "POST",
        "/v1/responses",
        &request("PATCH", exec_tools()),
    )
    .await;
    let item = call(body);
    assert_eq!(item["name"], "exec_command");
    assert!(item["arguments"]
        .as_str()
        .unwrap()
        .contains("apply_patch <<'EOF'"));
}

#[tokio::test]
async fn guarded_turns_wait_for_the_tool_output() {
    let script = Script::new()
        .turn(Turn::new().shell("call_7", "true"))
        .turn_when(
            when::tool_output_for("call_7"),
            Turn::new().echo_tool_output("after tool, got:"),
        );
    let server = ResponsesServer::start(script).await.unwrap();
    let base = server.base_url();
    send(&base, "POST", "/v1/responses", &request("a", exec_tools())).await;
    // A side request without the output gets the default and leaves the turn queued.
    let (_, body, _) = send(&base, "POST", "/v1/responses", &request("b", exec_tools())).await;
    assert!(body.contains("\"ok\""));
    let mut with_output = request("a", exec_tools());
    with_output["input"].as_array_mut().unwrap().extend([
        json!({"type": "function_call", "call_id": "call_7", "name": "exec_command", "arguments": "{}"}),
        json!({"type": "function_call_output", "call_id": "call_7", "output": "done here"}),
    ]);
    let (_, body, _) = send(&base, "POST", "/v1/responses", &with_output).await;
    assert!(body.contains("after tool, got: done here"), "{body}");
    let reqs = server.responses_requests();
    assert_eq!(reqs[2].latest_tool_output().as_deref(), Some("done here"));
    assert_eq!(reqs[2].tool_output("call_7").as_deref(), Some("done here"));
    assert_eq!(reqs[2].last_tool_output().as_deref(), Some("done here"));
    assert_eq!(
        reqs[2].calls(),
        vec![("call_7".to_string(), "exec_command".to_string())]
    );
    assert!(reqs[2].all_text().contains("done here"));
}

#[tokio::test]
async fn errors_failures_drops_delays_and_models() {
    let script = Script::new()
        .turn(Turn::status(500))
        .turn(Turn::new().text("partial").then_drop())
        .turn(Turn::dropped())
        .turn(Turn::new().text("half").failed("server_error", "scripted"))
        .turn(Turn::new().delay(Duration::from_millis(200)).text("late"))
        .models(&["mock-model", "mock-large"]);
    let server = ResponsesServer::start(script).await.unwrap();
    let base = server.base_url();
    let (status, body, _) = send(&base, "GET", "/v1/models", &json!({})).await;
    assert_eq!(status, 200);
    assert!(body.contains("mock-large"));

    let (status, body, _) = send(&base, "POST", "/v1/responses", &request("a", exec_tools())).await;
    assert_eq!(status, 500);
    assert!(body.contains("server_error"));

    let (status, body, complete) =
        send(&base, "POST", "/v1/responses", &request("b", exec_tools())).await;
    assert_eq!(status, 200);
    assert!(body.contains("partial"));
    assert!(!body.contains("response.completed"));
    assert!(!complete, "a dropped stream must not end cleanly");

    let (_, body, complete) =
        send(&base, "POST", "/v1/responses", &request("c", exec_tools())).await;
    assert!(!complete);
    assert!(!body.contains("response.created"));

    let (_, body, complete) =
        send(&base, "POST", "/v1/responses", &request("d", exec_tools())).await;
    assert!(complete);
    let events = data_events(&body);
    assert_eq!(events.last().unwrap()["type"], "response.failed");

    let started = std::time::Instant::now();
    let (_, body, complete) =
        send(&base, "POST", "/v1/responses", &request("e", exec_tools())).await;
    assert!(complete && body.contains("late"));
    assert!(started.elapsed() >= Duration::from_millis(200));
    assert_eq!(server.responses_requests().len(), 5);
    assert_eq!(server.recorder().len(), 6);
    assert!(server.wait_for_requests(5, Duration::from_secs(1)).await);
}

#[tokio::test]
async fn non_streamed_requests_get_one_response() {
    let server = ResponsesServer::start(
        Script::new().turn(Turn::new().text("a title").web_search("weather")),
    )
    .await
    .unwrap();
    let mut body = request("x", exec_tools());
    body["stream"] = json!(false);
    let (status, text, _) = send(&server.base_url(), "POST", "/v1/responses", &body).await;
    assert_eq!(status, 200);
    let json: Value = serde_json::from_str(text.split("\r\n\r\n").nth(1).unwrap()).unwrap();
    assert_eq!(json["output"][0]["content"][0]["text"], "a title");
    assert_eq!(json["output"][1]["type"], "web_search_call");
    assert_eq!(json["usage"]["output_tokens"], 7);
}

#[tokio::test]
async fn shutdown_cuts_a_hanging_stream() {
    let server = ResponsesServer::start(Script::new().turn(Turn::new().text("before").then_hang()))
        .await
        .unwrap();
    let base = server.base_url();
    let client = tokio::spawn(async move {
        send(&base, "POST", "/v1/responses", &request("x", exec_tools())).await
    });
    assert!(server.wait_for_requests(1, Duration::from_secs(10)).await);
    server.shutdown().await;
    let (_, body, complete) = tokio::time::timeout(Duration::from_secs(10), client)
        .await
        .expect("shutdown must cut the stream")
        .unwrap();
    assert!(body.contains("before"));
    assert!(!complete);
}
