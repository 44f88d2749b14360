//! The one place every tool call passes before it runs: a chain of steps, each
//! allowing it or refusing it with a reason the model is told, and the one place its
//! result passes on its way back to the model.
//!
//! The chain, in its fixed order (DESIGN.md): plan mode → the context fuse (the same
//! call repeated too often in a row; every result capped) → the pack's pre-tool
//! policy → PreToolUse hooks → permission (for `bash`: deny rules → classify → sandbox
//! → allow rules → mode → confirm, in [`crate::shell`]; for other mutating tools the
//! session's mode, then the user). The loop runs every call the model makes through
//! [`GuardChain::check`], MCP tools and `task` subagents included, and nothing else
//! runs a tool; a call whose arguments no tool could run with is answered before the
//! chain and never runs ([`crate::tools::unusable_args`]).

use std::collections::HashSet;

use async_trait::async_trait;
use parking_lot::Mutex;
use serde_json::Value;
use weft_kernel::DriverContext;
use weft_protocol::{
    permission, Choice, InteractAction, Interaction, InteractionKind, Question, QuestionType,
};

use crate::pack::{DomainPack, PermissionMode};
use crate::tools::{Tool, Workspace};

/// A call about to run.
pub struct Call<'a> {
    /// Its id.
    pub id: &'a str,
    /// The tool's name.
    pub name: &'a str,
    /// Its arguments.
    pub input: &'a Value,
    /// The tool.
    pub tool: &'a dyn Tool,
}

/// A step's answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// Go on to the next step (the last step's allow runs the call).
    Allow,
    /// Refused; the reason goes back to the model as the call's error.
    Deny(String),
}

/// The session's standing: plan mode, permission mode, tools allowed for the session.
pub struct SessionFlags {
    /// Mutating tools are refused and the model is asked for a plan.
    pub plan_mode: std::sync::atomic::AtomicBool,
    /// Whether mutating calls ask first.
    pub permission: PermissionMode,
    /// Tools the user allowed for the rest of the session.
    pub allowed: Mutex<HashSet<String>>,
    /// How shell commands are judged and sandboxed.
    pub shell: crate::shell::ShellFlags,
    /// The user trusted the workspace: its hooks run and its allow rules count
    /// (`AgentTurnInput::workspace_trusted`).
    pub workspace_trusted: bool,
}

/// What a step may look at.
pub struct GuardCx<'a> {
    /// The workspace.
    pub workspace: &'a Workspace,
    /// The session's pack.
    pub pack: &'a dyn DomainPack,
    /// The session's standing.
    pub flags: &'a SessionFlags,
    /// The turn (for asking the user).
    pub ctx: &'a DriverContext,
    /// The environment of processes a step starts (hooks): the tools' own, without
    /// credentials.
    pub env: &'a [(String, String)],
}

/// One step of the chain.
#[async_trait]
pub trait GuardStep: Send + Sync {
    /// Its name (for the record).
    fn name(&self) -> &'static str;
    /// Allows or refuses `call`.
    async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict;
    /// What of a finished call's result goes on to the model and the snapshot.
    fn output(&self, content: String) -> String {
        content
    }
}

/// The steps, in their fixed order.
pub struct GuardChain {
    steps: Vec<Box<dyn GuardStep>>,
}

impl GuardChain {
    /// The standard chain.
    pub fn standard() -> Self {
        Self {
            steps: vec![
                Box::new(PlanMode),
                Box::new(ContextFuse::new()),
                Box::new(PackPolicy),
                Box::new(crate::hooks::PreToolUse),
                Box::new(Permission),
            ],
        }
    }

    /// Runs `call` through every step; the first refusal wins.
    pub async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict {
        for step in &self.steps {
            if let Verdict::Deny(reason) = step.check(call, cx).await {
                tracing::debug!(step = step.name(), tool = call.name, "refused");
                return Verdict::Deny(format!("refused by {}: {reason}", step.name()));
            }
        }
        Verdict::Allow
    }

