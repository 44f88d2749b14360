//! The one place every tool call passes before it runs: a chain of steps, each
//! allowing it or refusing it with a reason the model is told.
//!
//! Today's chain: plan mode → the pack's pre-tool policy → PreToolUse hooks →
//! permission (the session's mode; ask the user for mutating calls). DESIGN.md's
//! full chain (context fuse, deny rules, parse-and-classify, sandbox, allow rules,
//! mode, confirm) slots in as more [`GuardStep`]s in [`GuardChain::standard`]; nothing
//! else runs a tool.

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
}

/// One step of the chain.
#[async_trait]
pub trait GuardStep: Send + Sync {
    /// Its name (for the record).
    fn name(&self) -> &'static str;
    /// Allows or refuses `call`.
    async fn check(&self, call: &Call<'_>, cx: &GuardCx<'_>) -> Verdict;
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
                }],
            })
            .await;
        let value = answer
            .value
            .clone()
            .or_else(|| answer.answers.values().next().cloned());
        match (answer.action, value.as_deref()) {
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
