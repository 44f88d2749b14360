// The patch algebra's `apply`, the one TypeScript implementation of
// crates/protocol/src/patch.rs. A field absent from a patch is unchanged; `null`
// clears; `textAppend`/`reasoningAppend` append after any replacement;
// `toolCallsUpsert` replaces by id (searching from the end, where live calls are) or
// appends; `artifactsAppend` appends. patch.test.ts checks it byte for byte against
// fixtures the Rust side writes (crates/protocol/tests/suite/ts_patch_fixtures.rs), and
// the patch_ts fuzz target (tests/fuzz) against the Rust `apply` on generated pairs.
import type { SnapshotPatch, ToolCall, UniversalSnapshot } from "../generated";

type Replaced = Exclude<
  keyof SnapshotPatch,
  "textAppend" | "reasoningAppend" | "toolCallsUpsert" | "artifactsAppend"
>;

// In the Rust field order, so a snapshot keeps its key order.
const REPLACED: Replaced[] = [
  "phase",
  "taskId",
  "sessionId",
  "agent",
  "recordedAgent",
  "model",
  "effort",
  "prompt",
  "attachments",
  "text",
  "reasoning",
  "activity",
  "plan",
  "toolCalls",
  "subAgents",
  "usage",
  "artifacts",
  "interactions",
  "queued",
  "notices",
  "mcpServers",
  "commands",
  "degraded",
  "turnDiff",
  "error",
  "limitHit",
  "incomplete",
  "terminal",
  "startedAt",
  "updatedAt",
];

const GROWN = new Set<Replaced>(["toolCalls", "artifacts"]);

/** Upserts `call` by id, searching from the end. */
export function upsertToolCall(calls: ToolCall[], call: ToolCall): void {
  for (let i = calls.length - 1; i >= 0; i--) {
    if (calls[i].id === call.id) {
      calls[i] = call;
      return;
    }
  }
  calls.push(call);
}

/**
 * Applies `patch` to `snap` in place. Works on Svelte `$state` proxies too, where it
 * touches only the fields the patch names (a text delta re-renders only the text).
 */
export function applyInPlace(snap: UniversalSnapshot, patch: SnapshotPatch): void {
  const target = snap as Record<string, unknown>;
  for (const key of REPLACED) {
    const value = patch[key];
    if (value !== undefined) {
      // The two lists apply grows in place are copied: otherwise an upsert or append
      // (of this patch or a later one) would push into the patch's own array.
      target[key] = GROWN.has(key) ? [...(value as unknown[])] : value;
    }
    if (key === "text" && patch.textAppend !== undefined) snap.text += patch.textAppend;
    if (key === "reasoning" && patch.reasoningAppend !== undefined) {
      snap.reasoning += patch.reasoningAppend;
    }
    if (key === "toolCalls" && patch.toolCallsUpsert !== undefined) {
      for (const call of patch.toolCallsUpsert) upsertToolCall(snap.toolCalls, call);
    }
    if (key === "artifacts" && patch.artifactsAppend !== undefined) {
      snap.artifacts.push(...patch.artifactsAppend);
    }
  }
}

/** `prev` with `patch` applied; `prev` is left untouched. */
export function apply(prev: UniversalSnapshot, patch: SnapshotPatch): UniversalSnapshot {
  const next = structuredClone(prev);
  applyInPlace(next, patch);
  return next;
}

/** A snapshot with nothing in it (what `UniversalSnapshot::default()` serializes to). */
export function emptySnapshot(agent = ""): UniversalSnapshot {
  return {
    phase: "idle",
    taskId: null,
    sessionId: null,
    agent,
    model: null,
    effort: null,
    prompt: "",
    attachments: [],
    text: "",
    reasoning: "",
    activity: "",
    plan: null,
    toolCalls: [],
    subAgents: [],
    usage: null,
    artifacts: [],
    interactions: [],
    queued: [],
    notices: [],
    mcpServers: [],
    commands: [],
    error: null,
    limitHit: null,
    incomplete: false,
    terminal: false,
    startedAt: null,
    updatedAt: 0,
  };
}
