//! The protocol clients: SSE split anywhere, signatures replayed to their own
//! provider only, retries only before a response, typed errors, compaction on a
//! context-window error.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use parking_lot::Mutex;
use proptest::prelude::*;
use serde_json::json;
use tokio_util::sync::CancellationToken;
use weft_native::conversation::{Block, Message, Role};
use weft_native::model::anthropic::{AnthropicClient, AnthropicDecoder, Auth};
use weft_native::model::chat::{ChatClient, ChatDecoder};
use weft_native::model::gemini::{GeminiClient, GeminiDecoder};
use weft_native::model::responses::{ResponsesClient, ResponsesDecoder};
use weft_native::model::sse::{pump, Decoder};
use weft_native::model::{
    with_retries, ModelClient, ModelError, ModelReply, ModelRequest, RetryPolicy, StreamEvent,
};
use weft_testkit::server::{RecordedRequest, Reply, Responder, ScriptedServer};
use weft_testkit::{AnthropicServer, Script, Turn};

use super::support::{assert_notice, driver, endpoint_env, run_turn, Dirs};

const ANTHROPIC_STREAM: &str = concat!(
    "event: message_start\ndata: {\"type\":\"message_start\",\"message\":{\"usage\":{\"input_tokens\":10,\"cache_read_input_tokens\":5,\"output_tokens\":1}}}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"thinking\",\"thinking\":\"\",\"signature\":\"\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"thinking_delta\",\"thinking\":\"Überlege… 思考\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"signature_delta\",\"signature\":\"c2lnbmF0dXJl\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":0}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":1,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"héllo wörld ✓ \"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":1,\"delta\":{\"type\":\"text_delta\",\"text\":\"日本語 🎉\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":1}\n\n",
    "event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":2,\"content_block\":{\"type\":\"tool_use\",\"id\":\"toolu_1\",\"name\":\"read\",\"input\":{}}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\"{\\\"path\\\": \\\"ä\"}}\n\n",
    "event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":2,\"delta\":{\"type\":\"input_json_delta\",\"partial_json\":\".txt\\\"}\"}}\n\n",
    "event: content_block_stop\ndata: {\"type\":\"content_block_stop\",\"index\":2}\n\n",
    "event: message_delta\ndata: {\"type\":\"message_delta\",\"delta\":{\"stop_reason\":\"tool_use\"},\"usage\":{\"output_tokens\":42}}\n\n",
    "event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n",
);

const CHAT_STREAM: &str = concat!(
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"reasoning_content\":\"denke… 考\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"héllo wörld ✓ \"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"content\":\"日本語 🎉\"}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"id\":\"call_1\",\"type\":\"function\",\"function\":{\"name\":\"read\",\"arguments\":\"{\\\"path\\\"\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{\"tool_calls\":[{\"index\":0,\"function\":{\"arguments\":\": \\\"ä.txt\\\"}\"}}]}}]}\n\n",
    "data: {\"choices\":[{\"index\":0,\"delta\":{},\"finish_reason\":\"tool_calls\"}]}\n\n",
    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":15,\"completion_tokens\":42,\"prompt_tokens_details\":{\"cached_tokens\":5}}}\n\n",
    "data: [DONE]\n\n",
);

async fn decode(
    chunks: Vec<Vec<u8>>,
    decoder: &mut dyn Decoder,
) -> (Result<ModelReply, ModelError>, String) {
    let body = futures::stream::iter(
        chunks
            .into_iter()
            .map(|c| Ok::<Bytes, Infallible>(Bytes::from(c))),
    );
    let mut text = String::new();
    let r = pump(
        body,
        decoder,
        &CancellationToken::new(),
        Duration::from_secs(5),
        &mut |e| {
            if let StreamEvent::Text(t) = e {
                text.push_str(&t)
            }
        },
    )
    .await;
    (r, text)
}

