//! Folding driver events into a snapshot, producing the patch for each event directly.
//!
//! This is the hot path of streaming: every event costs O(its own size), never
//! O(transcript). It lives here, free of I/O, so the store can rebuild a crashed turn
//! from its recorded events with exactly the code that built it live.

use std::collections::HashMap;

use crate::degraded;
use crate::event::DriverEvent;
use crate::patch::SnapshotPatch;
use crate::snapshot::{
    Interaction, Phase, QueuedPrompt, SubAgent, ToolCall, ToolStatus, UniversalSnapshot,
};

/// How many tool and subagent lines `activity` keeps: it is a live status, the full
/// record is `toolCalls`. Keeping it bounded keeps each tool event O(1).
pub const ACTIVITY_LINES: usize = 40;

const DETAIL_CHARS: usize = 80;

/// Owns one turn's snapshot and folds events into it.
#[derive(Debug, Clone, Default)]
pub struct Accumulator {
    snapshot: UniversalSnapshot,
    tool_index: HashMap<String, usize>,
    driver_status: String,
}

impl Accumulator {
    /// Starts from `snapshot` (any state).
    pub fn new(snapshot: UniversalSnapshot) -> Self {
        let tool_index = snapshot
            .tool_calls
            .iter()
            .enumerate()
            .map(|(i, c)| (c.id.clone(), i))
            .collect();
        Self {
            snapshot,
            tool_index,
            driver_status: String::new(),
        }
    }

    /// The snapshot so far.
    pub fn snapshot(&self) -> &UniversalSnapshot {
        &self.snapshot
    }

    /// Gives up the snapshot.
    pub fn into_snapshot(self) -> UniversalSnapshot {
        self.snapshot
    }

    /// Folds one event in (stamping `updatedAt` with `now_ms`) and returns the patch
    /// that a client holding the previous snapshot needs.
    pub fn apply(&mut self, event: &DriverEvent, now_ms: i64) -> SnapshotPatch {
        let snap = &mut self.snapshot;
        let mut patch = SnapshotPatch::default();
        match event {
            DriverEvent::Session { session_id, model } => {
                if snap.session_id.as_deref() != Some(session_id.as_str()) {
                    snap.session_id = Some(session_id.clone());
                    patch.session_id = Some(snap.session_id.clone());
                }
                if let Some(m) = model {
                    if snap.model.as_deref() != Some(m.as_str()) {
                        snap.model = Some(m.clone());
                        patch.model = Some(snap.model.clone());
                    }
                }
            }
            DriverEvent::Text { delta } => {
                if delta.is_empty() {
                    return patch;
                }
                snap.text.push_str(delta);
                patch.text_append = Some(delta.clone());
            }
            DriverEvent::Reasoning { delta } => {
                if delta.is_empty() {
                    return patch;
                }
                snap.reasoning.push_str(delta);
                patch.reasoning_append = Some(delta.clone());
            }
            DriverEvent::Tool { call } => {
                match self.tool_index.get(&call.id) {
                    Some(&i) => snap.tool_calls[i] = call.clone(),
                    None => {
                        self.tool_index
                            .insert(call.id.clone(), snap.tool_calls.len());
                        snap.tool_calls.push(call.clone());
                    }
                }
                patch.tool_calls_upsert = Some(vec![call.clone()]);
                self.refresh_activity(&mut patch);
            }
            DriverEvent::Plan { plan } => {
                snap.plan = Some(plan.clone());
                patch.plan = Some(snap.plan.clone());
            }
            DriverEvent::Subagent { agent } => {
                match snap.sub_agents.iter().position(|a| a.id == agent.id) {
                    Some(i) => snap.sub_agents[i] = agent.clone(),
                    None => snap.sub_agents.push(agent.clone()),
                }
                patch.sub_agents = Some(snap.sub_agents.clone());
                self.refresh_activity(&mut patch);
            }
            DriverEvent::Usage { usage } => {
                snap.usage = Some(usage.clone());
                patch.usage = Some(snap.usage.clone());
            }
            DriverEvent::Artifact { artifact } => {
                snap.artifacts.push(artifact.clone());
                patch.artifacts_append = Some(vec![artifact.clone()]);
            }
            DriverEvent::Activity { text } => {
                self.driver_status = text.clone();
                self.refresh_activity(&mut patch);
            }
            DriverEvent::Notice { text } => {
                snap.notices.push(text.clone());
                patch.notices = Some(snap.notices.clone());
            }
            DriverEvent::Commands { commands } => {
                if snap.commands != *commands {
                    snap.commands = commands.clone();
                    patch.commands = Some(commands.clone());
                }
            }
            DriverEvent::Mcp { server } => {
                let list = &mut snap.mcp_servers;
                match list.iter().position(|s| s.name == server.name) {
                    Some(i) if list[i] == *server => return patch,
                    Some(i) => list[i] = server.clone(),
                    None => list.push(server.clone()),
                }
                patch.mcp_servers = Some(list.clone());
                // A server that did not start is a lasting gap, not a line that scrolls.
                let failed = (server.status == crate::McpState::Failed).then(|| {
                    let why = server
                        .error
                        .as_deref()
                        .unwrap_or("the agent gave no reason");
                    format!("MCP server `{}` did not start: {why}", server.name)
                });
                let capability = format!("{}{}", degraded::capability::MCP_PREFIX, server.name);
                if degraded::set(&mut snap.degraded, &capability, failed.as_deref()) {
                    patch.degraded = Some(snap.degraded.clone());
                }
            }
            DriverEvent::Degraded { capability, reason } => {
                if !degraded::set(&mut snap.degraded, capability, reason.as_deref()) {
                    return patch;
                }
                patch.degraded = Some(snap.degraded.clone());
            }
            DriverEvent::Limit { limit } => {
                if limit.status == "rejected" {
                    snap.notices.push(format!(
                        "this account's {} usage limit is reached: switch accounts to go on",
                        limit.window
                    ));
                    patch.notices = Some(snap.notices.clone());
                    snap.limit_hit = Some(limit.clone());
                    patch.limit_hit = Some(snap.limit_hit.clone());
                }
            }
        }
        self.snapshot.updated_at = now_ms;
        patch.updated_at = Some(now_ms);
        patch
    }