    /// A call's result as the model and the snapshot get it (every step may shape it;
    /// the fuse caps it). Applying it twice changes nothing.
    pub fn output(&self, content: String) -> String {
        self.steps.iter().fold(content, |c, step| step.output(c))
    }
}

/// Plan mode refuses every mutating call.
struct PlanMode;

#[async_trait]
impl GuardStep for PlanMode {
    fn name(&self) -> &'static str {
        "plan mode"
    }
    async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict {
        if cx
            .flags
            .plan_mode
            .load(std::sync::atomic::Ordering::Relaxed)
            && !call.tool.read_only()
        {
            return Verdict::Deny(format!(
                "plan mode is on: {} would change things and is refused. Look around with \
                 read-only tools, then present your plan (update_plan) and wait for the user \
                 to leave plan mode.",
                call.name
            ));
        }
        Verdict::Allow
    }
}

/// How many identical calls in a row the fuse lets the model make: the first repeat
/// is often fair (a flaky test, a transient error, a file another process writes), but
/// a second one in a row, with nothing else tried in between, is a loop the model is
/// not getting out of by itself; refusing the third costs a model that meant it one
/// call, and saves a looping one from burning the turn's steps and context.
pub const REPEAT_LIMIT: usize = 3;

/// Keeps what the model's calls put into its context in bounds: refuses the
/// [`REPEAT_LIMIT`]th identical call in a row (same tool, same arguments as canonical
/// JSON; any other call ends the streak), and caps every result at
/// [`crate::tools::OUTPUT_CAP`] bytes. One fuse per chain, so per turn: a new prompt
/// may ask for the same call again.
pub struct ContextFuse {
    limit: usize,
    cap: usize,
    /// The last call seen (tool and canonical arguments) and how many times in a row.
    streak: Mutex<(String, usize)>,
}

impl ContextFuse {
    /// The standard fuse.
    pub fn new() -> Self {
        Self::with_limits(REPEAT_LIMIT, crate::tools::OUTPUT_CAP)
    }

    /// A fuse refusing the `limit`th identical call in a row and capping results at
    /// `cap` bytes.
    pub fn with_limits(limit: usize, cap: usize) -> Self {
        Self {
            limit,
            cap,
            streak: Mutex::new((String::new(), 0)),
        }
    }
}

impl Default for ContextFuse {
    fn default() -> Self {
        Self::new()
    }
}

#[async_trait]
impl GuardStep for ContextFuse {
    fn name(&self) -> &'static str {
        "context fuse"
    }
    async fn check(&self, call: &Call<'_>, _cx: &GuardCx<'_>) -> Verdict {
        let mut key = String::from(call.name);
        key.push('\0');
        canonical(call.input, &mut key);
        let count = {
            let mut streak = self.streak.lock();
            if streak.0 == key {
                streak.1 += 1;
            } else {
                *streak = (key, 1);
            }
            streak.1
        };
        if count >= self.limit {
            return Verdict::Deny(format!(
                "this is the same {} call with the same arguments {count} times in a row; \
                 its result would tell you nothing new. Change your approach: use what the \
                 earlier results said, try other arguments or another tool, or ask the user.",
                call.name
            ));
        }
        Verdict::Allow
    }
    fn output(&self, content: String) -> String {
        crate::tools::cap_output(content, self.cap)
    }
}

/// `v` as JSON with every object's keys sorted, so that two calls whose arguments
/// differ only in key order (which a model's sampling may produce, and serde_json keeps
/// when a dependency turns on `preserve_order`) are the same call.
fn canonical(v: &Value, out: &mut String) {
    match v {
        Value::Object(m) => {
            let mut entries: Vec<(&String, &Value)> = m.iter().collect();
            entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
            out.push('{');
            for (i, (k, v)) in entries.into_iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                out.push_str(&Value::String(k.clone()).to_string());
                out.push(':');
                canonical(v, out);
            }
            out.push('}');
        }
        Value::Array(a) => {
            out.push('[');
            for (i, v) in a.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                canonical(v, out);
            }
            out.push(']');
        }
        other => out.push_str(&other.to_string()),
    }
}