fn split(bytes: &[u8], cuts: &[usize]) -> Vec<Vec<u8>> {
    let mut cuts: Vec<usize> = cuts.iter().map(|c| c % (bytes.len() + 1)).collect();
    cuts.sort_unstable();
    cuts.dedup();
    let mut out = Vec::new();
    let mut at = 0;
    for c in cuts {
        out.push(bytes[at..c].to_vec());
        at = c;
    }
    out.push(bytes[at..].to_vec());
    out
}

fn rt() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
}

fn whole_anthropic() -> ModelReply {
    rt().block_on(async {
        decode(
            vec![ANTHROPIC_STREAM.as_bytes().to_vec()],
            &mut AnthropicDecoder::new("o"),
        )
        .await
        .0
        .unwrap()
    })
}

#[test]
fn anthropic_stream_decodes_text_thinking_signature_tool_and_usage() {
    let reply = whole_anthropic();
    assert_eq!(reply.usage.input, 15);
    assert_eq!(reply.usage.cache_read, 5);
    assert_eq!(reply.usage.output, 42);
    assert_eq!(
        reply.blocks,
        vec![
            Block::Reasoning {
                text: "Überlege… 思考".into(),
                signature: Some("c2lnbmF0dXJl".into()),
                redacted: None,
                origin: "o".into()
            },
            Block::Text {
                text: "héllo wörld ✓ 日本語 🎉".into()
            },
            Block::ToolUse {
                id: "toolu_1".into(),
                name: "read".into(),
                input: json!({"path": "ä.txt"}),
                signature: None
            },
        ]
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Splitting the bytes anywhere (inside UTF-8 characters too) changes nothing.
    #[test]
    fn anthropic_sse_split_anywhere_gives_the_same_reply(cuts in proptest::collection::vec(0usize..10_000, 0..40)) {
        let whole = whole_anthropic();
        let chunks = split(ANTHROPIC_STREAM.as_bytes(), &cuts);
        let (r, text) = rt().block_on(decode(chunks, &mut AnthropicDecoder::new("o")));
        prop_assert_eq!(r.unwrap(), whole);
        prop_assert_eq!(text, "héllo wörld ✓ 日本語 🎉");
    }

    #[test]
    fn chat_sse_split_anywhere_gives_the_same_reply(cuts in proptest::collection::vec(0usize..10_000, 0..40)) {
        let chunks = split(CHAT_STREAM.as_bytes(), &cuts);
        let (r, text) = rt().block_on(decode(chunks, &mut ChatDecoder::default()));
        let r = r.unwrap();
        prop_assert_eq!(text, "héllo wörld ✓ 日本語 🎉");
        prop_assert_eq!(r.usage.input, 15);
        prop_assert_eq!(r.usage.cache_read, 5);
        prop_assert_eq!(r.usage.output, 42);
        prop_assert_eq!(&r.blocks[2], &Block::ToolUse { id: "call_1".into(), name: "read".into(), input: json!({"path": "ä.txt"}), signature: None });
    }
}

#[tokio::test]
async fn a_stream_cut_before_its_end_is_interrupted() {
    let cut = &ANTHROPIC_STREAM[..ANTHROPIC_STREAM.find("event: message_delta").unwrap()];
    let (r, _) = decode(
        vec![cut.as_bytes().to_vec()],
        &mut AnthropicDecoder::new("o"),
    )
    .await;
    assert!(matches!(r, Err(ModelError::Interrupted(_))), "{r:?}");
}

fn conversation_with_thinking(origin: &str) -> Vec<Message> {
    vec![
        Message::user("hi"),
        Message {
            role: Role::Assistant,
            blocks: vec![
                Block::Reasoning {
                    text: "thought".into(),
                    signature: Some("SIG-1".into()),
                    redacted: None,
                    origin: origin.into(),
                },
                Block::ToolUse {
                    id: "t1".into(),
                    name: "read".into(),
                    input: json!({"path": "a"}),
                    signature: None,
                },
            ],
            origin: Default::default(),
        },
        Message {
            role: Role::User,
            blocks: vec![Block::ToolResult {
                id: "t1".into(),
                name: "read".into(),
                content: "A".into(),
                is_error: false,
            }],
            origin: Default::default(),
        },
    ]
}

fn request(messages: &[Message]) -> ModelRequest<'_> {
    ModelRequest {
        model: "m",
        system: "s",
        messages,
        tools: &[],
        max_tokens: 100,
        effort: None,
    }
}

