//! The protocol-neutral script: a neutral turn renders, on every server, exactly the
//! bytes the vendor's own builder renders, and the neutral predicates read every
//! vendor's request.

use std::time::Duration;

use serde_json::json;
use weft_testkit::chat::ChatRequest;
use weft_testkit::gemini::GenerateRequest;
use weft_testkit::openai::ResponsesRequest;
use weft_testkit::script::{self, when, ModelRequest};
use weft_testkit::server::Reply;
use weft_testkit::{anthropic, chat, gemini, openai, MessagesRequest};

/// Everything a reply puts on the wire, comparable.
fn wire(reply: &Reply) -> String {
    format!("{} {:?} {:?}", reply.status, reply.headers, reply.body)
}

/// Neutral turns covering every step; each `*_turns` below lists the same turns in one
/// vendor's terms.
fn neutral_turns() -> Vec<script::Turn> {
    let args = json!({"command": "echo hi"});
    vec![
        script::Turn::text_reply("hello"),
        script::Turn::new()
            .thinking_chunks(&["let ", "me see"])
            .text_chunks(&["a", "b"])
            .tool_call("call_1", "bash", args.clone())
            .usage(3, 4),
        script::Turn::new()
            .delta_delay(Duration::from_millis(5))
            .thinking("hm")
            .delay(Duration::from_millis(10))
            .text("half")
            .then_drop(),
        script::Turn::new().text("stall").then_hang(),
        script::Turn::status(429),
        script::Turn::status(500),
        script::Turn::dropped(),
    ]
}

/// The turns of [`neutral_turns`], written with vendor module `$vendor`'s own builders:
/// `$thinking` (with `$thinking_chunks`), `$tool_call` and `$delta_delay` are its names
/// for reasoning, a tool call and the pause before every delta.
macro_rules! vendor_turns {
    ($vendor:ident, $thinking:ident, $thinking_chunks:ident, $tool_call:ident, $delta_delay:ident) => {{
        use $vendor::Turn;
        let args = json!({"command": "echo hi"});
        vec![
            Turn::text_reply("hello"),
            Turn::new()
                .$thinking_chunks(&["let ", "me see"])
                .text_chunks(&["a", "b"])
                .$tool_call("call_1", "bash", args)
                .usage(3, 4),
            Turn::new()
                .$delta_delay(Duration::from_millis(5))
                .$thinking("hm")
                .delay(Duration::from_millis(10))
                .text("half")
                .then_drop(),
            Turn::new().text("stall").then_hang(),
            Turn::status(429),
            Turn::status(500),
            Turn::dropped(),
        ]
    }};
}

fn anthropic_turns() -> Vec<anthropic::Turn> {
    vendor_turns!(anthropic, thinking, thinking_chunks, tool_use, delta_delay)
}

fn openai_turns() -> Vec<openai::Turn> {
    vendor_turns!(
        openai,
        reasoning,
        reasoning_chunks,
        function_call,
        delta_delay
    )
}

fn chat_turns() -> Vec<chat::Turn> {
    vendor_turns!(chat, reasoning, reasoning_chunks, tool_call, delta_delay)
}

fn gemini_turns() -> Vec<gemini::Turn> {
    vendor_turns!(
        gemini,
        thought,
        thought_chunks,
        function_call_id,
        chunk_delay
    )
}

#[test]
fn a_neutral_turn_renders_the_vendors_own_bytes() {
    let responses = ResponsesRequest {
        body: json!({"model": "m", "stream": true, "input": []}),
    };
    let completions = ChatRequest {
        body: json!({"model": "m", "stream": true, "messages": [],
                     "stream_options": {"include_usage": true}}),
        headers: Vec::new(),
    };
    for (i, neutral) in neutral_turns().into_iter().enumerate() {
        for stream in [true, false] {
            let a = anthropic::Turn::from(neutral.clone());
            assert_eq!(
                wire(&a.render("m", stream, 1)),
                wire(&anthropic_turns()[i].render("m", stream, 1)),
                "anthropic turn {i}"
            );
            let g = gemini::Turn::from(neutral.clone());
            assert_eq!(
                wire(&g.render("m", stream)),
                wire(&gemini_turns()[i].render("m", stream)),
                "gemini turn {i}"
            );
        }
        let mut responses = responses.clone();
        let mut completions = completions.clone();
        for stream in [true, false] {
            responses.body["stream"] = json!(stream);
            completions.body["stream"] = json!(stream);
            let o = openai::Turn::from(neutral.clone());
            assert_eq!(
                wire(&o.render(&responses, 1)),
                wire(&openai_turns()[i].render(&responses, 1)),
                "responses turn {i}"
            );
            let c = chat::Turn::from(neutral.clone());
            assert_eq!(
                wire(&c.render(&completions, 1)),
                wire(&chat_turns()[i].render(&completions, 1)),
                "chat turn {i}"
            );
        }
    }
}

