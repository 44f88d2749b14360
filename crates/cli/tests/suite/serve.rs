//! `weft serve`: the verbs over a WebSocket, patches after subscribe, coded errors, tokens.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;
use weft_protocol::{apply_in_place, Phase, SnapshotPatch, UniversalSnapshot};

struct Server {
    child: Child,
    url: String,
    _home: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn start(token: Option<&str>) -> Server {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_weft"));
    cmd.args(["serve", "--listen", "127.0.0.1:0"])
        .env("WEFT_HOME", home.path())
        .env("WEFT_ECHO_DELAY_MS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped());
    if let Some(t) = token {
        cmd.env("WEFT_SERVE_TOKEN", t);
    }
    let mut child = cmd.spawn().unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let mut line = String::new();
    BufReader::new(stderr)
        .read_line(&mut line)
        .unwrap_or_else(|e| panic!("{e}"));
    let url = line
        .trim()
        .strip_prefix("weft: serving on ")
        .unwrap_or_else(|| panic!("unexpected first line: {line}"))
        .to_string();
    Server {
        child,
        url,
        _home: home,
    }
}

type Ws =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

async fn send(ws: &mut Ws, msg: Value) {
    ws.send(Message::Text(msg.to_string().into()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

async fn next(ws: &mut Ws) -> Value {
    let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
        .await
        .unwrap_or_else(|_| panic!("no message within 10 s"))
        .unwrap_or_else(|| panic!("closed"))
        .unwrap_or_else(|e| panic!("{e}"));
    serde_json::from_str(frame.to_text().unwrap_or_default()).unwrap_or_else(|e| panic!("{e}"))
}

/// The reply to request `id`, keeping patches that arrive meanwhile.
async fn reply(ws: &mut Ws, id: u64, patches: &mut Vec<Value>) -> Value {
    loop {
        let msg = next(ws).await;
        if msg["type"] == "patch" {
            patches.push(msg);
        } else if msg["id"] == id {
            return msg;
        }
    }
}

#[tokio::test]
async fn a_turn_over_the_websocket() {
    let server = start(None);
    let (mut ws, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let workdir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut patches = Vec::new();

    send(
        &mut ws,
        json!({"id": 1, "type": "prompt", "prompt": "over the wire", "workdir": workdir.path()}),
    )
    .await;
    let accepted = reply(&mut ws, 1, &mut patches).await;
    assert_eq!(accepted["type"], "reply", "{accepted}");
    let key = accepted["result"]["sessionKey"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    let task = accepted["result"]["taskId"]
        .as_str()
        .unwrap_or_default()
        .to_string();

    send(
        &mut ws,
        json!({"id": 2, "type": "subscribe", "sessionKey": key}),
    )
    .await;
    let sub = reply(&mut ws, 2, &mut patches).await;
    let mut snap: UniversalSnapshot =
        serde_json::from_value(sub["result"]["snapshot"].clone()).unwrap_or_else(|e| panic!("{e}"));
    let mut seq = sub["result"]["seq"].as_u64().unwrap_or_default();
    loop {
        let msg = if patches.is_empty() {
            next(&mut ws).await
        } else {
            patches.remove(0)
        };
        assert_eq!(msg["type"], "patch");
        assert_eq!(msg["seq"].as_u64(), Some(seq + 1), "gap-free");
        seq += 1;
        let patch: SnapshotPatch =
            serde_json::from_value(msg["patch"].clone()).unwrap_or_else(|e| panic!("{e}"));
        apply_in_place(&mut snap, &patch);
        if snap.task_id.as_deref() == Some(task.as_str()) && snap.phase == Phase::Done {
            break;
        }
    }
    assert_eq!(snap.text, "Echo: over the wire");

    send(
        &mut ws,
        json!({"id": 3, "type": "getHistory", "sessionKey": key}),
    )
    .await;
    let history = reply(&mut ws, 3, &mut patches).await;
    assert_eq!(history["result"][0]["text"], "Echo: over the wire");

    send(
        &mut ws,
        json!({"id": 5, "type": "search", "query": "over the wi", "limit": 5}),
    )
    .await;
    let found = reply(&mut ws, 5, &mut patches).await;
    assert_eq!(found["result"][0]["sessionKey"], key, "{found}");
    assert!(
        found["result"][0]["snippet"]
            .as_str()
            .is_some_and(|s| s.contains("«wire»")),
        "{found}"
    );

    send(
        &mut ws,
        json!({"id": 4, "type": "prompt", "prompt": "x", "agent": "nope"}),
    )
    .await;
    let err = reply(&mut ws, 4, &mut patches).await;
    assert_eq!(err["type"], "error");
    assert_eq!(err["error"]["code"], "unknownAgent");

    send(&mut ws, json!({"id": 5, "type": "listAgentInfo"})).await;
    let agents = reply(&mut ws, 5, &mut patches).await;
    let ids: Vec<&str> = agents["result"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| a["id"].as_str())
        .collect();
    assert!(ids.contains(&"echo"), "{ids:?}");

    ws.send(Message::Text("not json".into()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let bad = next(&mut ws).await;
    assert_eq!(bad["error"]["code"], "badRequest");
}

#[tokio::test]
async fn a_token_is_required_when_set() {
    let server = start(Some("s3cret"));
    assert!(tokio_tungstenite::connect_async(&server.url).await.is_err());
    let wrong = format!("{}?token=nope", server.url);
    assert!(tokio_tungstenite::connect_async(&wrong).await.is_err());
    let right = format!("{}?token=s3cret", server.url);
    let (mut ws, _) = tokio_tungstenite::connect_async(&right)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    send(&mut ws, json!({"id": 1, "type": "listTools"})).await;
    let mut patches = Vec::new();
    assert_eq!(reply(&mut ws, 1, &mut patches).await["result"], json!([]));
}

#[test]
fn a_public_address_without_a_token_is_refused() {
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["serve", "--listen", "0.0.0.0:0"])
        .env_remove("WEFT_SERVE_TOKEN")
        .env("WEFT_HOME", std::env::temp_dir().join("weft-serve-refused"))
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("WEFT_SERVE_TOKEN"));
}
