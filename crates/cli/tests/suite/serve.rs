//! `weft serve`: the verbs over a WebSocket, patches after subscribe, coded errors, tokens.

use std::io::{BufRead, BufReader};

use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio_tungstenite::tungstenite::Message;
use weft_protocol::{apply_in_place, Phase, SnapshotPatch, UniversalSnapshot};

use super::support::strings;

struct Server {
    child: Child,
    url: String,
    token: String,
    home: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        super::support::stop_daemon(self.home.path());
    }
}

fn start() -> Server {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("WEFT_HOME", home.path())
        .env("WEFT_ECHO_DELAY_MS", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("spawn: {e}"));
    let stderr = child.stderr.take().unwrap_or_else(|| panic!("no stderr"));
    let mut lines = BufReader::new(stderr).lines();
    let mut line = || lines.next().and_then(Result::ok).unwrap_or_default();
    let first = line();
    let url = first
        .trim()
        .strip_prefix("weft: serving on ")
        .unwrap_or_else(|| panic!("unexpected first line: {first}"))
        .to_string();
    let second = line();
    let token = second
        .split_once("#token=")
        .map(|(_, t)| t.trim().to_string())
        .unwrap_or_else(|| panic!("no token in: {second}"));
    Server {
        child,
        url,
        token,
        home,
    }
}

