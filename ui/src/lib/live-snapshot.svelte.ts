// The running turn's snapshot with one signal per field and no deep proxies: a text
// delta wakes only what reads `text`; a tool upsert replaces the list (a fresh array,
// O(calls) pointer copies) and the rows whose call object changed. A 10,000-call turn
// costs 10,000 plain objects, not 10,000 reactive proxies.
import type { UniversalSnapshot } from "../generated";
import { applyInPlace, emptySnapshot } from "./patch";
import type { SnapshotPatch } from "../generated";

type Fields = UniversalSnapshot;

export class LiveSnapshot implements Fields {
  phase = $state.raw<Fields["phase"]>("idle");
  taskId = $state.raw<Fields["taskId"]>(null);
  sessionId = $state.raw<Fields["sessionId"]>(null);
  agent = $state.raw<Fields["agent"]>("");
  /** Absent from a snapshot unless a change of agent is pending (not in emptySnapshot). */
  recordedAgent = $state.raw<Fields["recordedAgent"]>(undefined);
  model = $state.raw<Fields["model"]>(null);
  effort = $state.raw<Fields["effort"]>(null);
  prompt = $state.raw<Fields["prompt"]>("");
  attachments = $state.raw<Fields["attachments"]>([]);
  text = $state.raw<Fields["text"]>("");
  reasoning = $state.raw<Fields["reasoning"]>("");
  activity = $state.raw<Fields["activity"]>("");
  plan = $state.raw<Fields["plan"]>(null);
  toolCalls = $state.raw<Fields["toolCalls"]>([]);
  subAgents = $state.raw<Fields["subAgents"]>([]);
  usage = $state.raw<Fields["usage"]>(null);
  artifacts = $state.raw<Fields["artifacts"]>([]);
  interactions = $state.raw<Fields["interactions"]>([]);
  queued = $state.raw<Fields["queued"]>([]);
  notices = $state.raw<Fields["notices"]>([]);
  mcpServers = $state.raw<Fields["mcpServers"]>([]);
  commands = $state.raw<Fields["commands"]>([]);
  /** Absent from a snapshot unless the session runs without something (not in emptySnapshot). */
  degraded = $state.raw<Fields["degraded"]>(undefined);
  /** Absent from a snapshot until its turn ends with checkpoints (not in emptySnapshot). */
  turnDiff = $state.raw<Fields["turnDiff"]>(undefined);
  error = $state.raw<Fields["error"]>(null);
  limitHit = $state.raw<Fields["limitHit"]>(null);
  incomplete = $state.raw<Fields["incomplete"]>(false);
  terminal = $state.raw<Fields["terminal"]>(false);
  startedAt = $state.raw<Fields["startedAt"]>(null);
  updatedAt = $state.raw<Fields["updatedAt"]>(0);

  constructor(from: UniversalSnapshot = emptySnapshot()) {
    this.set(from);
  }

  /** Replaces every field. */
  set(from: UniversalSnapshot) {
    for (const key of Object.keys(emptySnapshot()) as (keyof Fields)[]) {
      (this as Record<string, unknown>)[key] = from[key];
    }
    this.recordedAgent = from.recordedAgent;
    this.degraded = from.degraded;
    this.turnDiff = from.turnDiff;
    // Lists grown in place by apply are this snapshot's own.
    this.toolCalls = [...from.toolCalls];
    this.artifacts = [...from.artifacts];
  }

  /** Applies a patch with the one `apply`, then republishes the lists it grew in place. */
  apply(patch: SnapshotPatch) {
    applyInPlace(this, patch);
    if (patch.toolCallsUpsert) this.toolCalls = [...this.toolCalls];
    if (patch.artifactsAppend) this.artifacts = [...this.artifacts];
  }

  /** A plain, detached copy (lists copied, items shared: they are never mutated). */
  plain(): UniversalSnapshot {
    const out = emptySnapshot();
    for (const key of Object.keys(out) as (keyof Fields)[]) {
      (out as unknown as Record<string, unknown>)[key] = this[key];
    }
    if (this.recordedAgent) out.recordedAgent = this.recordedAgent;
    if (this.degraded?.length) out.degraded = this.degraded;
    if (this.turnDiff) out.turnDiff = this.turnDiff;
    out.toolCalls = [...this.toolCalls];
    out.artifacts = [...this.artifacts];
    return out;
  }
}