#[test]
fn a_thinking_signature_is_replayed_to_its_own_provider_only() {
    let a = AnthropicClient::new("http://a.example", Auth::None);
    let b = AnthropicClient::new("http://b.example", Auth::None);
    let chat = ChatClient::new("http://a.example", None, "x");
    let conv = conversation_with_thinking(a.origin());
    let to_a = a.body(request(&conv)).to_string();
    assert!(to_a.contains("\"signature\":\"SIG-1\""), "{to_a}");
    assert!(to_a.contains("\"type\":\"thinking\""), "{to_a}");
    let to_b = b.body(request(&conv)).to_string();
    assert!(
        !to_b.contains("SIG-1") && !to_b.contains("thinking"),
        "{to_b}"
    );
    let to_chat = chat.body(request(&conv)).to_string();
    assert!(
        !to_chat.contains("SIG-1") && !to_chat.contains("thought"),
        "{to_chat}"
    );
    // The tool call and its result still go everywhere.
    assert!(to_b.contains("tool_result") && to_chat.contains("\"role\":\"tool\""));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_loop_replays_thinking_with_its_signature_on_the_next_step() {
    let script = Script::new()
        .turn(
            Turn::new()
                .thinking("let me look")
                .tool_use("toolu_1", "ls", json!({"path": "."})),
        )
        .default_reply(Turn::text_reply("done"));
    let server = AnthropicServer::start(script).await.unwrap();
    let dirs = Dirs::new();
    let env = endpoint_env("anthropic-messages", &server.base_url(), "auto");
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "look", None)).await;
    assert!(r.ok, "{r:?}");
    assert!(snap.reasoning.contains("let me look"));
    let reqs = server.messages_requests();
    assert_eq!(reqs.len(), 2);
    let second = reqs[1].body.to_string();
    assert!(
        second.contains("\"type\":\"thinking\"") && second.contains("\"signature\":\"sig\""),
        "{second}"
    );
}

/// A responder playing replies in order, then the last one forever.
struct Sequence(Mutex<Vec<Reply>>);

impl Responder for Sequence {
    fn respond(&self, _r: &RecordedRequest) -> Reply {
        let mut v = self.0.lock();
        if v.len() > 1 {
            v.remove(0)
        } else {
            v[0].clone()
        }
    }
}

fn anthropic_text(text: &str) -> Reply {
    Turn::text_reply(text).render("m", true, 1)
}

async fn sequence(replies: Vec<Reply>) -> ScriptedServer {
    ScriptedServer::start(Arc::new(Sequence(Mutex::new(replies))))
        .await
        .unwrap()
}

fn fast() -> RetryPolicy {
    RetryPolicy {
        retries: 3,
        base: Duration::from_millis(10),
        max_wait: Duration::from_secs(5),
    }
}

async fn call(
    client: &dyn ModelClient,
    policy: RetryPolicy,
) -> (Result<ModelReply, ModelError>, Vec<Duration>) {
    let msgs = vec![Message::user("hi")];
    let mut waits = Vec::new();
    let r = with_retries(
        client,
        request(&msgs),
        policy,
        &CancellationToken::new(),
        &mut |_| {},
        &mut |_, w| waits.push(w),
    )
    .await;
    (r, waits)
}