/// A WebSocket that said hello with `token`.
async fn greeted(server: &Server, token: &str) -> (Ws, Value) {
    let (mut ws, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    send(
        &mut ws,
        json!({"id": 100, "type": "hello", "version": "test", "surface": "script", "token": token}),
    )
    .await;
    let mut patches = Vec::new();
    let welcome = reply(&mut ws, 100, &mut patches).await;
    (ws, welcome)
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
    let server = start();
    let (mut ws, welcome) = greeted(&server, &server.token.clone()).await;
    assert_eq!(welcome["type"], "reply", "{welcome}");
    assert_eq!(welcome["result"]["scopes"], json!(["read", "control"]));
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
        // A merged patch stands for `from`..=`seq`.
        let from = msg["from"].as_u64().or(msg["seq"].as_u64());
        assert_eq!(from, Some(seq + 1), "gap-free");
        seq = msg["seq"].as_u64().unwrap_or_default();
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
    let ids = strings(&agents["result"], "id");
    assert!(ids.contains(&"echo"), "{ids:?}");

    ws.send(Message::Text("not json".into()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let bad = next(&mut ws).await;
    assert_eq!(bad["error"]["code"], "badRequest");
}

#[tokio::test]
async fn every_peer_must_prove_itself() {
    let server = start();
    let mut patches = Vec::new();

    // No hello: nothing is served.
    let (mut ws, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    send(&mut ws, json!({"id": 1, "type": "listSessions"})).await;
    assert_eq!(
        reply(&mut ws, 1, &mut patches).await["error"]["code"],
        "forbidden"
    );
    // A hello without a token, or with a wrong one, is refused.
    send(
        &mut ws,
        json!({"id": 2, "type": "hello", "version": "t", "surface": "x"}),
    )
    .await;
    assert_eq!(
        reply(&mut ws, 2, &mut patches).await["error"]["code"],
        "forbidden"
    );
    let (mut bad, refused) = greeted(&server, "not-the-token").await;
    assert_eq!(refused["error"]["code"], "forbidden", "{refused}");
    send(&mut bad, json!({"id": 3, "type": "prompt", "prompt": "hi"})).await;
    assert_eq!(
        reply(&mut bad, 3, &mut patches).await["error"]["code"],
        "forbidden"
    );

    // A token in the URL is not accepted (URLs land in logs).
    let in_url = format!("{}?token={}", server.url, server.token);
    let (mut ws, _) = tokio_tungstenite::connect_async(&in_url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    send(&mut ws, json!({"id": 4, "type": "listSessions"})).await;
    assert_eq!(
        reply(&mut ws, 4, &mut patches).await["error"]["code"],
        "forbidden"
    );

    // A read token reads, and may not prompt.
    let read = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["serve", "--print-token", "--read-only"])
        .env("WEFT_HOME", server.home.path())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let read = String::from_utf8_lossy(&read.stdout).trim().to_string();
    assert!(!read.is_empty() && read != server.token);
    let (mut reader, welcome) = greeted(&server, &read).await;
    assert_eq!(welcome["result"]["scopes"], json!(["read"]), "{welcome}");
    send(&mut reader, json!({"id": 5, "type": "listSessions"})).await;
    assert_eq!(reply(&mut reader, 5, &mut patches).await["type"], "reply");
    let workdir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    send(
        &mut reader,
        json!({"id": 6, "type": "prompt", "prompt": "hi", "workdir": workdir.path()}),
    )
    .await;
    let denied = reply(&mut reader, 6, &mut patches).await;
    assert_eq!(denied["error"]["code"], "forbidden", "{denied}");
    assert!(denied["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("control")));

    // A page of another site, and a rebinding host name, are refused at the upgrade.
    use tokio_tungstenite::tungstenite::client::IntoClientRequest;
    for (name, value) in [("origin", "http://evil.example"), ("host", "evil.example")] {
        let mut request = server
            .url
            .as_str()
            .into_client_request()
            .unwrap_or_else(|e| panic!("{e}"));
        request
            .headers_mut()
            .insert(name, value.parse().unwrap_or_else(|e| panic!("{e:?}")));
        let refused = tokio_tungstenite::connect_async(request).await;
        assert!(refused.is_err(), "{name}: {value} was let in");
    }
    // The listener's own page is let in.
    let mut own = server
        .url
        .as_str()
        .into_client_request()
        .unwrap_or_else(|e| panic!("{e}"));
    let origin = server.url.replace("ws://", "http://").replace("/ws", "");
    own.headers_mut()
        .insert("origin", origin.parse().unwrap_or_else(|e| panic!("{e:?}")));
    own.headers_mut().insert(
        "authorization",
        format!("Bearer {}", server.token)
            .parse()
            .unwrap_or_else(|e| panic!("{e:?}")),
    );
    let (mut page, _) = tokio_tungstenite::connect_async(own)
        .await
        .unwrap_or_else(|e| panic!("own origin refused: {e}"));
    send(
        &mut page,
        json!({"id": 7, "type": "hello", "version": "t", "surface": "browser"}),
    )
    .await;
    assert_eq!(reply(&mut page, 7, &mut patches).await["type"], "reply");
}

#[test]
fn a_public_address_without_a_usable_certificate_is_refused() {
    // Off loopback it is TLS or nothing (serve_tls.rs has the TLS): a certificate that
    // cannot be read makes no plain-text listener instead.
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let _daemon = super::support::DaemonGuard(home.path().to_path_buf());
    let missing = home.path().join("missing.pem");
    let missing = missing.to_str().unwrap_or_default();
    let out = Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(["serve", "--listen", "0.0.0.0:0", "--tls-cert", missing])
        .args(["--tls-key", missing])
        .env("WEFT_HOME", home.path())
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("cannot serve TLS"), "{stderr}");
    assert!(!stderr.contains("serving on"), "{stderr}");
}

#[tokio::test]
async fn a_secret_is_refused_over_the_websocket_and_lists_never_carry_one() {
    let server = start();
    let (mut ws, welcome) = greeted(&server, &server.token.clone()).await;
    assert_eq!(welcome["type"], "reply", "{welcome}");
    let mut patches = Vec::new();
    send(
        &mut ws,
        json!({"id": 1, "type": "addAccount", "agent": "claude", "kind": "api-key", "label": "planted",
               "secret": {"type": "value", "value": "sk-from-a-browser"}}),
    )
    .await;
    let refused = reply(&mut ws, 1, &mut patches).await;
    assert_eq!(refused["type"], "error", "{refused}");
    assert_eq!(refused["error"]["code"], "forbidden", "{refused}");
    assert!(refused["error"]["message"]
        .as_str()
        .is_some_and(|m| m.contains("own socket")));
    // A secret from the daemon's own environment needs no value on the wire.
    send(
        &mut ws,
        json!({"id": 2, "type": "addAccount", "agent": "gemini", "kind": "api-key", "label": "env key",
               "secret": {"type": "env", "name": "WEFT_TEST_GEMINI_KEY"}}),
    )
    .await;
    let added = reply(&mut ws, 2, &mut patches).await;
    assert_eq!(added["type"], "reply", "{added}");
    send(&mut ws, json!({"id": 3, "type": "listAccounts"})).await;
    let listed = reply(&mut ws, 3, &mut patches).await;
    let accounts = listed["result"].as_array().cloned().unwrap_or_default();
    assert_eq!(accounts.len(), 1, "{listed}");
    assert_eq!(accounts[0]["label"], "env key");
    assert!(!listed.to_string().contains("sk-from-a-browser"));

    // Nor may a WebSocket client have the daemon write a file where it names.
    let target = server.home.path().join("planted.md");
    send(
        &mut ws,
        json!({"id": 4, "type": "exportSessionToFile", "sessionKey": "echo:x", "format": "markdown",
               "path": target}),
    )
    .await;
    let refused = reply(&mut ws, 4, &mut patches).await;
    assert_eq!(refused["error"]["code"], "forbidden", "{refused}");
    assert!(!target.exists());
}
