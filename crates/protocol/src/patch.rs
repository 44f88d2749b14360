//! The patch algebra: `diff(prev, next)` and `apply(prev, patch)`.
//!
//! A field absent from a patch is unchanged. `text` and `reasoning` travel as appended
//! suffixes when the new value extends the old one, so a streamed token costs O(delta)
//! on the wire. Tool calls travel as upserts by id when the old list is a prefix (by id)
//! of the new one, so one finished call in a 10,000-call session does not resend the
//! other 9,999. Every other field is replaced whole; a cleared optional field is sent
//! as `null`, which is why those fields are `Option<Option<T>>` here: absent means
//! "unchanged", `null` means "now empty".

use serde::{Deserialize, Serialize};
use ts_rs::TS;

use crate::command::SlashCommand;
use crate::snapshot::{
    Artifact, Interaction, Phase, Plan, QueuedPrompt, SubAgent, ToolCall, UniversalSnapshot, Usage,
};

/// Serde for `Option<Option<T>>`: absent is `None`, `null` is `Some(None)`.
mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(
        value: &Option<Option<T>>,
        ser: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(inner) => inner.serialize(ser),
            None => ser.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        de: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(de).map(Some)
    }
}

/// The difference between two snapshots of one session.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
#[allow(missing_docs)]
pub struct SnapshotPatch {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub phase: Option<Phase>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<String>>")]
    pub task_id: Option<Option<String>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<String>>")]
    pub session_id: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub agent: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<String>>")]
    pub recorded_agent: Option<Option<String>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<String>>")]
    pub model: Option<Option<String>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<String>>")]
    pub effort: Option<Option<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub prompt: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub attachments: Option<Vec<String>>,
    /// Replaces `text` (sent when the new text does not extend the old).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text: Option<String>,
    /// Appended to `text` (after any replacement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub text_append: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reasoning: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub reasoning_append: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub activity: Option<String>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<Plan>>")]
    pub plan: Option<Option<Plan>>,
    /// Replaces the whole list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_calls: Option<Vec<ToolCall>>,
    /// Each replaces the call with the same id, or is appended (after any replacement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub tool_calls_upsert: Option<Vec<ToolCall>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub sub_agents: Option<Vec<SubAgent>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<Usage>>")]
    pub usage: Option<Option<Usage>>,
    /// Replaces the whole list.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub artifacts: Option<Vec<Artifact>>,
    /// Appended (after any replacement).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub artifacts_append: Option<Vec<Artifact>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub interactions: Option<Vec<Interaction>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub queued: Option<Vec<QueuedPrompt>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub notices: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub mcp_servers: Option<Vec<crate::McpServerStatus>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub commands: Option<Vec<SlashCommand>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub degraded: Option<Vec<crate::Degraded>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<String>>")]
    pub error: Option<Option<String>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<crate::LimitWindow>>")]
    pub limit_hit: Option<Option<crate::LimitWindow>>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, as = "Option<Option<crate::TurnDiff>>")]
    pub turn_diff: Option<Option<crate::TurnDiff>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub incomplete: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional)]
    pub terminal: Option<bool>,
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    #[ts(optional, type = "number | null")]
    pub started_at: Option<Option<i64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub updated_at: Option<i64>,
}

/// A patch as it travels: which session, its place in that session's sequence, the change.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, TS)]
#[serde(rename_all = "camelCase")]
pub struct PatchEvent {
    /// The session the patch belongs to.
    pub session_key: String,
    /// Gap-free per session, starting at 1; a client that sees a gap asks for the snapshot.
    /// The last of the patches this one stands for (see `from`).
    #[ts(type = "number")]
    pub seq: u64,
    /// The first seq this patch stands for, when it is several consecutive ones merged
    /// ([`SnapshotPatch::merge`]; absent: `seq` alone). It applies to a snapshot at
    /// `from - 1`; a client holding a later seq below `seq` cannot split it and re-reads
    /// the snapshot instead.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    #[ts(optional, type = "number")]
    pub from: Option<u64>,
    /// The change.
    pub patch: SnapshotPatch,
}

impl PatchEvent {
    /// The first seq it stands for.
    pub fn first_seq(&self) -> u64 {
        self.from.unwrap_or(self.seq)
    }
}

impl SnapshotPatch {
    /// True when the patch changes nothing.
    pub fn is_empty(&self) -> bool {
        *self == SnapshotPatch::default()
    }

