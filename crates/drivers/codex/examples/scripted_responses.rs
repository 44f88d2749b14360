//! A scripted OpenAI Responses server for whole-process runs (benchmarks, trying
//! `weft run --agent codex` by hand): every request gets the same streamed reply.
//! Prints its `/v1` base URL, serves until killed.
//!
//!     cargo run -p weft-codex --example scripted_responses -- [WORDS]

#![allow(clippy::unwrap_used, clippy::expect_used)]

use weft_testkit::openai::{Script, Turn};
use weft_testkit::ResponsesServer;

#[tokio::main]
async fn main() {
    let words: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    // 16 characters a delta, about what a model streams per event.
    let text: Vec<String> = (0..words).map(|i| format!("word{i:011} ")).collect();
    let chunks: Vec<&str> = text.iter().map(String::as_str).collect();
    let reply = Turn::new().text_chunks(&chunks).usage(1000, words as u64);
    let server = ResponsesServer::start(Script::new().default_reply(reply))
        .await
        .unwrap();
    println!("{}", server.v1_url());
    std::future::pending::<()>().await;
    drop(server);
}
