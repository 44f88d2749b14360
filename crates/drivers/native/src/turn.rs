//! One turn of the loop: stream a step, run its tool calls through the guard chain
//! (read-only calls side by side, mutating ones in order), feed the results back, and
//! repeat until the model answers without tools, the step limit, or stop; then the
//! pack's verify step, at most twice. Steers join at step boundaries. Every message is
//! on disk before the next request is made.

use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use futures::future::join_all;
use serde_json::Value;
use tokio::sync::mpsc::UnboundedReceiver;
use weft_kernel::{DriverContext, DriverResult, Steer};
use weft_protocol::{DriverEvent, ToolCall, ToolStatus, Usage};

use crate::compact;
use crate::config::Endpoint;
use crate::conversation::{Block, Message, Origin, Role};
use crate::guard::{Call, GuardChain, GuardCx, SessionFlags, Verdict};
use crate::model::{
    with_retries, ModelClient, ModelError, ModelRequest, RetryPolicy, StopReason, StreamEvent,
    TokenUsage, ToolSpec,
};
use crate::pack::DomainPack;
use crate::store::{self, Record};
use crate::tools::{ToolCx, ToolOutput, ToolRef, Workspace};

/// Everything a turn runs with.
#[derive(Clone)]
pub struct TurnSetup {
    /// The model client.
    pub client: Arc<dyn ModelClient>,
    /// Its endpoint.
    pub endpoint: Endpoint,
    /// The session's pack.
    pub pack: Arc<dyn DomainPack>,
    /// The tools offered (the pack's and the loop's own).
    pub tools: Vec<ToolRef>,
    /// The system prompt.
    pub system: String,
    /// Step limit.
    pub max_steps: usize,
    /// Retry policy for failures before a response.
    pub retry: RetryPolicy,
    /// Environment for processes tools, hooks and the check start: the turn's,
    /// without credentials ([`crate::secrets`]).
    pub env: Vec<(String, String)>,
    /// The workspace's `.weft/native.toml` (defaults in a workspace not trusted).
    pub settings: crate::settings::Settings,
    /// Weft's home (session files).
    pub home: PathBuf,
    /// The session id.
    pub session_id: String,
    /// The task id.
    pub task_id: String,
    /// Reasoning effort.
    pub effort: Option<String>,
    /// The pack's name (recorded with plan mode).
    pub pack_name: String,
    /// Set for a subagent's loop: the `task` call it runs under. Its messages are not
    /// persisted, its text and usage are not the turn's, its tool calls carry this id.
    pub parent: Option<String>,
}

/// How many times the verify step may send the model back.
const VERIFY_ROUNDS: usize = 2;

pub(crate) struct Turn<'a> {
    setup: &'a TurnSetup,
    ctx: &'a DriverContext,
    workspace: &'a Workspace,
    flags: &'a SessionFlags,
    messages: &'a mut Vec<Message>,
    chain: GuardChain,
    usage: TokenUsage,
    last: TokenUsage,
    wrote_text: bool,
    mutated: bool,
    planned: bool,
}