/// The pack's own pre-tool policy.
struct PackPolicy;

#[async_trait]
impl GuardStep for PackPolicy {
    fn name(&self) -> &'static str {
        "pack policy"
    }
    async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict {
        match cx.pack.policy(call.name, call.input, cx.workspace) {
            Ok(()) => Verdict::Allow,
            Err(reason) => Verdict::Deny(reason),
        }
    }
}

/// Asks the user before a mutating call, unless the session runs in `auto` or the
/// user allowed that tool for the session.
struct Permission;

#[async_trait]
impl GuardStep for Permission {
    fn name(&self) -> &'static str {
        "permission"
    }
    async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict {
        if call.name == "bash" && call.tool.kind() == weft_protocol::ToolKind::Shell {
            return crate::shell::permission(call, cx).await;
        }
        if call.tool.read_only()
            || cx.flags.permission == PermissionMode::Auto
            || cx.flags.allowed.lock().contains(call.name)
        {
            return Verdict::Allow;
        }
        let summary = call.tool.summary(call.input);
        let answer = cx
            .ctx
            .ask_user(Interaction {
                verdict: None,
                prompt_id: String::new(),
                kind: InteractionKind::Permission,
                title: format!("Allow {summary}?"),
                detail: Some(format!("The native agent wants to run {}.", call.name)),
                tool_name: Some(call.name.into()),
                tool_input: Some(call.input.clone()),
                questions: vec![Question {
                    id: "decision".into(),
                    text: format!("Allow {}?", call.name),
                    kind: QuestionType::Select,
                    choices: vec![
                        Choice {
                            label: "Allow once".into(),
                            value: permission::ALLOW.into(),
                        },
                        Choice {
                            label: "Allow for this session".into(),
                            value: permission::ALLOW_SESSION.into(),
                        },
                        Choice {
                            label: "Deny".into(),
                            value: permission::DENY.into(),
                        },
                    ],
                    multiple: false,
                    free_text: false,
                }],
            })
            .await;
        let value = answer.picked();
        match (answer.action, value) {
            (InteractAction::Select, Some(permission::ALLOW)) => Verdict::Allow,
            (InteractAction::Select, Some(permission::ALLOW_SESSION)) => {
                cx.flags.allowed.lock().insert(call.name.to_string());
                Verdict::Allow
            }
            (InteractAction::Cancel, _) => {
                Verdict::Deny("the permission request was cancelled; the call did not run".into())
            }
            _ => Verdict::Deny(format!("the user denied {}; it did not run", call.name)),
        }
    }
}

#[cfg(test)]
#[allow(clippy::unwrap_used)]
mod tests {
    use super::*;

    fn key(v: &Value) -> String {
        let mut s = String::new();
        canonical(v, &mut s);
        s
    }

    #[test]
    fn canonical_json_ignores_key_order_at_every_depth_and_nothing_else() {
        let a: Value =
            serde_json::from_str(r#"{"b": [1, {"y": 2, "x": "\"q"}], "a": null}"#).unwrap();
        let b: Value =
            serde_json::from_str(r#"{"a": null, "b": [1, {"x": "\"q", "y": 2}]}"#).unwrap();
        assert_eq!(key(&a), key(&b));
        assert_eq!(key(&a), r#"{"a":null,"b":[1,{"x":"\"q","y":2}]}"#);
        let reordered_array: Value =
            serde_json::from_str(r#"{"a": null, "b": [{"x": "\"q", "y": 2}, 1]}"#).unwrap();
        assert_ne!(key(&a), key(&reordered_array));
        // A key that needs escaping cannot make two objects collide.
        let tricky: Value = serde_json::from_str(r#"{"a\":1,\"b": 2}"#).unwrap();
        let plain: Value = serde_json::from_str(r#"{"a": 1, "b": 2}"#).unwrap();
        assert_ne!(key(&tricky), key(&plain));
    }
}