    /// Folds `next` into `self`, so that applying the result is applying `self`, then
    /// `next`; false (and `self` unchanged) when `next` replaces the turn, the text, the
    /// reasoning, the tool calls or the artifacts. Those stay patches of their own, so a
    /// surface that acts on a turn's start (the window moves the finished turn to its
    /// history, `weft run` ends its output) still sees the whole of the turn before it.
    /// Appends are joined and upserts kept in order (a surface that reports each state of
    /// a tool call still sees each one).
    pub fn merge(&mut self, next: &SnapshotPatch) -> bool {
        if next.task_id.is_some()
            || next.text.is_some()
            || next.reasoning.is_some()
            || next.tool_calls.is_some()
            || next.artifacts.is_some()
        {
            return false;
        }
        fn set<T: Clone>(field: &mut Option<T>, value: &Option<T>) {
            if value.is_some() {
                field.clone_from(value);
            }
        }
        fn push(field: &mut Option<String>, more: &Option<String>) {
            if let Some(more) = more {
                field.get_or_insert_with(String::new).push_str(more);
            }
        }
        fn extend<T: Clone>(field: &mut Option<Vec<T>>, more: &Option<Vec<T>>) {
            if let Some(more) = more {
                field
                    .get_or_insert_with(Vec::new)
                    .extend(more.iter().cloned());
            }
        }
        // Destructured whole, so a field added to the patch cannot be forgotten here.
        let SnapshotPatch {
            phase,
            task_id: _,
            session_id,
            agent,
            recorded_agent,
            model,
            effort,
            prompt,
            attachments,
            text: _,
            text_append,
            reasoning: _,
            reasoning_append,
            activity,
            plan,
            tool_calls: _,
            tool_calls_upsert,
            sub_agents,
            usage,
            artifacts: _,
            artifacts_append,
            interactions,
            queued,
            notices,
            mcp_servers,
            commands,
            degraded,
            error,
            limit_hit,
            turn_diff,
            incomplete,
            terminal,
            started_at,
            updated_at,
        } = next;
        set(&mut self.phase, phase);
        set(&mut self.session_id, session_id);
        set(&mut self.agent, agent);
        set(&mut self.recorded_agent, recorded_agent);
        set(&mut self.model, model);
        set(&mut self.effort, effort);
        set(&mut self.prompt, prompt);
        set(&mut self.attachments, attachments);
        push(&mut self.text_append, text_append);
        push(&mut self.reasoning_append, reasoning_append);
        set(&mut self.activity, activity);
        set(&mut self.plan, plan);
        extend(&mut self.tool_calls_upsert, tool_calls_upsert);
        set(&mut self.sub_agents, sub_agents);
        set(&mut self.usage, usage);
        extend(&mut self.artifacts_append, artifacts_append);
        set(&mut self.interactions, interactions);
        set(&mut self.queued, queued);
        set(&mut self.notices, notices);
        set(&mut self.mcp_servers, mcp_servers);
        set(&mut self.commands, commands);
        set(&mut self.degraded, degraded);
        set(&mut self.error, error);
        set(&mut self.limit_hit, limit_hit);
        set(&mut self.turn_diff, turn_diff);
        set(&mut self.incomplete, incomplete);
        set(&mut self.terminal, terminal);
        set(&mut self.started_at, started_at);
        set(&mut self.updated_at, updated_at);
        true
    }
}

fn replace<T: PartialEq + Clone>(prev: &T, next: &T) -> Option<T> {
    (prev != next).then(|| next.clone())
}

/// `(replacement, appended suffix)` turning `prev` into `next`.
fn text_change(prev: &str, next: &str) -> (Option<String>, Option<String>) {
    if prev == next {
        (None, None)
    } else if !prev.is_empty() && next.starts_with(prev) {
        (None, Some(next[prev.len()..].to_string()))
    } else if prev.is_empty() {
        (None, Some(next.to_string()))
    } else {
        (Some(next.to_string()), None)
    }
}

fn tool_calls_change(
    prev: &[ToolCall],
    next: &[ToolCall],
) -> (Option<Vec<ToolCall>>, Option<Vec<ToolCall>>) {
    if prev == next {
        return (None, None);
    }
    let ids_unique = {
        let mut ids: Vec<&str> = next.iter().map(|c| c.id.as_str()).collect();
        ids.sort_unstable();
        ids.windows(2).all(|w| w[0] != w[1])
    };
    let is_prefix_by_id =
        next.len() >= prev.len() && prev.iter().zip(next).all(|(a, b)| a.id == b.id) && ids_unique;
    if !is_prefix_by_id {
        return (Some(next.to_vec()), None);
    }
    let upserts: Vec<ToolCall> = next
        .iter()
        .enumerate()
        .filter(|(i, call)| prev.get(*i) != Some(*call))
        .map(|(_, call)| call.clone())
        .collect();
    (None, Some(upserts))
}

fn artifacts_change(
    prev: &[Artifact],
    next: &[Artifact],
) -> (Option<Vec<Artifact>>, Option<Vec<Artifact>>) {
    if prev == next {
        (None, None)
    } else if next.len() > prev.len() && next[..prev.len()] == *prev {
        (None, Some(next[prev.len()..].to_vec()))
    } else {
        (Some(next.to_vec()), None)
    }
}