impl Turn<'_> {
    fn persist(&self, m: &Message) {
        if self.setup.parent.is_some() {
            return;
        }
        if let Err(e) = store::append(
            &self.setup.home,
            &self.setup.session_id,
            &[Record::Msg { m: m.clone() }],
        ) {
            tracing::warn!("the native session could not be saved: {e}");
            self.ctx.emit(DriverEvent::Notice {
                text: format!("the conversation could not be saved: {e}"),
            });
        }
    }

    pub(crate) fn setup(&self) -> &TurnSetup {
        self.setup
    }

    pub(crate) fn workspace(&self) -> &Workspace {
        self.workspace
    }

    pub(crate) fn ctx(&self) -> &DriverContext {
        self.ctx
    }

    pub(crate) fn flags(&self) -> &SessionFlags {
        self.flags
    }

    pub(crate) fn chain(&self) -> &GuardChain {
        &self.chain
    }

    pub(crate) fn last_text(&self) -> String {
        self.messages
            .iter()
            .rev()
            .find(|m| m.role == Role::Assistant)
            .map(Message::text)
            .unwrap_or_default()
    }

    pub(crate) fn planned(&self) -> bool {
        self.planned
    }

    fn push(&mut self, m: Message) {
        self.persist(&m);
        self.messages.push(m);
    }

    fn result(&self, ok: bool, error: Option<String>) -> DriverResult {
        DriverResult {
            ok,
            error,
            session_id: Some(self.setup.session_id.clone()),
            text: self.setup.parent.as_ref().map(|_| self.last_text()),
        }
    }

    fn steers(&mut self, rx: &mut UnboundedReceiver<Steer>, pending: &mut Vec<Steer>) {
        while let Ok(s) = rx.try_recv() {
            pending.push(s);
        }
    }

    fn usage_last_context(&self) -> u64 {
        self.last.input + self.last.output
    }

    fn report_usage(&self, last: TokenUsage) {
        if self.setup.parent.is_some() {
            return;
        }
        let window = self.setup.endpoint.context_window.max(1);
        let used = last.input + last.output;
        self.ctx.emit(DriverEvent::Usage {
            usage: Usage {
                input_tokens: Some(self.usage.input),
                output_tokens: Some(self.usage.output),
                cached_input_tokens: Some(self.usage.cache_read),
                context_used_tokens: Some(used),
                context_percent: Some(used as f64 * 100.0 / window as f64),
                cost_usd: None,
                provider_name: Some(self.setup.client.provider_name().to_string()),
            },
        });
    }

    async fn model_step(
        &mut self,
    ) -> Result<(Vec<Block>, TokenUsage, StopReason), (ModelError, String)> {
        let specs: Vec<ToolSpec> = self
            .setup
            .tools
            .iter()
            .map(|t| ToolSpec {
                name: t.name().into(),
                description: t.description().into(),
                schema: t.schema(),
            })
            .collect();
        let ctx = self.ctx.clone();
        let cancel = ctx.cancel_token();
        let mut partial = String::new();
        let mut first = true;
        let separate = self.wrote_text;
        let quiet = self.setup.parent.is_some();
        let mut sink = |ev: StreamEvent| match ev {
            _ if quiet => {}
            StreamEvent::Text(t) => {
                if first && separate {
                    ctx.emit(DriverEvent::Text {
                        delta: "\n\n".into(),
                    });
                }
                first = false;
                partial.push_str(&t);
                ctx.emit(DriverEvent::Text { delta: t });
            }
            StreamEvent::Reasoning(r) => ctx.emit(DriverEvent::Reasoning { delta: r }),
            StreamEvent::ToolStart { .. } => {}
        };
        let ctx2 = self.ctx.clone();
        let mut on_retry = |e: &ModelError, wait: Duration| {
            ctx2.emit(DriverEvent::Notice {
                text: format!("{e}; trying again in {:.1} s", wait.as_secs_f64()),
            });
        };
        let request = ModelRequest {
            model: &self.setup.endpoint.model,
            system: &self.setup.system,
            messages: self.messages,
            tools: &specs,
            max_tokens: 16_384,
            effort: self.setup.effort.as_deref(),
        };
        let result = with_retries(
            self.setup.client.as_ref(),
            request,
            self.setup.retry,
            &cancel,
            &mut sink,
            &mut on_retry,
        )
        .await;
        let wrote = !first;
        match result {
            Ok(reply) => {
                self.wrote_text |= wrote;
                Ok((reply.blocks, reply.usage, reply.stop))
            }
            Err(e) => {
                self.wrote_text |= wrote;
                Err((e, partial))
            }
        }
    }

    async fn compact(&mut self) -> Result<bool, ModelError> {
        self.ctx.emit(DriverEvent::Activity {
            text: "compacting the conversation".into(),
        });
        let before = self.messages.len();
        let started = std::time::Instant::now();
        let done = compact::compact(
            self.messages,
            self.setup.client.as_ref(),
            &self.setup.endpoint.model,
            &self.ctx.cancel_token(),
        )
        .await;
        self.ctx.emit(DriverEvent::Activity {
            text: String::new(),
        });
        if let Ok(true) = done {
            let _ = store::append(
                &self.setup.home,
                &self.setup.session_id,
                &[Record::Reset {
                    messages: self.messages.clone(),
                }],
            );
            self.ctx.emit(DriverEvent::Notice {
                text: format!(
                    "compacted: {before} earlier messages were summarized into one for the model ({} ms); the whole transcript stays here",
                    started.elapsed().as_millis()
                ),
            });
        }
        done
    }

    fn tool(&self, name: &str) -> Option<&ToolRef> {
        self.setup.tools.iter().find(|t| t.name() == name)
    }

    /// The call as the snapshot shows it.
    fn call_row(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        status: ToolStatus,
        result: Option<String>,
        changes: &[weft_protocol::FileChange],
    ) -> ToolCall {
        let (summary, kind) = match self.tool(name) {
            Some(t) => (t.summary(input), t.kind()),
            None => (
                if name.is_empty() {
                    "(no tool named)".into()
                } else {
                    name.to_string()
                },
                Default::default(),
            ),
        };
        ToolCall {
            id: id.into(),
            name: name.into(),
            summary,
            input: input.clone(),
            result,
            status,
            kind,
            parent_id: self.setup.parent.clone(),
            changes: changes.to_vec(),
        }
    }

    fn emit_call(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        status: ToolStatus,
        result: Option<String>,
        changes: &[weft_protocol::FileChange],
    ) {
        self.ctx.emit(DriverEvent::Tool {
            call: self.call_row(id, name, input, status, result, changes),
        });
    }

    /// Shows a call as running, with the changes it would make measured against the
    /// files before it runs (afterwards they hold the new text).
    fn announce(&self, id: &str, name: &str, input: &Value) -> Vec<weft_protocol::FileChange> {
        let changes = file_changes(self.workspace.root(), name, input);
        self.emit_call(id, name, input, ToolStatus::Running, None, &changes);
        changes
    }

    /// Runs one announced call from the guard chain to its result.
    async fn run_call(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        changes: Vec<weft_protocol::FileChange>,
    ) -> ToolOutput {
        let output = self.call_output(id, name, input, &changes).await;
        if !output.is_error {
            self.workspace.mark_used(name);
        }
        // Every result, of any tool (MCP tools and subagents too), passes the context
        // fuse's cap before the snapshot, the hooks or the model see it.
        let content = self.chain.output(output.content);
        let status = if output.is_error {
            ToolStatus::Failed
        } else {
            ToolStatus::Done
        };
        self.emit_call(id, name, input, status, Some(content.clone()), &changes);
        if self.tool(name).is_some() {
            crate::hooks::post_tool_use(
                self.workspace.root(),
                self.flags.workspace_trusted,
                &self.setup.env,
                crate::hooks::Finished {
                    tool: name,
                    input,
                    output: &content,
                    is_error: output.is_error,
                },
            )
            .await;
        }
        ToolOutput {
            content,
            is_error: output.is_error,
        }
    }

    async fn call_output(
        &self,
        id: &str,
        name: &str,
        input: &Value,
        changes: &[weft_protocol::FileChange],
    ) -> ToolOutput {
        if name.is_empty() {
            return ToolOutput::error("the call names no tool");
        }
        let Some(tool) = self.tool(name) else {
            let names: Vec<&str> = self.setup.tools.iter().map(|t| t.name()).collect();
            return ToolOutput::error(format!(
                "there is no tool named {name:?}; the tools are: {}",
                names.join(", ")
            ));
        };
        // Arguments no tool can run with are answered before the chain: nothing would
        // run, so there is nothing to guard, and the user is not asked to confirm a call
        // that cannot happen. Every other call passes the whole chain.
        if let Some(refusal) = crate::tools::unusable_args(name, input) {
            return refusal;
        }
        let call = Call {
            id,
            name,
            input,
            tool: tool.as_ref(),
        };
        let is_task = tool.kind() == weft_protocol::ToolKind::Task;
        let gcx = GuardCx {
            workspace: self.workspace,
            pack: self.setup.pack.as_ref(),
            flags: self.flags,
            ctx: self.ctx,
            env: &self.setup.env,
        };
        if let Verdict::Deny(reason) = self.chain.check(&call, &gcx).await {
            return ToolOutput::error(reason);
        }
        if is_task {
            return crate::subagent::run(self, id, input).await;
        }
        let cancel = self.ctx.cancel_token();
        let progress = crate::tools::Progress::new(
            self.ctx.clone(),
            self.call_row(id, name, input, ToolStatus::Running, None, changes),
        );
        let tcx = ToolCx {
            workspace: self.workspace,
            cancel: &cancel,
            env: &self.setup.env,
            ctx: self.ctx,
            progress: &progress,
        };
        tool.run(input, &tcx).await
    }

    /// Runs the calls: consecutive read-only ones side by side, mutating ones alone
    /// and in order. Results come back in the calls' order.
    async fn run_calls(&mut self, calls: Vec<(String, String, Value)>) -> Vec<Block> {
        let mut results = Vec::with_capacity(calls.len());
        let mut i = 0;
        while i < calls.len() {
            if self.ctx.is_cancelled() {
                break;
            }
            let read_only =
                |c: &(String, String, Value)| self.tool(&c.1).is_some_and(|t| t.read_only());
            let mut j = i + 1;
            if read_only(&calls[i]) {
                while j < calls.len() && read_only(&calls[j]) {
                    j += 1;
                }
            } else if self.tool(&calls[i].1).is_some() {
                self.mutated = true;
            }
            if batch_has_plan(&calls[i..j], self) {
                self.planned = true;
            }
            let batch = &calls[i..j];
            // Every call of a side-by-side batch shows as running before any runs: a
            // read that finishes without yielding would otherwise end before the next
            // one is even shown, and the batch would look (and be checked as) serial.
            let announced: Vec<_> = batch
                .iter()
                .map(|(id, name, input)| self.announce(id, name, input))
                .collect();
            let outs = join_all(
                batch
                    .iter()
                    .zip(announced)
                    .map(|((id, name, input), changes)| self.run_call(id, name, input, changes)),
            )
            .await;
            for ((id, name, _), out) in batch.iter().zip(outs) {
                results.push(Block::ToolResult {
                    id: id.clone(),
                    name: name.clone(),
                    content: out.content,
                    is_error: out.is_error,
                });
            }
            i = j;
        }
        results
    }

    async fn verify(&mut self) -> Option<String> {
        let cmd = self.setup.pack.verify_command(&self.setup.settings)?;
        self.ctx.emit(DriverEvent::Activity {
            text: format!("checking: {cmd}"),
        });
        let id = format!("verify-{}", uuid::Uuid::new_v4());
        let input = serde_json::json!({"command": cmd});
        self.emit_call(&id, "verify", &input, ToolStatus::Running, None, &[]);
        let progress = crate::tools::Progress::new(
            self.ctx.clone(),
            self.call_row(&id, "verify", &input, ToolStatus::Running, None, &[]),
        );
        let out = crate::tools::bash::run_in(
            &cmd,
            self.workspace.root(),
            &self.setup.env,
            &self.ctx.cancel_token(),
            Duration::from_secs(600),
            None,
            Some(&progress),
        )
        .await;
        let content = self.chain.output(out.content);
        let status = if out.is_error {
            ToolStatus::Failed
        } else {
            ToolStatus::Done
        };
        self.emit_call(&id, "verify", &input, status, Some(content.clone()), &[]);
        self.ctx.emit(DriverEvent::Activity {
            text: String::new(),
        });
        out.is_error.then(|| format!("The check `{cmd}` failed after your changes:\n{content}\nFix the problems, then answer again."))
    }
}

