//! A WebSocket client of `weft serve`, as the browser UI is one: hello with the token,
//! prompt, subscribe, fold the patches in seq order, re-read the snapshot on a gap or a
//! resync. The client-drop fault drops its TCP connection mid-stream (no close frame)
//! and connects again.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use futures::{SinkExt, StreamExt};
use serde_json::{json, Value};
use tokio::time::Instant;
use tokio_tungstenite::tungstenite::Message;
use weft_protocol::{apply_in_place, SnapshotPatch, UniversalSnapshot};

use crate::follow::ended;

type Stream =
    tokio_tungstenite::WebSocketStream<tokio_tungstenite::MaybeTlsStream<tokio::net::TcpStream>>;

/// A `weft serve --listen 127.0.0.1:0` in front of the daemon of a home.
pub struct Serve {
    child: Child,
    url: String,
    token: String,
}

impl Drop for Serve {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Serve {
    /// Starts it and reads its address and token from the two lines it prints first.
    pub fn start(weft: &Path, home: &Path) -> Result<Serve, String> {
        let mut child = Command::new(weft)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .env("WEFT_HOME", home)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("weft serve: {e}"))?;
        let stderr = child.stderr.take().ok_or("weft serve: no stderr")?;
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut lines = BufReader::new(stderr).lines();
            let first = lines.next().and_then(Result::ok).unwrap_or_default();
            let second = lines.next().and_then(Result::ok).unwrap_or_default();
            let _ = tx.send((first, second));
            // Keep reading, so the server never blocks on a full pipe.
            for _ in lines {}
        });
        let mut serve = Serve {
            child,
            url: String::new(),
            token: String::new(),
        };
        let (first, second) = rx
            .recv_timeout(Duration::from_secs(30))
            .map_err(|_| "weft serve printed no address in 30 s".to_string())?;
        serve.url = first
            .trim()
            .strip_prefix("weft: serving on ")
            .ok_or_else(|| format!("weft serve: unexpected first line {first:?}"))?
            .to_string();
        serve.token = second
            .split_once("#token=")
            .map(|(_, t)| t.trim().to_string())
            .ok_or("weft serve printed no token")?;
        Ok(serve)
    }

    /// A connection that said hello with the control token.
    pub async fn connect(&self) -> Result<Ws, String> {
        let (stream, _) = tokio::time::timeout(
            Duration::from_secs(20),
            tokio_tungstenite::connect_async(&self.url),
        )
        .await
        .map_err(|_| "websocket connect timed out".to_string())?
        .map_err(|e| format!("websocket connect: {e}"))?;
        let mut ws = Ws {
            stream,
            next_id: 1,
            queued: Vec::new(),
            key: String::new(),
            snap: UniversalSnapshot::default(),
            seq: 0,
            patches: 0,
        };
        let hello = json!({"type": "hello", "version": "faults", "surface": "faults-ws", "token": self.token});
        ws.call(hello).await?;
        Ok(ws)
    }
}

/// One WebSocket connection, following at most one session.
pub struct Ws {
    stream: Stream,
    next_id: u64,
    /// Patches that came while a reply was awaited.
    queued: Vec<Value>,
    /// The session followed.
    pub key: String,
    /// What the patches made of it so far.
    pub snap: UniversalSnapshot,
    /// The last patch folded.
    pub seq: u64,
    /// Patches folded.
    pub patches: u64,
}

impl Ws {
    async fn frame(&mut self, deadline: Instant) -> Result<Value, String> {
        loop {
            let msg = tokio::time::timeout_at(deadline, self.stream.next())
                .await
                .map_err(|_| "websocket: timed out".to_string())?
                .ok_or("websocket: closed")?
                .map_err(|e| format!("websocket: {e}"))?;
            if let Message::Text(t) = msg {
                return serde_json::from_str(&t).map_err(|e| format!("websocket frame: {e}"));
            }
        }
    }

