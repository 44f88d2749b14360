//! A scripted OpenAI Chat Completions API for whole-process runs of the ACP agents
//! that speak it (Qwen Code and others; benchmarks, trying `weft run --agent qwen` by
//! hand): every request gets the same streamed reply. Prints its `/v1` base URL
//! (`OPENAI_BASE_URL`), serves until killed.
//!
//!     cargo run -p weft-acp --example scripted_chat -- [WORDS]

#![allow(clippy::unwrap_used, clippy::expect_used)]

use weft_testkit::chat::{Script, Turn};
use weft_testkit::ChatServer;

#[tokio::main]
async fn main() {
    let words: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let text: Vec<String> = (0..words).map(|i| format!("word{i:011} ")).collect();
    let chunks: Vec<&str> = text.iter().map(String::as_str).collect();
    let reply = Turn::new().text_chunks(&chunks).usage(1000, words as u64);
    let server = ChatServer::start(Script::new().default_reply(reply).models(&["mock-model"]))
        .await
        .unwrap();
    println!("{}", server.v1_url());
    std::future::pending::<()>().await;
    drop(server);
}