fn batch_has_plan(calls: &[(String, String, Value)], turn: &Turn<'_>) -> bool {
    calls.iter().any(|c| {
        turn.tool(&c.1)
            .is_some_and(|t| t.kind() == weft_protocol::ToolKind::Plan)
    })
}

/// Runs one turn of `messages` (the new prompt is already the last one).
pub async fn run(
    setup: &TurnSetup,
    ctx: &DriverContext,
    workspace: &Workspace,
    flags: &SessionFlags,
    messages: &mut Vec<Message>,
) -> DriverResult {
    // A subagent's steers belong to its parent turn.
    let mut steer_rx = match setup.parent {
        None => ctx.register_steer(),
        Some(_) => tokio::sync::mpsc::unbounded_channel().1,
    };
    let mut turn = Turn {
        setup,
        ctx,
        workspace,
        flags,
        messages,
        chain: GuardChain::standard(),
        usage: TokenUsage::default(),
        last: TokenUsage::default(),
        wrote_text: false,
        mutated: false,
        planned: false,
    };
    let mut pending: Vec<Steer> = Vec::new();
    let mut steps = 0usize;
    let mut verify_rounds = 0usize;
    let mut compacted_for_error = false;
    loop {
        turn.steers(&mut steer_rx, &mut pending);
        for steer in pending.drain(..) {
            // Its attachments go as a prompt's do: images as blocks, files named.
            let message = crate::attachments::user_message(&steer.text, &steer.attachments)
                .unwrap_or_else(|e| {
                    ctx.emit(DriverEvent::Notice {
                        text: format!("the steer's attachments were left out: {e}"),
                    });
                    Message::user(steer.text.clone())
                });
            turn.push(message.with_origin(Origin::Steer));
            ctx.emit(DriverEvent::Notice {
                text: format!(
                    "steer injected at step {steps}: the model sees it before its next step"
                ),
            });
        }
        if ctx.is_cancelled() {
            return turn.result(false, None);
        }
        if steps >= setup.max_steps {
            let why = format!(
                "stopped after {} steps (maxSteps) without a final answer; send another prompt to go on",
                setup.max_steps
            );
            ctx.emit(DriverEvent::Notice { text: why.clone() });
            return turn.result(false, Some(why));
        }
        let window = setup.endpoint.context_window as f64;
        let last_used = turn.usage_last_context();
        if window > 0.0 && last_used as f64 > window * compact::THRESHOLD {
            if let Err(e) = turn.compact().await {
                tracing::warn!("compaction failed: {e}");
            }
        }
        steps += 1;
        let (blocks, usage, stop) = match turn.model_step().await {
            Ok(r) => r,
            Err((ModelError::ContextWindow(msg), _)) if !compacted_for_error => {
                compacted_for_error = true;
                steps -= 1;
                match turn.compact().await {
                    Ok(true) => continue,
                    _ => return turn.result(false, Some(format!("the context window is exceeded and the conversation cannot be compacted: {msg}"))),
                }
            }
            Err((e, partial)) => {
                if !partial.is_empty() {
                    turn.push(Message {
                        role: Role::Assistant,
                        blocks: vec![Block::Text { text: partial }],
                        origin: Origin::Normal,
                    });
                }
                return match e {
                    ModelError::Cancelled => turn.result(false, None),
                    e => turn.result(false, Some(e.to_string())),
                };
            }
        };
        compacted_for_error = false;
        turn.usage.input += usage.input;
        turn.usage.output += usage.output;
        turn.usage.cache_read += usage.cache_read;
        turn.usage.cache_write += usage.cache_write;
        turn.last = usage;
        turn.report_usage(usage);
        let calls: Vec<(String, String, Value)> = blocks
            .iter()
            .filter_map(|b| match b {
                Block::ToolUse {
                    id, name, input, ..
                } => Some((id.clone(), name.clone(), input.clone())),
                _ => None,
            })
            .collect();
        turn.push(Message {
            role: Role::Assistant,
            blocks,
            origin: Origin::Normal,
        });
        if calls.is_empty() {
            turn.steers(&mut steer_rx, &mut pending);
            if !pending.is_empty() {
                continue;
            }
            if stop == StopReason::MaxTokens {
                ctx.emit(DriverEvent::Notice {
                    text: "the reply hit the output token limit".into(),
                });
            }
            if setup.parent.is_some() {
                return turn.result(true, None);
            }
            if flags.plan_mode.load(std::sync::atomic::Ordering::Relaxed) {
                match crate::commands::leave_plan_mode(&turn, ctx).await {
                    Some(go_on) => {
                        turn.push(go_on);
                        continue;
                    }
                    None => return turn.result(true, None),
                }
            }
            if turn.mutated {
                if let Some(feedback) = turn.verify().await {
                    if verify_rounds < VERIFY_ROUNDS {
                        verify_rounds += 1;
                        turn.push(Message::user(feedback).with_origin(Origin::Verify));
                        continue;
                    }
                    ctx.emit(DriverEvent::Notice {
                        text: format!(
                            "the pack's check still fails after {VERIFY_ROUNDS} rounds of fixes; the turn ends with it failing"
                        ),
                    });
                }
            }
            return turn.result(true, None);
        }
        let results = turn.run_calls(calls).await;
        turn.push(Message {
            role: Role::User,
            blocks: results,
            origin: Origin::Normal,
        });
        if ctx.is_cancelled() {
            return turn.result(false, None);
        }
    }
}

