//! `weft serve` off loopback: TLS with the home's key, pinned by its fingerprint; plain
//! text and a wrong fingerprint refused; named tokens added, listed, read-only and
//! revoked.

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio_tungstenite::tungstenite::Message;
use tokio_tungstenite::WebSocketStream;

struct Server {
    child: Child,
    /// `wss://…/ws` or `ws://…/ws`.
    url: String,
    /// The listener's own token (from the page's URL).
    token: String,
    /// The fingerprint it printed (over TLS).
    fingerprint: Option<String>,
    home: tempfile::TempDir,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        super::support::stop_daemon(self.home.path());
    }
}

fn weft(home: &std::path::Path, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .env("WEFT_HOME", home)
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

fn start(listen: &str) -> Server {
    start_with(&["--listen", listen])
}

/// `weft serve ARGS` in a fresh home.
fn start_with(args: &[&str]) -> Server {
    let home = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let mut child = Command::new(env!("CARGO_BIN_EXE_weft"))
        .arg("serve")
        .args(args)
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
    let fingerprint = url.starts_with("wss://").then(|| {
        let third = line();
        third
            .rsplit_once(": ")
            .map(|(_, f)| f.trim().to_string())
            .unwrap_or_else(|| panic!("no fingerprint in: {third}"))
    });
    // The rest is read too: `weft serve` goes on printing (how to pair a phone), and a
    // closed pipe would end it.
    std::thread::spawn(move || lines.for_each(drop));
    Server {
        child,
        url,
        token,
        fingerprint,
        home,
    }
}

/// `host:port` of a `ws(s)://host:port/ws` URL.
fn authority(url: &str) -> String {
    let rest = url.split_once("://").map(|(_, r)| r).unwrap_or(url);
    rest.trim_end_matches("/ws").to_string()
}

/// A TLS connection to `server` that trusts only the key with `fingerprint`.
async fn tls(
    server: &Server,
    fingerprint: &str,
) -> std::io::Result<tokio_rustls::client::TlsStream<tokio::net::TcpStream>> {
    let config = weft_client::tls::pinned_config(fingerprint).unwrap_or_else(|e| panic!("{e}"));
    let connector = tokio_rustls::TlsConnector::from(Arc::new(config));
    let tcp = tokio::net::TcpStream::connect(authority(&server.url)).await?;
    let name =
        rustls::pki_types::ServerName::try_from("localhost").unwrap_or_else(|e| panic!("{e}"));
    connector.connect(name, tcp).await
}

async fn send<S: AsyncRead + AsyncWrite + Unpin>(ws: &mut WebSocketStream<S>, msg: Value) {
    ws.send(Message::Text(msg.to_string().into()))
        .await
        .unwrap_or_else(|e| panic!("{e}"));
}

/// The reply to request `id` (patches and other messages skipped).
async fn reply<S: AsyncRead + AsyncWrite + Unpin>(ws: &mut WebSocketStream<S>, id: u64) -> Value {
    loop {
        let frame = tokio::time::timeout(Duration::from_secs(10), ws.next())
            .await
            .unwrap_or_else(|_| panic!("no message within 10 s"))
            .unwrap_or_else(|| panic!("closed"))
            .unwrap_or_else(|e| panic!("{e}"));
        let Ok(text) = frame.to_text() else { continue };
        let msg: Value = serde_json::from_str(text).unwrap_or_default();
        if msg["id"] == id {
            return msg;
        }
    }
}

/// Says hello with `token` on `ws`; the answer.
async fn hello<S: AsyncRead + AsyncWrite + Unpin>(
    ws: &mut WebSocketStream<S>,
    token: &str,
) -> Value {
    send(
        ws,
        json!({"id": 100, "type": "hello", "version": "test", "surface": "script", "token": token}),
    )
    .await;
    reply(ws, 100).await
}

#[tokio::test]
async fn off_loopback_is_tls_pinned_by_the_key_fingerprint() {
    // Every address of the machine: not loopback, so TLS whatever is asked.
    let server = start("0.0.0.0:0");
    assert!(server.url.starts_with("wss://"), "{}", server.url);
    let fingerprint = server.fingerprint.clone().unwrap_or_default();
    assert_eq!(fingerprint.len(), 44, "base64 of 32 bytes: {fingerprint}");

    // The home's key is private, and `--print-token` shows the same fingerprint.
    use std::os::unix::fs::PermissionsExt;
    let key = server.home.path().join("tls/key.pem");
    let mode = std::fs::metadata(&key).map(|m| m.permissions().mode() & 0o777);
    assert_eq!(mode.ok(), Some(0o600));
    let printed = weft(
        server.home.path(),
        &[
            "serve",
            "--print-token",
            "--listen",
            "0.0.0.0:7777",
            "--name",
            "phone",
        ],
    );
    assert!(printed.status.success());
    let token = String::from_utf8_lossy(&printed.stdout).trim().to_string();
    let shown = String::from_utf8_lossy(&printed.stderr);
    assert!(shown.contains(&fingerprint), "{shown}");
    // The QR code's URL carries the token in its fragment, never a query.
    assert!(
        shown.contains('▀') || shown.contains('▄'),
        "no QR code: {shown}"
    );

    // A real rustls connection pinned to it: the page's WebSocket, and a turn.
    let stream = tls(&server, &fingerprint)
        .await
        .unwrap_or_else(|e| panic!("pinned TLS refused: {e}"));
    let request = format!("wss://{}/ws", authority(&server.url));
    let (mut ws, _) = tokio_tungstenite::client_async(request, stream)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let welcome = hello(&mut ws, &token).await;
    assert_eq!(
        welcome["result"]["scopes"],
        json!(["read", "control"]),
        "{welcome}"
    );
    let workdir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    send(
        &mut ws,
        json!({"id": 1, "type": "prompt", "prompt": "over tls", "workdir": workdir.path()}),
    )
    .await;
    assert_eq!(reply(&mut ws, 1).await["type"], "reply");

    // The page's fingerprint, over the same TLS.
    let mut page = tls(&server, &fingerprint)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let get = format!(
        "GET /fingerprint HTTP/1.1\r\nHost: {}\r\nConnection: close\r\n\r\n",
        authority(&server.url)
    );
    page.write_all(get.as_bytes())
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let mut answer = String::new();
    let _ = page.read_to_string(&mut answer).await;
    assert!(answer.ends_with(&fingerprint), "{answer}");

    // Another key's fingerprint: the handshake fails, nothing is sent.
    let wrong = weft_client::tls::fingerprint_of_spki(b"another key");
    let refused = tls(&server, &wrong).await;
    assert!(refused.is_err(), "a wrong fingerprint was accepted");

    // Plain text to the same port gets no WebSocket.
    let plain = format!("ws://{}/ws", authority(&server.url));
    let answered = tokio::time::timeout(
        Duration::from_secs(15),
        tokio_tungstenite::connect_async(plain),
    )
    .await
    .unwrap_or_else(|_| panic!("plain text hung"));
    assert!(answered.is_err(), "plain text was served off loopback");
}

#[tokio::test]
async fn the_users_own_certificate_is_served_and_pinned() {
    // A certificate and key of the user's own (made here as any tool would: PEM files).
    let theirs = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let made = weft_client::Home::at(theirs.path());
    let identity = weft_daemon::tls::own(&made, &["localhost".into(), "127.0.0.1".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    let cert = weft_daemon::tls::cert_path(&made);
    let key = weft_daemon::tls::key_path(&made);
    let (cert, key) = (cert.to_str().unwrap_or(""), key.to_str().unwrap_or(""));
    // On loopback too: a certificate given means TLS.
    let server = start_with(&[
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        cert,
        "--tls-key",
        key,
    ]);
    assert!(server.url.starts_with("wss://"), "{}", server.url);
    assert_eq!(
        server.fingerprint.as_deref(),
        Some(identity.fingerprint.as_str())
    );
    assert!(
        !server.home.path().join("tls/key.pem").exists(),
        "a key of the home's own was made beside the user's"
    );
    let stream = tls(&server, &identity.fingerprint)
        .await
        .unwrap_or_else(|e| panic!("pinned TLS refused: {e}"));
    let request = format!("wss://{}/ws", authority(&server.url));
    let (mut ws, _) = tokio_tungstenite::client_async(request, stream)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let welcome = hello(&mut ws, &server.token).await;
    assert_eq!(welcome["type"], "reply", "{welcome}");
}

#[tokio::test]
async fn tokens_are_named_listed_read_only_and_revoked() {
    let server = start("127.0.0.1:0");
    let home = server.home.path();
    let add = weft(home, &["tokens", "add", "phone"]);
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let phone = String::from_utf8_lossy(&add.stdout).trim().to_string();
    let add = weft(home, &["tokens", "add", "viewer", "--read-only"]);
    let viewer = String::from_utf8_lossy(&add.stdout).trim().to_string();
    assert!(phone.len() >= 32 && viewer.len() >= 32 && phone != viewer);
    // A name is taken once.
    assert!(!weft(home, &["tokens", "add", "phone"]).status.success());

    // Listed by name, never the tokens themselves; the file holds only hashes.
    let list = weft(home, &["tokens", "list", "--json"]);
    let rows: Value = serde_json::from_slice(&list.stdout).unwrap_or_else(|e| panic!("{e}"));
    let names: Vec<(&str, bool)> = rows
        .as_array()
        .map(|a| {
            a.iter()
                .map(|r| (r["name"].as_str().unwrap_or(""), r["readOnly"] == true))
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(names, vec![("phone", false), ("viewer", true)]);
    let everything = [
        String::from_utf8_lossy(&list.stdout).to_string(),
        std::fs::read_to_string(home.join("tokens")).unwrap_or_default(),
        std::fs::read_to_string(home.join("logs/daemon.log")).unwrap_or_default(),
    ]
    .concat();
    assert!(!everything.contains(&phone) && !everything.contains(&viewer));

    // The listener's own token (in the page's URL) is valid while it listens.
    let (mut own, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let welcome = hello(&mut own, &server.token).await;
    assert_eq!(
        welcome["result"]["scopes"],
        json!(["read", "control"]),
        "{welcome}"
    );
    assert!(!everything.contains(&server.token));

    let (mut ws, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(hello(&mut ws, &phone).await["type"], "reply");

    // The read-only token reads, and is refused every verb that changes something.
    let (mut reader, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let welcome = hello(&mut reader, &viewer).await;
    assert_eq!(welcome["result"]["scopes"], json!(["read"]), "{welcome}");
    send(&mut reader, json!({"id": 2, "type": "listSessions"})).await;
    assert_eq!(reply(&mut reader, 2).await["type"], "reply");
    let workdir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    for (id, verb) in [
        (
            3,
            json!({"id": 3, "type": "prompt", "prompt": "hi", "workdir": workdir.path()}),
        ),
        (4, json!({"id": 4, "type": "daemonStop"})),
        (
            5,
            json!({"id": 5, "type": "interact", "sessionKey": "echo:x", "promptId": "p",
                   "action": "cancel", "value": null, "answers": {}}),
        ),
    ] {
        send(&mut reader, verb).await;
        let denied = reply(&mut reader, id).await;
        assert_eq!(denied["error"]["code"], "forbidden", "{denied}");
    }

    // Revoked: its open connection is closed, and it is refused from then on.
    let revoke = weft(home, &["tokens", "revoke", "phone"]);
    assert!(revoke.status.success());
    let closed = tokio::time::timeout(Duration::from_secs(15), async {
        loop {
            match ws.next().await {
                None | Some(Err(_)) | Some(Ok(Message::Close(_))) => return,
                Some(Ok(_)) => {}
            }
        }
    })
    .await;
    assert!(closed.is_ok(), "the revoked token's connection stayed open");
    let (mut again, _) = tokio_tungstenite::connect_async(&server.url)
        .await
        .unwrap_or_else(|e| panic!("{e}"));
    let refused = hello(&mut again, &phone).await;
    assert_eq!(refused["error"]["code"], "forbidden", "{refused}");
    assert!(!weft(home, &["tokens", "revoke", "phone"]).status.success());
    let list = weft(home, &["tokens", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(!text.contains("phone") && text.contains("viewer"), "{text}");
}

/// `weft ARGS` in `home` with the listener's token in `WEFT_TOKEN`.
fn weft_with_token(home: &std::path::Path, token: &str, args: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_weft"))
        .args(args)
        .env("WEFT_HOME", home)
        .env("WEFT_TOKEN", token)
        .env_remove("WEFT_HOST")
        .stdin(Stdio::null())
        .output()
        .unwrap_or_else(|e| panic!("{e}"))
}

#[test]
fn a_wss_host_is_reached_straight_over_tls_with_its_key_pinned() {
    let theirs = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let made = weft_client::Home::at(theirs.path());
    let identity = weft_daemon::tls::own(&made, &["localhost".into(), "127.0.0.1".into()])
        .unwrap_or_else(|e| panic!("{e}"));
    let cert = weft_daemon::tls::cert_path(&made);
    let key = weft_daemon::tls::key_path(&made);
    let (cert, key) = (cert.to_str().unwrap_or(""), key.to_str().unwrap_or(""));
    let server = start_with(&[
        "--listen",
        "127.0.0.1:0",
        "--tls-cert",
        cert,
        "--tls-key",
        key,
    ]);
    let destination = format!("wss://{}", authority(&server.url));
    let client = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
    let said = |out: &std::process::Output| {
        format!(
            "{}\n{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    };

    // Added by its address and its key's fingerprint: reached at once, no ssh.
    let fp = identity.fingerprint.as_str();
    let add = ["hosts", "add", "lan", &destination, "--fingerprint", fp];
    let out = weft_with_token(client.path(), &server.token, &add);
    assert!(out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("its key pinned"), "{}", said(&out));
    // A turn runs there through --host, over the pinned TLS connection.
    let run = [
        "--host",
        "lan",
        "run",
        "--agent",
        "echo",
        "--json",
        "straight over tls",
    ];
    let out = weft_with_token(client.path(), &server.token, &run);
    assert!(out.status.success(), "{}", said(&out));
    let turn: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    assert!(
        turn["snapshot"]["text"]
            .as_str()
            .is_some_and(|t| t.contains("straight over tls")),
        "{turn}"
    );
    // Its status comes over the same pinned connection.
    let out = weft_with_token(client.path(), &server.token, &["hosts", "status", "--json"]);
    assert!(out.status.success(), "{}", said(&out));
    let all: Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{e}"));
    let lan = &all[1];
    assert_eq!(lan["name"], "lan", "{all}");
    assert_eq!(lan["reachable"], true, "{all}");
    assert!(lan["sessions"].as_u64().is_some_and(|n| n >= 1), "{all}");
    // The session is the served daemon's.
    let listed = weft(server.home.path(), &["sessions", "--all", "--json"]);
    assert!(
        String::from_utf8_lossy(&listed.stdout).contains("straight over tls"),
        "{}",
        said(&listed)
    );

    // Another key's fingerprint: the TLS handshake is refused, nothing is said.
    let wrong = "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=";
    let out = weft_with_token(
        client.path(),
        &server.token,
        &[
            "hosts",
            "add",
            "other",
            &destination,
            "--fingerprint",
            wrong,
        ],
    );
    assert!(!out.status.success(), "{}", said(&out));
    assert!(said(&out).contains("TLS"), "{}", said(&out));
    // Without the token, the server refuses the hello.
    let out = weft_with_token(client.path(), "", &run);
    assert!(!out.status.success(), "{}", said(&out));
    // An ssh host takes no fingerprint, and a wss one needs it.
    let out = weft_with_token(
        client.path(),
        "",
        &["hosts", "add", "x", "me@box", "--fingerprint", fp],
    );
    assert!(!out.status.success());
    let out = weft_with_token(client.path(), "", &["hosts", "add", "y", &destination]);
    assert!(!out.status.success());
}