    /// Replaces the whole snapshot (a new turn starts, or a surface resets it).
    pub fn replace(&mut self, next: UniversalSnapshot) -> SnapshotPatch {
        let patch = crate::patch::diff(&self.snapshot, &next);
        *self = Accumulator::new(next);
        patch
    }

    /// Sets the phase.
    pub fn set_phase(&mut self, phase: Phase, now_ms: i64) -> SnapshotPatch {
        self.snapshot.phase = phase;
        self.stamp(
            SnapshotPatch {
                phase: Some(phase),
                ..Default::default()
            },
            now_ms,
        )
    }

    /// Replaces the list of prompts waiting behind this turn.
    pub fn set_queued(&mut self, queued: Vec<QueuedPrompt>, now_ms: i64) -> SnapshotPatch {
        self.snapshot.queued = queued.clone();
        self.stamp(
            SnapshotPatch {
                queued: Some(queued),
                ..Default::default()
            },
            now_ms,
        )
    }

    /// Sets what the turn changed on disk (see `UniversalSnapshot::turn_diff`).
    pub fn set_turn_diff(&mut self, diff: Option<crate::TurnDiff>, now_ms: i64) -> SnapshotPatch {
        if self.snapshot.turn_diff == diff {
            return SnapshotPatch::default();
        }
        self.snapshot.turn_diff = diff.clone();
        self.stamp(
            SnapshotPatch {
                turn_diff: Some(diff),
                ..Default::default()
            },
            now_ms,
        )
    }

    /// Sets the agent the session's record names when it differs from the turn's
    /// (see `UniversalSnapshot::recorded_agent`); empty when none.
    pub fn set_recorded_agent(&mut self, agent: Option<String>, now_ms: i64) -> SnapshotPatch {
        if self.snapshot.recorded_agent == agent {
            return SnapshotPatch::default();
        }
        self.snapshot.recorded_agent = agent.clone();
        self.stamp(
            SnapshotPatch {
                recorded_agent: Some(agent),
                ..Default::default()
            },
            now_ms,
        )
    }

    /// Replaces the pending interactions.
    pub fn set_interactions(&mut self, pending: Vec<Interaction>, now_ms: i64) -> SnapshotPatch {
        self.snapshot.interactions = pending.clone();
        self.stamp(
            SnapshotPatch {
                interactions: Some(pending),
                ..Default::default()
            },
            now_ms,
        )
    }

