import { describe, expect, it } from "vitest";
import type { FileChange, ToolCall } from "../generated";
import { diffStats, hasChanges, turnFiles } from "./changes";
import { emptySnapshot } from "./patch";
import { transcriptItems } from "./transcript-items";

const edit: FileChange = {
  path: "/w/notes.txt",
  kind: "modify",
  diff: "--- a/w/notes.txt\n+++ b/w/notes.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+2\n three\n",
};
const added: FileChange = { path: "/w/new.txt", kind: "add", diff: "--- /dev/null\n+++ b/w/new.txt\n@@ -0,0 +1,2 @@\n+a\n+b\n" };

const call = (id: string, changes: FileChange[] | undefined, status: ToolCall["status"] = "done"): ToolCall => ({
  id,
  name: "Edit",
  summary: id,
  input: { file_path: "/w/notes.txt", old_string: "two", new_string: "2" },
  result: null,
  status,
  kind: "edit",
  parentId: null,
  changes,
});

describe("turn files", () => {
  it("counts a diff's added and removed lines, not its headers", () => {
    expect(diffStats(edit.diff)).toEqual({ added: 1, removed: 1 });
    expect(diffStats(added.diff)).toEqual({ added: 2, removed: 0 });
  });

  it("lists every file the turn changed once, in the order first touched, with each change", () => {
    const turn = { ...emptySnapshot(), toolCalls: [call("a", [edit]), call("b", [added]), call("c", [edit])] };
    const files = turnFiles(turn);
    expect(files.map((f) => [f.path, f.kind, f.changes.length, f.added, f.removed])).toEqual([
      ["/w/notes.txt", "modify", 2, 2, 2],
      ["/w/new.txt", "add", 1, 2, 0],
    ]);
  });

  it("draws diffs from `changes` only: an agent's own edit input without them shows none", () => {
    const turn = { ...emptySnapshot(), toolCalls: [call("a", undefined), call("failed", [edit], "failed")] };
    expect(turnFiles(turn)).toEqual([]);
    expect(hasChanges(turn)).toBe(false);
    expect(transcriptItems([turn], 0).some((i) => i.kind === "files")).toBe(false);
  });

  it("gives a turn with changes its files-changed row after the reply", () => {
    const turn = { ...emptySnapshot(), taskId: "t1", toolCalls: [call("a", [edit])] };
    const kinds = transcriptItems([turn], 0).map((i) => i.kind);
    expect(kinds.indexOf("files")).toBe(kinds.indexOf("text") + 1);
  });
});
