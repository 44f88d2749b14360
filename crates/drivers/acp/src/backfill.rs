//! Tool output an agent keeps out of its ACP updates, read back after the turn.
//!
//! gemini 0.61.0 sends `tool_call_update`s without any content; the output is only in
//! its session file. A spec may name a [`ToolOutputFn`] that reads such results; the
//! driver then records the turn's tool calls as they pass ([`Recording`]) and, once
//! the turn ends, re-emits each finished call that has no result with the one read
//! back (a failure there marks the call failed).

use std::collections::HashMap;

use parking_lot::Mutex;
use tokio::sync::{mpsc, oneshot};
use weft_kernel::driver::{DriverContext, TurnSink};
use weft_protocol::{DriverEvent, Interaction, InteractionResponse, ToolCall, ToolStatus};

/// What an agent recorded for one tool call.
#[derive(Debug, Clone, PartialEq)]
pub struct ToolOutput {
    /// It succeeded.
    pub ok: bool,
    /// Its output (or error).
    pub text: String,
    /// Its input, when the updates left it out.
    pub input: Option<serde_json::Value>,
}

/// Reads a session's tool results, by call id, given the spawn environment (for
/// `HOME`) and the agent's session id.
pub type ToolOutputFn = fn(&[(String, String)], &str) -> HashMap<String, ToolOutput>;

/// Passes everything through to the turn's context, remembering tool calls.
pub struct Recording {
    ctx: DriverContext,
    tools: Mutex<Vec<ToolCall>>,
}

impl Recording {
    /// A recorder in front of `ctx`.
    pub fn new(ctx: DriverContext) -> Self {
        Self {
            ctx,
            tools: Mutex::new(Vec::new()),
        }
    }

    /// Finished calls that carry no result.
    pub fn missing(&self) -> Vec<ToolCall> {
        self.tools
            .lock()
            .iter()
            .filter(|t| t.result.is_none() && t.status != ToolStatus::Running)
            .cloned()
            .collect()
    }
}

impl TurnSink for Recording {
    fn emit(&self, event: DriverEvent) {
        if let DriverEvent::Tool { call } = &event {
            let mut tools = self.tools.lock();
            match tools.iter_mut().find(|t| t.id == call.id) {
                Some(t) => *t = call.clone(),
                None => tools.push(call.clone()),
            }
        }
        self.ctx.emit(event)
    }

    fn ask(&self, interaction: Interaction) -> oneshot::Receiver<InteractionResponse> {
        let (tx, rx) = oneshot::channel();
        let ctx = self.ctx.clone();
        tokio::spawn(async move {
            let _ = tx.send(ctx.ask_user(interaction).await);
        });
        rx
    }

    fn register_steer(&self) -> mpsc::UnboundedReceiver<weft_kernel::driver::Steer> {
        self.ctx.register_steer()
    }
}

/// Re-emits `missing` calls with what `read` finds for them.
pub async fn fill(
    read: ToolOutputFn,
    env: Vec<(String, String)>,
    session_id: String,
    missing: Vec<ToolCall>,
    ctx: &DriverContext,
) {
    if missing.is_empty() {
        return;
    }
    let results = tokio::task::spawn_blocking(move || read(&env, &session_id))
        .await
        .unwrap_or_default();
    for mut call in missing {
        if let Some(out) = results.get(&call.id) {
            call.result = Some(out.text.clone());
            if !out.ok {
                call.status = ToolStatus::Failed;
            }
            let empty =
                call.input.as_object().is_some_and(|o| o.is_empty()) || call.input.is_null();
            if let (true, Some(input)) = (empty, &out.input) {
                call.input = input.clone();
            }
            ctx.emit(DriverEvent::Tool { call });
        }
    }
}
