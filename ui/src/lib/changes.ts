// The files a turn changed: what its checkpoints say changed on disk (`turnDiff`, every
// agent, shell commands included), else the normalized `changes` the drivers put on
// each tool call (never from an agent's own tool input: nothing above the kernel
// parses that).
import type { ChangeKind, FileChange, ToolCall, TurnChange, UniversalSnapshot } from "../generated";

export interface TurnFile {
  path: string;
  /** The first change's kind, unless a later one deleted the file. */
  kind: ChangeKind;
  /** Each change the turn made to the file, in order. */
  changes: FileChange[];
  added: number;
  removed: number;
}

/** Lines a unified diff adds and removes (headers not counted). */
export function diffStats(diff: string): { added: number; removed: number } {
  let added = 0;
  let removed = 0;
  for (const line of diff.split("\n")) {
    if (line.startsWith("+++ ") || line.startsWith("--- ")) continue;
    if (line.startsWith("+")) added++;
    else if (line.startsWith("-")) removed++;
  }
  return { added, removed };
}

/** The changes of a call that did not fail (a denied or failed edit changed nothing). */
export function callChanges(call: ToolCall): FileChange[] {
  return call.status === "failed" ? [] : (call.changes ?? []);
}

const KIND: Record<TurnChange, ChangeKind> = { added: "add", deleted: "delete", modified: "modify", renamed: "modify" };

/**
 * Every file the turn changed: from its checkpoints when it has them (in path order),
 * else every file its calls changed, in the order first touched.
 */
export function turnFiles(turn: UniversalSnapshot): TurnFile[] {
  if (turn.turnDiff) {
    return turn.turnDiff.files.map((f) => {
      const kind = KIND[f.change];
      return { path: f.path, kind, changes: f.hunks ? [{ path: f.path, kind, diff: f.hunks }] : [], added: f.added, removed: f.removed };
    });
  }
  const byPath = new Map<string, TurnFile>();
  for (const call of turn.toolCalls) {
    for (const change of callChanges(call)) {
      let file = byPath.get(change.path);
      if (!file) {
        file = { path: change.path, kind: change.kind, changes: [], added: 0, removed: 0 };
        byPath.set(change.path, file);
      }
      if (change.kind === "delete") file.kind = "delete";
      file.changes.push(change);
      const s = diffStats(change.diff);
      file.added += s.added;
      file.removed += s.removed;
    }
  }
  return [...byPath.values()];
}

/** True when the turn changed a file (the "files changed" row shows). */
export function hasChanges(turn: UniversalSnapshot): boolean {
  if (turn.turnDiff) return turn.turnDiff.files.length > 0 || turn.turnDiff.notStored.length > 0 || (turn.turnDiff.ignored ?? []).length > 0;
  return turn.toolCalls.some((c) => callChanges(c).length > 0);
}
