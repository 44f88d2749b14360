//! The running server every vendor module hands out (`AnthropicServer` and the others
//! are this, named for their [`Wire`]): start, record, push turns, shut down. What
//! differs between vendors (the routes, which requests the script answers, how a turn
//! renders) is the [`Wire`] they plug in.

use std::io;
use std::sync::Arc;
use std::time::Duration;

use parking_lot::Mutex;
use serde_json::Value;

use crate::playbook::{Extra, Script};
use crate::server::{RecordedRequest, Recorder, Reply, Responder, ScriptedServer};

/// One vendor's wire format, as a scripted server speaks it.
pub trait Wire: Send + Sync + 'static {
    /// A request the script answers.
    type Request: 'static;
    /// The vendor's reply builder.
    type Turn: Clone + From<crate::script::Turn> + Send;
    /// What the vendor's script keeps besides its turns.
    type Extra: Extra<Self::Request, Self::Turn> + Send;

    /// The request `r` is, when it is on the route the script answers (the others are
    /// model listings, token counts and 404s).
    fn request(r: &RecordedRequest) -> Option<Self::Request>;

    /// The reply to `r`, chosen from `script` for a request it answers.
    fn respond(script: &Mutex<ScriptOf<Self>>, r: &RecordedRequest) -> Reply;

    /// Whether `r` is of the agent's main loop rather than a side request a test
    /// leaves out (Gemini's JSON-mode ones).
    fn is_main(_r: &Self::Request) -> bool {
        true
    }
}

/// The script of wire `W`.
pub type ScriptOf<W> = Script<<W as Wire>::Request, <W as Wire>::Turn, <W as Wire>::Extra>;

struct WireResponder<W: Wire> {
    script: Mutex<ScriptOf<W>>,
}

impl<W: Wire> Responder for WireResponder<W> {
    fn respond(&self, request: &RecordedRequest) -> Reply {
        W::respond(&self.script, request)
    }
}

/// A running scripted server of wire `W`. Dropping it shuts it down.
pub struct Served<W: Wire> {
    server: ScriptedServer,
    responder: Arc<WireResponder<W>>,
}

impl<W: Wire> Served<W> {
    /// Serves `script` on 127.0.0.1, a free port, until dropped.
    pub async fn start(script: impl Into<ScriptOf<W>>) -> io::Result<Self> {
        Self::start_with_shutdown(script, std::future::pending()).await
    }

    /// Like [`Served::start`], also stopping when `shutdown` resolves.
    pub async fn start_with_shutdown(
        script: impl Into<ScriptOf<W>>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> io::Result<Self> {
        Self::start_recording(script, shutdown, Recorder::default()).await
    }

    /// Like [`Served::start_with_shutdown`], recording into `recorder` (one
    /// [`Recorder::keeping_last`] a few for a long run: a resumed session sends its
    /// whole conversation in every request).
    pub async fn start_recording(
        script: impl Into<ScriptOf<W>>,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
        recorder: Recorder,
    ) -> io::Result<Self> {
        let responder = Arc::new(WireResponder::<W> {
            script: Mutex::new(script.into()),
        });
        let server = ScriptedServer::start_recording(responder.clone(), shutdown, recorder).await?;
        Ok(Self { server, responder })
    }

    /// `http://127.0.0.1:PORT`: what the agent's base URL setting should be.
    pub fn base_url(&self) -> String {
        self.server.base_url()
    }

    /// The recorder of every request (side routes and 404s included).
    pub fn recorder(&self) -> &Recorder {
        self.server.recorder()
    }

    /// Every request the script answers so far, in order.
    pub(crate) fn requests(&self) -> Vec<W::Request> {
        self.recorder()
            .requests()
            .iter()
            .filter_map(W::request)
            .collect()
    }

    /// The whole text of every main-loop request so far, in order: what the agent sent
    /// the model, as a conformance harness reports it.
    pub fn request_texts(&self) -> Vec<String>
    where
        W::Request: crate::script::ModelRequest,
    {
        self.requests()
            .iter()
            .filter(|r| W::is_main(r))
            .map(crate::script::ModelRequest::all_text)
            .collect()
    }

    /// Waits until at least `n` requests `pred` takes arrived, or `timeout` passes.
    pub(crate) async fn wait_for_count(
        &self,
        n: usize,
        timeout: Duration,
        pred: impl Fn(&RecordedRequest) -> bool,
    ) -> bool {
        self.recorder()
            .wait_until(timeout, |reqs| reqs.iter().filter(|r| pred(r)).count() >= n)
            .await
    }

    /// Waits until at least `n` requests the script answers arrived, or `timeout`
    /// passes.
    pub(crate) async fn wait_for_answered(&self, n: usize, timeout: Duration) -> bool {
        self.wait_for_count(n, timeout, |r| W::request(r).is_some())
            .await
    }

    /// Queues one more turn while running.
    pub fn push_turn(&self, turn: impl Into<W::Turn>) {
        self.responder.script.lock().book.queue(None, turn.into());
    }

    /// Turns still queued.
    pub fn queued_turns(&self) -> usize {
        self.responder.script.lock().book.queued()
    }

    /// Stops the server at once, cutting open streams (a crashed model server).
    pub async fn shutdown(self) {
        self.server.shutdown().await
    }
}

/// The script's choice for `req`, and how many requests it has answered.
pub(crate) fn choose<W: Wire>(script: &Mutex<ScriptOf<W>>, req: &W::Request) -> (W::Turn, usize) {
    let mut script = script.lock();
    let turn = script.choose(req);
    (turn, script.served)
}

/// A JSON array's items; none when `v` is absent or not an array (a request body's
/// optional lists).
pub(crate) fn items(v: &Value) -> &[Value] {
    v.as_array().map(Vec::as_slice).unwrap_or(&[])
}

/// The `model` a body names (every wire but Gemini's, whose path names it).
pub(crate) fn model_of(body: &Value) -> &str {
    body["model"].as_str().unwrap_or_default()
}

/// Whether a body says `stream: true`.
pub(crate) fn stream_of(body: &Value) -> bool {
    body["stream"].as_bool().unwrap_or(false)
}