/// The file a `write` or `edit` call changes, against the workspace's file as it is
/// before the call runs.
fn file_changes(
    root: &std::path::Path,
    name: &str,
    input: &Value,
) -> Vec<weft_protocol::FileChange> {
    let text = |k: &str| input[k].as_str().unwrap_or_default();
    let path = text("path");
    if path.is_empty() {
        return Vec::new();
    }
    match name {
        "write" => vec![weft_kernel::changes::write_on_disk(
            Some(root),
            path,
            text("content"),
        )],
        "edit" => vec![weft_kernel::changes::replace_on_disk(
            Some(root),
            path,
            &[(text("old_text"), text("new_text"), false)],
        )],
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod change_tests {
    use super::*;

    #[test]
    fn an_edit_and_a_write_are_diffed_against_the_workspace_file() {
        let dir = tempfile::tempdir().unwrap_or_else(|e| panic!("{e}"));
        let _ = std::fs::write(dir.path().join("notes.txt"), "one\ntwo\nthree\n");
        let edit = serde_json::json!({"path": "notes.txt", "old_text": "two", "new_text": "2"});
        let c = file_changes(dir.path(), "edit", &edit);
        assert_eq!(
            c[0].diff,
            "--- a/notes.txt\n+++ b/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n"
        );
        let write = serde_json::json!({"path": "new.txt", "content": "hi\n"});
        assert_eq!(
            file_changes(dir.path(), "write", &write)[0].kind,
            weft_protocol::ChangeKind::Add
        );
        assert!(file_changes(dir.path(), "read", &edit).is_empty());
    }
}