    /// Ends the turn: phase `done`, with the error and incompleteness given; pending
    /// interactions are dropped (their askers have been answered by then).
    pub fn finish(
        &mut self,
        error: Option<String>,
        incomplete: bool,
        now_ms: i64,
    ) -> SnapshotPatch {
        let snap = &mut self.snapshot;
        let mut patch = SnapshotPatch {
            phase: Some(Phase::Done),
            ..Default::default()
        };
        snap.phase = Phase::Done;
        if snap.error != error {
            snap.error = error;
            patch.error = Some(snap.error.clone());
        }
        if snap.incomplete != incomplete {
            snap.incomplete = incomplete;
            patch.incomplete = Some(incomplete);
        }
        // An ended turn holds no terminal.
        if snap.terminal {
            snap.terminal = false;
            patch.terminal = Some(false);
        }
        if !snap.interactions.is_empty() {
            snap.interactions.clear();
            patch.interactions = Some(Vec::new());
        }
        if !self.driver_status.is_empty() {
            self.driver_status.clear();
            self.refresh_activity(&mut patch);
        }
        self.stamp(patch, now_ms)
    }

    fn stamp(&mut self, mut patch: SnapshotPatch, now_ms: i64) -> SnapshotPatch {
        self.snapshot.updated_at = now_ms;
        patch.updated_at = Some(now_ms);
        patch
    }

    fn refresh_activity(&mut self, patch: &mut SnapshotPatch) {
        let activity = derive_activity(
            &self.snapshot.tool_calls,
            &self.snapshot.sub_agents,
            &self.driver_status,
            &self.tool_index,
        );
        if activity != self.snapshot.activity {
            self.snapshot.activity = activity.clone();
            patch.activity = Some(activity);
        }
    }
}

/// `summary` while running, `summary done` or `summary -> detail` on success,
/// `summary failed: detail` on error.
fn activity_line(summary: &str, status: ToolStatus, result: Option<&str>) -> String {
    let detail = result.map(first_line).filter(|d| !d.is_empty());
    match (status, detail) {
        (ToolStatus::Running, _) => summary.to_string(),
        (ToolStatus::Done, None) => format!("{summary} done"),
        (ToolStatus::Done, Some(d)) => format!("{summary} -> {d}"),
        (ToolStatus::Failed, None) => format!("{summary} failed"),
        (ToolStatus::Failed, Some(d)) => format!("{summary} failed: {d}"),
    }
}

fn first_line(s: &str) -> String {
    let line = s.trim().lines().next().unwrap_or_default().trim();
    if line.chars().count() > DETAIL_CHARS {
        let cut: String = line.chars().take(DETAIL_CHARS).collect();
        format!("{cut}…")
    } else {
        line.to_string()
    }
}

fn call_summary(call: &ToolCall) -> &str {
    if call.summary.is_empty() {
        &call.name
    } else {
        &call.summary
    }
}

/// One line per tool call and subagent (the last [`ACTIVITY_LINES`]), calls that ran
/// under a subagent indented below it, then the driver's own status line.
fn derive_activity(
    calls: &[ToolCall],
    agents: &[SubAgent],
    driver_status: &str,
    tool_index: &HashMap<String, usize>,
) -> String {
    let start = calls.len().saturating_sub(ACTIVITY_LINES);
    let mut lines: Vec<String> = Vec::new();
    for call in &calls[start..] {
        let indent = if call.parent_id.is_some() { "  " } else { "" };
        // A call that *is* a subagent (Claude's Task) is shown as that subagent.
        let line = match agents.iter().find(|a| a.id == call.id) {
            Some(agent) => {
                activity_line(&agent_summary(agent), agent.status, agent.result.as_deref())
            }
            None => activity_line(call_summary(call), call.status, call.result.as_deref()),
        };
        lines.push(format!("{indent}{line}"));
    }
    for agent in agents.iter().filter(|a| !tool_index.contains_key(&a.id)) {
        lines.push(activity_line(
            &agent_summary(agent),
            agent.status,
            agent.result.as_deref(),
        ));
    }
    if lines.len() > ACTIVITY_LINES {
        lines.drain(..lines.len() - ACTIVITY_LINES);
    }
    if !driver_status.is_empty() {
        lines.push(driver_status.to_string());
    }
    lines.join("\n")
}

fn agent_summary(agent: &SubAgent) -> String {
    match (agent.name.is_empty(), agent.summary.is_empty()) {
        (false, false) => format!("{}: {}", agent.name, agent.summary),
        (false, true) => agent.name.clone(),
        _ => agent.summary.clone(),
    }
}