/// The patch that turns `prev` into `next`: `apply(prev, &diff(prev, next)) == *next`.
///
/// This compares whole fields, so it is O(snapshot); the kernel's hot path builds
/// patches straight from events instead ([`crate::Accumulator`]).
pub fn diff(prev: &UniversalSnapshot, next: &UniversalSnapshot) -> SnapshotPatch {
    let (text, text_append) = text_change(&prev.text, &next.text);
    let (reasoning, reasoning_append) = text_change(&prev.reasoning, &next.reasoning);
    let (tool_calls, tool_calls_upsert) = tool_calls_change(&prev.tool_calls, &next.tool_calls);
    let (artifacts, artifacts_append) = artifacts_change(&prev.artifacts, &next.artifacts);
    SnapshotPatch {
        phase: replace(&prev.phase, &next.phase),
        task_id: replace(&prev.task_id, &next.task_id),
        session_id: replace(&prev.session_id, &next.session_id),
        agent: replace(&prev.agent, &next.agent),
        recorded_agent: replace(&prev.recorded_agent, &next.recorded_agent),
        model: replace(&prev.model, &next.model),
        effort: replace(&prev.effort, &next.effort),
        prompt: replace(&prev.prompt, &next.prompt),
        attachments: replace(&prev.attachments, &next.attachments),
        text,
        text_append,
        reasoning,
        reasoning_append,
        activity: replace(&prev.activity, &next.activity),
        plan: replace(&prev.plan, &next.plan),
        tool_calls,
        tool_calls_upsert,
        sub_agents: replace(&prev.sub_agents, &next.sub_agents),
        usage: replace(&prev.usage, &next.usage),
        artifacts,
        artifacts_append,
        interactions: replace(&prev.interactions, &next.interactions),
        queued: replace(&prev.queued, &next.queued),
        notices: replace(&prev.notices, &next.notices),
        mcp_servers: replace(&prev.mcp_servers, &next.mcp_servers),
        commands: replace(&prev.commands, &next.commands),
        degraded: replace(&prev.degraded, &next.degraded),
        error: replace(&prev.error, &next.error),
        limit_hit: replace(&prev.limit_hit, &next.limit_hit),
        turn_diff: replace(&prev.turn_diff, &next.turn_diff),
        incomplete: replace(&prev.incomplete, &next.incomplete),
        terminal: replace(&prev.terminal, &next.terminal),
        started_at: replace(&prev.started_at, &next.started_at),
        updated_at: replace(&prev.updated_at, &next.updated_at),
    }
}

/// Upserts `call` by id, searching from the end where live calls are.
pub(crate) fn upsert_tool_call(calls: &mut Vec<ToolCall>, call: ToolCall) {
    match calls.iter().rposition(|c| c.id == call.id) {
        Some(i) => calls[i] = call,
        None => calls.push(call),
    }
}

/// Applies `patch` to `snap` in place.
pub fn apply_in_place(snap: &mut UniversalSnapshot, patch: &SnapshotPatch) {
    fn set<T: Clone>(field: &mut T, value: &Option<T>) {
        if let Some(v) = value {
            *field = v.clone();
        }
    }
    set(&mut snap.phase, &patch.phase);
    set(&mut snap.task_id, &patch.task_id);
    set(&mut snap.session_id, &patch.session_id);
    set(&mut snap.agent, &patch.agent);
    set(&mut snap.recorded_agent, &patch.recorded_agent);
    set(&mut snap.model, &patch.model);
    set(&mut snap.effort, &patch.effort);
    set(&mut snap.prompt, &patch.prompt);
    set(&mut snap.attachments, &patch.attachments);
    set(&mut snap.text, &patch.text);
    if let Some(s) = &patch.text_append {
        snap.text.push_str(s);
    }
    set(&mut snap.reasoning, &patch.reasoning);
    if let Some(s) = &patch.reasoning_append {
        snap.reasoning.push_str(s);
    }
    set(&mut snap.activity, &patch.activity);
    set(&mut snap.plan, &patch.plan);
    set(&mut snap.tool_calls, &patch.tool_calls);
    if let Some(calls) = &patch.tool_calls_upsert {
        for call in calls {
            upsert_tool_call(&mut snap.tool_calls, call.clone());
        }
    }
    set(&mut snap.sub_agents, &patch.sub_agents);
    set(&mut snap.usage, &patch.usage);
    set(&mut snap.artifacts, &patch.artifacts);
    if let Some(more) = &patch.artifacts_append {
        snap.artifacts.extend(more.iter().cloned());
    }
    set(&mut snap.interactions, &patch.interactions);
    set(&mut snap.queued, &patch.queued);
    set(&mut snap.notices, &patch.notices);
    set(&mut snap.mcp_servers, &patch.mcp_servers);
    set(&mut snap.commands, &patch.commands);
    set(&mut snap.degraded, &patch.degraded);
    set(&mut snap.error, &patch.error);
    set(&mut snap.limit_hit, &patch.limit_hit);
    set(&mut snap.turn_diff, &patch.turn_diff);
    set(&mut snap.incomplete, &patch.incomplete);
    set(&mut snap.terminal, &patch.terminal);
    set(&mut snap.started_at, &patch.started_at);
    set(&mut snap.updated_at, &patch.updated_at);
}

/// `prev` with `patch` applied.
pub fn apply(prev: &UniversalSnapshot, patch: &SnapshotPatch) -> UniversalSnapshot {
    let mut next = prev.clone();
    apply_in_place(&mut next, patch);
    next
}