#[tokio::test]
async fn a_429_waits_its_retry_after_then_succeeds() {
    let mut limited = Reply::json(
        429,
        &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}),
    );
    limited.headers.push(("retry-after".into(), "1".into()));
    let server = sequence(vec![limited, anthropic_text("after the wait")]).await;
    let client = AnthropicClient::new(&server.base_url(), Auth::ApiKey("k".into()));
    let (r, waits) = call(&client, fast()).await;
    assert_eq!(
        waits,
        vec![Duration::from_secs(1)],
        "the retry-after was not honoured"
    );
    let reply = r.unwrap();
    assert_eq!(
        reply.blocks,
        vec![Block::Text {
            text: "after the wait".into()
        }]
    );
    assert_eq!(server.recorder().len(), 2);
}

#[tokio::test]
async fn a_429_past_its_retries_is_rate_limited_with_the_wait() {
    let mut limited = Reply::json(429, &json!({"error": {"message": "slow down"}}));
    limited.headers.push(("retry-after".into(), "7".into()));
    let server = sequence(vec![limited]).await;
    let client = ChatClient::new(&server.base_url(), None, "x");
    let (r, _) = call(
        &client,
        RetryPolicy {
            retries: 0,
            ..fast()
        },
    )
    .await;
    assert_eq!(
        r,
        Err(ModelError::RateLimited {
            message: "slow down".into(),
            retry_after: Some(Duration::from_secs(7))
        })
    );
}

#[tokio::test]
async fn a_500_then_success() {
    let server = sequence(vec![
        Turn::status(500).render("m", true, 1),
        anthropic_text("recovered"),
    ])
    .await;
    let client = AnthropicClient::new(&server.base_url(), Auth::None);
    let (r, waits) = call(&client, fast()).await;
    assert_eq!(
        r.unwrap().blocks,
        vec![Block::Text {
            text: "recovered".into()
        }]
    );
    assert_eq!(waits.len(), 1);
    assert_eq!(server.recorder().len(), 2);
}