/// The same conversation (a user asks, the model calls `call_1`, the agent answers it)
/// in each vendor's request shape.
fn conversations() -> Vec<(&'static str, Box<dyn ModelRequest>)> {
    let anthropic = MessagesRequest {
        body: json!({"model": "claude-x", "tools": [{"name": "bash"}], "messages": [
            {"role": "user", "content": "run it"},
            {"role": "assistant", "content": [
                {"type": "tool_use", "id": "call_1", "name": "bash", "input": {}}]},
            {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": "call_1", "content": "it ran"}]}]}),
    };
    let responses = ResponsesRequest {
        body: json!({"model": "gpt-x", "tools": [{"type": "function", "name": "bash"}],
            "input": [
                {"type": "message", "role": "user", "content": [{"type": "input_text", "text": "run it"}]},
                {"type": "function_call", "call_id": "call_1", "name": "bash", "arguments": "{}"},
                {"type": "function_call_output", "call_id": "call_1", "output": "it ran"}]}),
    };
    let completions = ChatRequest {
        body: json!({"model": "gpt-x", "tools": [{"type": "function", "function": {"name": "bash"}}],
            "messages": [
                {"role": "user", "content": "run it"},
                {"role": "assistant", "tool_calls": [{"id": "call_1", "type": "function",
                    "function": {"name": "bash", "arguments": "{}"}}]},
                {"role": "tool", "tool_call_id": "call_1", "content": "it ran"}]}),
        headers: Vec::new(),
    };
    let gemini = GenerateRequest {
        model: "gemini-x".into(),
        stream: true,
        body: json!({"tools": [{"functionDeclarations": [{"name": "bash"}]}], "contents": [
            {"role": "user", "parts": [{"text": "run it"}]},
            {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "bash", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"id": "call_1", "name": "bash",
                "response": {"output": "it ran"}}}]}]}),
    };
    vec![
        ("anthropic", Box::new(anthropic)),
        ("responses", Box::new(responses)),
        ("chat", Box::new(completions)),
        ("gemini", Box::new(gemini)),
    ]
}

#[test]
fn the_neutral_predicates_read_every_vendors_request() {
    for (vendor, req) in conversations() {
        let req: &dyn ModelRequest = req.as_ref();
        // The latest user text is the vendor's own reading (Anthropic's tool result
        // rides in a user message), so only the prompt every vendor shares is checked.
        assert!(when::any_text_contains("run it")(req), "{vendor}");
        assert!(when::any_text_contains("it ran")(req), "{vendor}");
        assert!(when::model_contains("-x")(req), "{vendor}");
        assert!(when::tool_result_for("call_1")(req), "{vendor}");
        assert!(!when::tool_result_for("call_2")(req), "{vendor}");
        assert!(
            when::tool_result_contains("call_1", "it ran")(req),
            "{vendor}"
        );
        assert!(
            !when::tool_result_contains("call_1", "failed")(req),
            "{vendor}"
        );
        assert!(!when::no_tools()(req), "{vendor}");
        assert!(
            when::custom(|r| r.tool_names() == ["bash"])(req),
            "{vendor}"
        );
    }
}

#[test]
fn a_gemini_response_without_an_id_is_matched_by_its_calls_name() {
    let req = GenerateRequest {
        model: "gemini-x".into(),
        stream: true,
        body: json!({"contents": [
            {"role": "model", "parts": [{"functionCall": {"id": "call_1", "name": "bash", "args": {}}}]},
            {"role": "user", "parts": [{"functionResponse": {"name": "bash",
                "response": {"output": "ok"}}}]}]}),
    };
    assert_eq!(
        req.tool_result("call_1").as_deref(),
        Some(r#"{"output":"ok"}"#)
    );
    assert_eq!(req.tool_result("call_2"), None);
}

#[tokio::test]
async fn one_script_serves_every_protocol() {
    use script::{ModelServer, Protocol, Script, Turn};
    for protocol in Protocol::ALL {
        let script = Script::new()
            .rule(when::tool_result_for("call_1"), Turn::text_reply("done"))
            .turn(Turn::new().tool_call("call_1", "bash", json!({})));
        let server = ModelServer::start(protocol, script).await.unwrap();
        assert!(server.base_url().starts_with("http://127.0.0.1:"));
        assert!(server.request_texts().is_empty(), "{protocol:?}");
    }
}
