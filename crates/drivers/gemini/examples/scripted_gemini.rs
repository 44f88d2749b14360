//! A scripted Gemini API for whole-process runs (benchmarks, trying `weft run --agent
//! gemini` by hand): every main request gets the same streamed reply (the CLI's side
//! requests, its router and checks, get an object filled from their schema). Prints its
//! base URL (`GOOGLE_GEMINI_BASE_URL`), serves until killed.
//!
//!     cargo run -p weft-gemini --example scripted_gemini -- [WORDS]

#![allow(clippy::unwrap_used, clippy::expect_used)]

use weft_testkit::gemini::{Script, Turn};
use weft_testkit::GeminiServer;

#[tokio::main]
async fn main() {
    let words: usize = std::env::args()
        .nth(1)
        .and_then(|a| a.parse().ok())
        .unwrap_or(200);
    let text: Vec<String> = (0..words).map(|i| format!("word{i:011} ")).collect();
    let chunks: Vec<&str> = text.iter().map(String::as_str).collect();
    let reply = Turn::new().text_chunks(&chunks).usage(1000, words as u64);
    let server = GeminiServer::start(Script::new().default_reply(reply))
        .await
        .unwrap();
    println!("{}", server.base_url());
    std::future::pending::<()>().await;
    drop(server);
}