#[tokio::test]
async fn a_connection_dropped_mid_stream_fails_and_is_not_sent_again() {
    let dropped = Turn::new()
        .text("half an ans")
        .then_drop()
        .render("m", true, 1);
    let server = sequence(vec![dropped, anthropic_text("should never be asked for")]).await;
    let client = AnthropicClient::new(&server.base_url(), Auth::None);
    let (r, waits) = call(&client, fast()).await;
    assert!(matches!(r, Err(ModelError::Interrupted(_))), "{r:?}");
    assert!(waits.is_empty());
    assert_eq!(server.recorder().len(), 1, "the request was sent again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_dropped_stream_fails_the_turn_clearly_keeping_the_text() {
    let dropped = Turn::new()
        .text("half an ans")
        .then_drop()
        .render("m", true, 1);
    let server = sequence(vec![dropped, anthropic_text("never")]).await;
    let dirs = Dirs::new();
    let env = endpoint_env("anthropic-messages", &server.base_url(), "auto");
    let (r, snap, _) = run_turn(&driver(), dirs.input(&env, "go", None)).await;
    assert!(!r.ok);
    let err = r.error.unwrap_or_default();
    assert!(
        err.contains("broke off") && err.contains("not sent again"),
        "{err}"
    );
    assert!(snap.text.contains("half an ans"));
    assert_eq!(server.recorder().len(), 1);
}

#[tokio::test]
async fn status_errors_are_typed() {
    let too_long = Reply::json(
        400,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long: 250000 tokens > 200000 maximum"}}),
    );
    let server = sequence(vec![too_long]).await;
    let (r, _) = call(
        &AnthropicClient::new(&server.base_url(), Auth::None),
        fast(),
    )
    .await;
    assert!(matches!(r, Err(ModelError::ContextWindow(_))), "{r:?}");
    let server = sequence(vec![Reply::json(
        401,
        &json!({"error": {"message": "bad key"}}),
    )])
    .await;
    let (r, waits) = call(&ChatClient::new(&server.base_url(), None, "x"), fast()).await;
    assert!(
        matches!(&r, Err(ModelError::Fatal(m)) if m.contains("bad key")),
        "{r:?}"
    );
    assert!(waits.is_empty());
    let server = sequence(vec![Reply::json(400, &json!({"error": {"code": "context_length_exceeded", "message": "This model's maximum context length is 8192 tokens"}}))]).await;
    let (r, _) = call(&ChatClient::new(&server.base_url(), None, "x"), fast()).await;
    assert!(matches!(r, Err(ModelError::ContextWindow(_))), "{r:?}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_context_window_error_compacts_then_succeeds() {
    let too_long = Reply::json(
        400,
        &json!({"type": "error", "error": {"type": "invalid_request_error", "message": "prompt is too long"}}),
    );
    let server = sequence(vec![
        anthropic_text("first answer"),
        too_long,
        anthropic_text("SUMMARY: the user said hello"),
        anthropic_text("second answer"),
    ])
    .await;
    let dirs = Dirs::new();
    let env = endpoint_env("anthropic-messages", &server.base_url(), "auto");
    let d = driver();
    let (r, _, _) = run_turn(&d, dirs.input(&env, "hello there", None)).await;
    assert!(r.ok);
    let id = r.session_id.unwrap();
    let (r2, snap, _) = run_turn(&d, dirs.input(&env, "and now?", Some(&id))).await;
    assert!(r2.ok, "{r2:?}");
    assert!(snap.text.contains("second answer"), "{snap:#?}");
    assert_notice(&snap, "compacted");
    let reqs = server.recorder().requests();
    assert_eq!(reqs.len(), 4);
    // The summary request carries no tools; the retried step sees the summary, not the old turn.
    let last = reqs[3].body.to_string();
    assert!(
        last.contains("SUMMARY: the user said hello") && last.contains("and now?"),
        "{last}"
    );
    assert!(!last.contains("first answer"), "{last}");
    // A new process sees the compacted conversation too.
    let (r3, _, _) = run_turn(&driver(), dirs.input(&env, "third", Some(&id))).await;
    assert!(r3.ok);
    let resumed = server.recorder().requests()[4].body.to_string();
    assert!(
        resumed.contains("SUMMARY") && !resumed.contains("first answer"),
        "{resumed}"
    );
}

const RESPONSES_STREAM: &str = concat!(
    "event: response.created\ndata: {\"type\":\"response.created\",\"response\":{\"id\":\"r1\"}}\n\n",
    "event: response.output_item.added\ndata: {\"type\":\"response.output_item.added\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs\"}}\n\n",
    "event: response.reasoning_summary_text.delta\ndata: {\"type\":\"response.reasoning_summary_text.delta\",\"output_index\":0,\"delta\":\"denke… 考\"}\n\n",
    "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":0,\"item\":{\"type\":\"reasoning\",\"id\":\"rs\",\"summary\":[{\"type\":\"summary_text\",\"text\":\"denke… 考\"}],\"encrypted_content\":\"ENC-1\"}}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":1,\"delta\":\"héllo wörld ✓ \"}\n\n",
    "event: response.output_text.delta\ndata: {\"type\":\"response.output_text.delta\",\"output_index\":1,\"delta\":\"日本語 🎉\"}\n\n",
    "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":1,\"item\":{\"type\":\"message\",\"role\":\"assistant\",\"content\":[{\"type\":\"output_text\",\"text\":\"héllo wörld ✓ 日本語 🎉\"}]}}\n\n",
    "event: response.output_item.done\ndata: {\"type\":\"response.output_item.done\",\"output_index\":2,\"item\":{\"type\":\"function_call\",\"call_id\":\"call_1\",\"name\":\"read\",\"arguments\":\"{\\\"path\\\": \\\"ä.txt\\\"}\"}}\n\n",
    "event: response.completed\ndata: {\"type\":\"response.completed\",\"response\":{\"usage\":{\"input_tokens\":15,\"output_tokens\":42,\"input_tokens_details\":{\"cached_tokens\":5}}}}\n\n",
);

const GEMINI_STREAM: &str = concat!(
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"denke… 考\",\"thought\":true}]}}]}\r\n\r\n",
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"héllo wörld ✓ \"}]}}]}\r\n\r\n",
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"text\":\"日本語 🎉\"}]}}]}\r\n\r\n",
    "data: {\"candidates\":[{\"content\":{\"role\":\"model\",\"parts\":[{\"functionCall\":{\"id\":\"call_1\",\"name\":\"read\",\"args\":{\"path\":\"ä.txt\"}},\"thoughtSignature\":\"TS-1\"}]},\"finishReason\":\"STOP\"}],\"usageMetadata\":{\"promptTokenCount\":15,\"candidatesTokenCount\":40,\"thoughtsTokenCount\":2,\"cachedContentTokenCount\":5}}\r\n\r\n",
);

fn check_reply(r: &ModelReply, tool: Block) {
    assert_eq!(r.usage.input, 15);
    assert_eq!(r.usage.cache_read, 5);
    assert_eq!(r.usage.output, 42);
    assert!(
        r.blocks.contains(&Block::Text {
            text: "héllo wörld ✓ 日本語 🎉".into()
        }),
        "{:?}",
        r.blocks
    );
    assert!(r.blocks.contains(&tool), "{:?}", r.blocks);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    #[test]
    fn responses_sse_split_anywhere_gives_the_same_reply(cuts in proptest::collection::vec(0usize..10_000, 0..40)) {
        let chunks = split(RESPONSES_STREAM.as_bytes(), &cuts);
        let (r, text) = rt().block_on(decode(chunks, &mut ResponsesDecoder::new("o")));
        let r = r.unwrap();
        prop_assert_eq!(text, "héllo wörld ✓ 日本語 🎉");
        check_reply(&r, Block::ToolUse { id: "call_1".into(), name: "read".into(), input: json!({"path": "ä.txt"}), signature: None });
        let encrypted = r.blocks.iter().any(|b| matches!(b, Block::Reasoning { signature: Some(s), .. } if s == "ENC-1"));
        prop_assert!(encrypted, "the encrypted reasoning was lost");
    }

    #[test]
    fn gemini_sse_split_anywhere_gives_the_same_reply(cuts in proptest::collection::vec(0usize..10_000, 0..40)) {
        let chunks = split(GEMINI_STREAM.as_bytes(), &cuts);
        let (r, text) = rt().block_on(decode(chunks, &mut GeminiDecoder::new("o")));
        let r = r.unwrap();
        prop_assert_eq!(text, "héllo wörld ✓ 日本語 🎉");
        check_reply(&r, Block::ToolUse { id: "call_1".into(), name: "read".into(), input: json!({"path": "ä.txt"}), signature: Some(("o".into(), "TS-1".into())) });
    }
}

#[test]
fn gemini_and_responses_signatures_go_back_to_their_own_origin_only() {
    let g = GeminiClient::new("http://g.example", None);
    let other = GeminiClient::new("http://other.example", None);
    let conv = vec![
        Message::user("hi"),
        Message {
            role: Role::Assistant,
            blocks: vec![Block::ToolUse {
                id: "c".into(),
                name: "read".into(),
                input: json!({"path": "a"}),
                signature: Some((g.origin().into(), "TS-1".into())),
            }],
            origin: Default::default(),
        },
        Message {
            role: Role::User,
            blocks: vec![Block::ToolResult {
                id: "c".into(),
                name: "read".into(),
                content: "A".into(),
                is_error: false,
            }],
            origin: Default::default(),
        },
    ];
    assert!(g
        .body(request(&conv))
        .to_string()
        .contains("\"thoughtSignature\":\"TS-1\""));
    let to_other = other.body(request(&conv)).to_string();
    assert!(
        !to_other.contains("TS-1") && to_other.contains("functionResponse"),
        "{to_other}"
    );
    let r = ResponsesClient::new("http://r.example/v1", None);
    let conv = conversation_with_thinking(r.origin());
    assert!(r
        .body(request(&conv))
        .to_string()
        .contains("\"encrypted_content\":\"SIG-1\""));
    let elsewhere = ResponsesClient::new("http://elsewhere.example/v1", None)
        .body(request(&conv))
        .to_string();
    assert!(
        !elsewhere.contains("SIG-1") && elsewhere.contains("function_call_output"),
        "{elsewhere}"
    );
}

fn sse_reply(body: &str) -> Reply {
    Reply::sse(vec![weft_testkit::Step::Bytes(Bytes::from(
        body.to_string(),
    ))])
}

fn cut_reply(body: &str) -> Reply {
    let mut half = body.len() / 2;
    while !body.is_char_boundary(half) {
        half += 1;
    }
    Reply::sse(vec![
        weft_testkit::Step::Bytes(Bytes::from(body[..half].to_string())),
        weft_testkit::Step::Drop,
    ])
}

/// Each protocol's client over the same failures: a 429 with retry-after then success,
/// a 500 then success, a stream cut mid-way (no second request), a context error.
#[tokio::test]
async fn every_client_retries_only_before_a_response_and_types_its_errors() {
    type Make = fn(&str) -> Box<dyn ModelClient>;
    let clients: [(&str, Make, &str); 4] = [
        (
            "anthropic",
            |u| Box::new(AnthropicClient::new(u, Auth::None)),
            ANTHROPIC_STREAM,
        ),
        (
            "chat",
            |u| Box::new(ChatClient::new(u, None, "x")),
            CHAT_STREAM,
        ),
        (
            "responses",
            |u| Box::new(ResponsesClient::new(u, None)),
            RESPONSES_STREAM,
        ),
        (
            "gemini",
            |u| Box::new(GeminiClient::new(u, None)),
            GEMINI_STREAM,
        ),
    ];
    for (name, make, stream) in clients {
        let mut limited = Reply::json(429, &json!({"error": {"message": "slow down"}}));
        limited.headers.push(("retry-after".into(), "0.05".into()));
        let server = sequence(vec![limited, sse_reply(stream)]).await;
        let (r, waits) = call(make(&server.base_url()).as_ref(), fast()).await;
        assert!(r.is_ok(), "{name}: {r:?}");
        assert_eq!(waits, vec![Duration::from_millis(50)], "{name}");

        let server = sequence(vec![
            Reply::json(503, &json!({"error": {"message": "busy"}})),
            sse_reply(stream),
        ])
        .await;
        let (r, waits) = call(make(&server.base_url()).as_ref(), fast()).await;
        assert!(r.is_ok() && waits.len() == 1, "{name}: {r:?}");
        assert_eq!(server.recorder().len(), 2, "{name}");

        let server = sequence(vec![cut_reply(stream), sse_reply(stream)]).await;
        let (r, waits) = call(make(&server.base_url()).as_ref(), fast()).await;
        assert!(
            matches!(r, Err(ModelError::Interrupted(_))),
            "{name}: {r:?}"
        );
        assert!(waits.is_empty(), "{name}");
        assert_eq!(
            server.recorder().len(),
            1,
            "{name}: sent again after part of the response"
        );

        let server = sequence(vec![Reply::json(400, &json!({"error": {"code": "context_length_exceeded", "message": "the prompt is too long for the context window"}}))]).await;
        let (r, _) = call(make(&server.base_url()).as_ref(), fast()).await;
        assert!(
            matches!(r, Err(ModelError::ContextWindow(_))),
            "{name}: {r:?}"
        );
    }
}
