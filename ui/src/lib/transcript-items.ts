// A session's transcript as a flat list of rows, so the transcript can be virtualized
// (one 10,000-call turn is 10,000 rows, of which only the visible few are drawn).
// Rows name their turn and index rather than copy data, so a text delta changes no row.
import type { UniversalSnapshot } from "../generated";
import { hasChanges } from "./changes";

export type Item =
  | { key: string; kind: "prompt"; turn: number }
  | { key: string; kind: "reasoning"; turn: number }
  | { key: string; kind: "plan"; turn: number }
  | { key: string; kind: "subagent"; turn: number; agent: number; depth: number }
  | { key: string; kind: "tool"; turn: number; call: number; depth: number }
  | { key: string; kind: "text"; turn: number }
  | { key: string; kind: "files"; turn: number }
  | { key: string; kind: "artifacts"; turn: number }
  | { key: string; kind: "footer"; turn: number }
  | { key: string; kind: "queued" };

/** Orders a turn's tool calls so each subagent's calls sit under it, indented. */
function toolRows(turn: UniversalSnapshot, t: number, tk: string): Item[] {
  const calls = turn.toolCalls;
  const agentIndex = new Map<string, number>();
  turn.subAgents.forEach((a, i) => agentIndex.set(a.id, i));
  const ids = new Set<string>();
  for (const c of calls) ids.add(c.id);
  const children = new Map<string, number[]>();
  const roots: number[] = [];
  for (let i = 0; i < calls.length; i++) {
    const parent = calls[i].parentId;
    if (parent && (ids.has(parent) || agentIndex.has(parent)) && parent !== calls[i].id) {
      let list = children.get(parent);
      if (!list) children.set(parent, (list = []));
      list.push(i);
    } else {
      roots.push(i);
    }
  }
  const out: Item[] = [];
  const seen = new Set<number>();
  const emitCall = (i: number, depth: number) => {
    if (seen.has(i)) return;
    seen.add(i);
    const id = calls[i].id;
    out.push({ key: `${tk}:c:${id}`, kind: "tool", turn: t, call: i, depth });
    emitChildren(id, depth + 1);
  };
  const emitChildren = (parent: string, depth: number) => {
    const a = agentIndex.get(parent);
    const kids = children.get(parent);
    if (a !== undefined && (kids?.length || !ids.has(parent))) {
      out.push({ key: `${tk}:a:${parent}`, kind: "subagent", turn: t, agent: a, depth });
    }
    for (const k of kids ?? []) emitCall(k, depth + (a !== undefined ? 1 : 0));
  };
  for (const r of roots) emitCall(r, 0);
  // Subagents with no task call of their own.
  for (const a of turn.subAgents) if (!ids.has(a.id)) emitChildren(a.id, 0);
  return out;
}

/** Rows of finished turns never change: computed once per turn object and index. */
const finished = new WeakMap<UniversalSnapshot, { t: number; rows: Item[] }>();
/** The running turn's rows as last built. */
let lastLive: { taskId: string | null; t: number; shape: string; rows: Item[] } | null = null;

/** What decides a turn's rows besides its calls' order. */
function shape(turn: UniversalSnapshot): string {
  const last = turn.toolCalls.at(-1);
  return `${turn.toolCalls.length}|${last?.id}|${turn.plan !== null}|${turn.artifacts.length > 0}|${turn.subAgents.length}|${hasChanges(turn)}`;
}

function turnRows(turn: UniversalSnapshot, t: number): Item[] {
  const tk = turn.taskId ?? `turn${t}`;
  const rows: Item[] = [];
  rows.push({ key: `${tk}:prompt`, kind: "prompt", turn: t });
  // Always present (empty draws nothing) so a reasoning delta does not rebuild the rows.
  rows.push({ key: `${tk}:reasoning`, kind: "reasoning", turn: t });
  if (turn.plan) rows.push({ key: `${tk}:plan`, kind: "plan", turn: t });
  for (const row of toolRows(turn, t, tk)) rows.push(row);
  rows.push({ key: `${tk}:text`, kind: "text", turn: t });
  if (hasChanges(turn)) rows.push({ key: `${tk}:files`, kind: "files", turn: t });
  if (turn.artifacts.length) rows.push({ key: `${tk}:artifacts`, kind: "artifacts", turn: t });
  rows.push({ key: `${tk}:footer`, kind: "footer", turn: t });
  return rows;
}

/**
 * The transcript's rows. `live` is the running turn's object (its rows are rebuilt when
 * its structure changes); every other turn is final and its rows are cached, so a
 * change in the running turn costs its own size, not the session's.
 */
export function transcriptItems(
  turns: UniversalSnapshot[],
  queuedCount: number,
  live: UniversalSnapshot | null = null,
): Item[] {
  const items: Item[] = [];
  turns.forEach((turn, t) => {
    let rows: Item[];
    if (turn === live) {
      rows = turnRows(turn, t);
      lastLive = { taskId: turn.taskId, t, shape: shape(turn), rows };
    } else {
      const hit = finished.get(turn);
      if (hit && hit.t === t) rows = hit.rows;
      else {
        // A turn that just finished has the rows it had while running: reuse them.
        const same =
          lastLive && lastLive.taskId !== null && lastLive.taskId === turn.taskId && lastLive.t === t &&
          lastLive.shape === shape(turn);
        rows = same && lastLive ? lastLive.rows : turnRows(turn, t);
        finished.set(turn, { t, rows });
      }
    }
    for (let i = 0; i < rows.length; i++) items.push(rows[i]);
  });
  if (queuedCount > 0) items.push({ key: "queued", kind: "queued" });
  return items;
}