    /// Sends a request and returns its result (an error reply is an Err).
    pub async fn call(&mut self, mut request: Value) -> Result<Value, String> {
        let id = self.next_id;
        self.next_id += 1;
        request["id"] = json!(id);
        self.stream
            .send(Message::Text(request.to_string().into()))
            .await
            .map_err(|e| format!("websocket send: {e}"))?;
        let deadline = Instant::now() + Duration::from_secs(20);
        loop {
            let msg = self.frame(deadline).await?;
            if msg["type"] == "patch" || msg["type"] == "resync" {
                self.queued.push(msg);
            } else if msg["id"] == id {
                return match msg["type"].as_str() {
                    Some("reply") => Ok(msg["result"].clone()),
                    _ => Err(format!("websocket: {} refused: {msg}", request["type"])),
                };
            }
        }
    }

    /// Prompts the echo agent; returns the session and task.
    pub async fn prompt(
        &mut self,
        workdir: &Path,
        prompt: &str,
    ) -> Result<(String, String), String> {
        let r = self
            .call(json!({"type": "prompt", "agent": "echo", "prompt": prompt, "workdir": workdir}))
            .await?;
        let s = |k: &str| {
            r[k].as_str()
                .map(str::to_string)
                .ok_or(format!("no {k} in {r}"))
        };
        Ok((s("sessionKey")?, s("taskId")?))
    }

    /// Subscribes to `key`, starting from the daemon's snapshot.
    pub async fn subscribe(&mut self, key: &str) -> Result<(), String> {
        self.key = key.to_string();
        let at = self
            .call(json!({"type": "subscribe", "sessionKey": key}))
            .await?;
        self.take(&at)
    }

    fn take(&mut self, at: &Value) -> Result<(), String> {
        self.snap = serde_json::from_value(at["snapshot"].clone())
            .map_err(|e| format!("websocket snapshot: {e}"))?;
        self.seq = at["seq"].as_u64().unwrap_or_default();
        Ok(())
    }

    /// Folds `n` more patches, or until `task` ends.
    pub async fn until_patches(
        &mut self,
        deadline: Instant,
        n: u64,
        task: &str,
    ) -> Result<(), String> {
        let start = self.patches;
        while self.patches - start < n && !ended(&self.snap, task) {
            self.step(deadline).await?;
        }
        Ok(())
    }

    /// Folds until the follower holds `want`, or `deadline`.
    pub async fn settle(
        &mut self,
        deadline: Instant,
        want: &UniversalSnapshot,
    ) -> Result<(), String> {
        while self.snap != *want {
            self.step(deadline).await?;
        }
        Ok(())
    }

    async fn step(&mut self, deadline: Instant) -> Result<(), String> {
        let msg = if self.queued.is_empty() {
            self.frame(deadline).await?
        } else {
            self.queued.remove(0)
        };
        let mine = msg["sessionKey"].as_str().is_none_or(|k| k == self.key);
        match msg["type"].as_str() {
            Some("patch") if mine => {
                let seq = msg["seq"].as_u64().unwrap_or_default();
                let from = msg["from"].as_u64().unwrap_or(seq);
                if from == self.seq + 1 {
                    let patch: SnapshotPatch = serde_json::from_value(msg["patch"].clone())
                        .map_err(|e| format!("websocket patch: {e}"))?;
                    apply_in_place(&mut self.snap, &patch);
                    self.seq = seq;
                    self.patches += 1;
                } else if seq > self.seq {
                    self.reread().await?;
                }
            }
            Some("resync") if mine => self.reread().await?,
            _ => {}
        }
        Ok(())
    }

    async fn reread(&mut self) -> Result<(), String> {
        let key = self.key.clone();
        let at = self
            .call(json!({"type": "getSnapshot", "sessionKey": key}))
            .await?;
        self.take(&at)
    }

    /// Drops the connection as a crashed browser tab does: no close frame.
    pub fn drop_abruptly(self) {
        drop(self.stream);
    }
}
