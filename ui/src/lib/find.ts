// Find in session: searches every row of the transcript's data (not only the rows the
// virtualized list has drawn) for what that row shows, so a hit in turn 1 of a
// 10,000-call session is found and scrolled to.
import type { UniversalSnapshot } from "../generated";
import type { Item } from "./transcript-items";

/** The text a row shows (collapsed), which find looks in. */
export function rowText(item: Item, turns: UniversalSnapshot[], queued: { prompt: string }[] = []): string {
  if (item.kind === "queued") return queued.map((q) => q.prompt).join("\n");
  const turn = turns[item.turn];
  if (!turn) return "";
  switch (item.kind) {
    case "prompt":
      return turn.prompt;
    case "reasoning":
      return turn.reasoning;
    case "plan":
      return turn.plan ? [turn.plan.explanation ?? "", ...turn.plan.steps.map((s) => s.text)].join("\n") : "";
    case "subagent": {
      const a = turn.subAgents[item.agent];
      return a ? `${a.name} ${a.summary} ${a.result ?? ""}` : "";
    }
    case "tool": {
      const c = turn.toolCalls[item.call];
      return c ? `${c.name} ${c.summary}` : "";
    }
    case "text":
      return turn.text;
    case "files":
      return turn.toolCalls.flatMap((c) => (c.changes ?? []).map((f) => f.path)).join("\n");
    case "artifacts":
      return turn.artifacts.map((a) => `${a.fileName} ${a.caption ?? ""}`).join("\n");
    case "footer":
      return [...turn.notices, turn.error ?? ""].join("\n");
  }
}

/** The keys of the rows containing `query` (case-insensitive), in transcript order. */
export function findRows(items: Item[], turns: UniversalSnapshot[], query: string, queued: { prompt: string }[] = []): string[] {
  const q = query.trim().toLowerCase();
  if (!q) return [];
  const hits: string[] = [];
  for (const item of items) if (rowText(item, turns, queued).toLowerCase().includes(q)) hits.push(item.key);
  return hits;
}

/** The hit to go to from `at` by `delta`, wrapping around. */
export function step(at: number, delta: number, count: number): number {
  if (count === 0) return -1;
  if (at < 0) return delta >= 0 ? 0 : count - 1;
  return (((at + delta) % count) + count) % count;
}
