// The files a turn changed, from the normalized `changes` the drivers put on each tool
// call (never from an agent's own tool input: nothing above the kernel parses that).
import type { ChangeKind, FileChange, ToolCall, UniversalSnapshot } from "../generated";

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

/** Every file the turn's calls changed, in the order first touched. */
export function turnFiles(turn: UniversalSnapshot): TurnFile[] {
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

/** True when any of the turn's calls carries a change (the "files changed" row shows). */
export function hasChanges(turn: UniversalSnapshot): boolean {
  return turn.toolCalls.some((c) => callChanges(c).length > 0);
}
