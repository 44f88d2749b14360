//! Raw HTTP/1.1 to a scripted server, so the tests see the bytes an agent would.

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// Sends one request with `Connection: close` and `headers` (each line ending in
/// `\r\n`); returns (status, response text, clean end).
pub async fn send_with(
    base: &str,
    method: &str,
    path: &str,
    headers: &str,
    body: &Value,
) -> (u16, String, bool) {
    let addr = base.trim_start_matches("http://");
    let mut stream = TcpStream::connect(addr).await.unwrap();
    let body = body.to_string();
    let req = format!(
        "{method} {path} HTTP/1.1\r\nHost: {addr}\r\n{headers}Content-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    stream.write_all(req.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    let clean = stream.read_to_end(&mut out).await.is_ok();
    let text = String::from_utf8_lossy(&out).into_owned();
    let status = text
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or(0);
    // A chunked body ends with the zero-size chunk; a cut one does not.
    let complete = clean && (text.ends_with("0\r\n\r\n") || !text.contains("chunked"));
    (status, text, complete)
}

/// [`send_with`] and no extra header.
pub async fn send(base: &str, method: &str, path: &str, body: &Value) -> (u16, String, bool) {
    send_with(base, method, path, "", body).await
}

/// A `POST` by [`send`].
pub async fn post(base: &str, path: &str, body: &Value) -> (u16, String, bool) {
    send(base, "POST", path, body).await
}

/// The payloads of an SSE body's `data:` lines.
pub fn data_lines(sse: &str) -> impl Iterator<Item = &str> {
    sse.lines().filter_map(|l| l.strip_prefix("data: "))
}

/// The `data:` payloads that are JSON.
pub fn data_events(sse: &str) -> Vec<Value> {
    data_lines(sse)
        .filter_map(|d| serde_json::from_str(d).ok())
        .collect()
}
