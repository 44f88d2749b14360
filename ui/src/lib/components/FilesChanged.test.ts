import { describe, expect, it } from "vitest";
import { cleanup, fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { FileChange, Restored, RestoreSide, ToolCall, TurnDiff } from "../../generated";
import { emptySnapshot } from "../patch";
import FilesChanged from "./FilesChanged.svelte";

const change = (path: string, kind: FileChange["kind"], body: string): FileChange => ({
  path,
  kind,
  diff: `--- ${kind === "add" ? "/dev/null" : `a/${path}`}\n+++ b/${path}\n${body}`,
});
const call = (id: string, changes: FileChange[]): ToolCall => ({
  id,
  name: "apply_patch",
  summary: id,
  input: {},
  result: null,
  status: "done",
  kind: "edit",
  parentId: null,
  changes,
});

describe("FilesChanged", () => {
  it("lists every file the turn touched with its counts, and opens each one's diff", async () => {
    const turn = {
      ...emptySnapshot(),
      toolCalls: [
        call("a", [change("src/lib.rs", "modify", "@@ -1 +1 @@\n-old\n+new\n")]),
        call("b", [change("README.md", "add", "@@ -0,0 +1,2 @@\n+# Title\n+text\n")]),
        call("c", [change("src/lib.rs", "modify", "@@ -3 +3 @@\n-x\n+y\n")]),
      ],
    };
    render(FilesChanged, { turn });
    expect(screen.getByTestId("files-changed").textContent).toContain("2 files changed");
    const rows = screen.getAllByTestId("files-changed-file");
    expect(rows.map((r) => [r.dataset.path, r.dataset.kind])).toEqual([
      ["src/lib.rs", "modify"],
      ["README.md", "add"],
    ]);
    expect(rows[0].textContent).toContain("+2");
    expect(screen.queryByTestId("tool-diff")).toBeNull();
    await fireEvent.click(rows[0].querySelector("button")!);
    const diff = await screen.findByTestId("tool-diff");
    // Both of the turn's changes to the file.
    expect([...diff.querySelectorAll(".d2h-ins .d2h-code-line-ctn")].map((e) => e.textContent)).toEqual(["new", "y"]);
    // An added file is tagged as added (diff2html's own tag), not as a rename.
    await fireEvent.click(rows[1].querySelector("button")!);
    const tags = [...document.querySelectorAll(".d2h-tag")].map((t) => t.textContent?.trim());
    expect(tags).toContain("ADDED");
    expect(tags).not.toContain("RENAMED");
  });

  it("draws nothing for a turn that changed no file", () => {
    render(FilesChanged, { turn: emptySnapshot() });
    expect(screen.queryByTestId("files-changed")).toBeNull();
  });

  it("shows what the checkpoints say the turn changed on disk, and restores with a confirmation over newer edits, then undoes", async () => {
    const diff = (files: string[]): TurnDiff => ({
      turn: 3,
      before: "b",
      after: "a",
      files: files.map((path) => ({ path, oldPath: null, change: "modified", added: 1, removed: 1, binary: false, hunks: `--- a/${path}\n+++ b/${path}\n@@ -1 +1 @@\n-x\n+y\n` })),
      notStored: [{ path: "data.bin", size: 99_000_000 }],
      ignored: [],
      cut: null,
    });
    // A shell command wrote out.txt: no tool call carries it, the checkpoints do.
    const turn = { ...emptySnapshot(), turnDiff: diff(["out.txt", "src/lib.rs"]) };
    const asked: { turn: number; side: RestoreSide; opts: { paths?: string[] | null; yes?: boolean; undo?: boolean } }[] = [];
    const done: Restored = { overwrites: null, undo: "u", written: ["out.txt", "src/lib.rs"], deleted: [], kept: [] };
    const restore = async (n: number, side: RestoreSide, opts: { paths?: string[] | null; yes?: boolean; undo?: boolean }) => {
      asked.push({ turn: n, side, opts });
      return opts.yes || opts.undo ? done : { ...done, written: [], overwrites: diff(["src/lib.rs"]) };
    };
    render(FilesChanged, { turn, restore });
    expect(screen.getAllByTestId("files-changed-file").map((r) => r.dataset.path)).toEqual(["out.txt", "src/lib.rs"]);
    expect(screen.getByTestId("files-not-stored").textContent).toContain("data.bin");
    await fireEvent.click(screen.getByTestId("restore-before"));
    await waitFor(() => expect(screen.getByTestId("restore-confirm").textContent).toContain("would overwrite edits made since"));
    expect(screen.queryByTestId("restore-done")).toBeNull();
    await fireEvent.click(screen.getByTestId("restore-anyway"));
    await waitFor(() => expect(screen.getByTestId("restore-done").textContent?.replace(/\s+/g, " ")).toContain("Restored 2 files to before this turn"));
    await fireEvent.click(screen.getByTestId("restore-undo"));
    await waitFor(() => expect(screen.queryByTestId("restore-done")).toBeNull());
    await fireEvent.click(screen.getAllByTestId("restore-file")[0]);
    expect(asked.map((a) => [a.turn, a.side, a.opts.paths ?? null, a.opts.yes ?? false, a.opts.undo ?? false])).toEqual([
      [3, "before", null, false, false],
      [3, "before", null, true, false],
      [3, "before", null, true, true],
      [3, "before", ["out.txt"], false, false],
    ]);
  });

  it("names the ignored files a turn changed and says they are not restored, in the turn and in the restore dialog", async () => {
    const base: TurnDiff = { turn: 2, before: "b", after: "a", files: [], notStored: [], ignored: [".env", "node_modules/"], cut: null };
    // Only ignored files changed: the row still shows, to say so.
    render(FilesChanged, { turn: { ...emptySnapshot(), turnDiff: base } });
    expect(screen.getByTestId("files-ignored").textContent).toContain(".env, node_modules/");
    expect(screen.getByTestId("files-ignored").textContent).toContain("not restored");
    cleanup();
    const withFile: TurnDiff = {
      ...base,
      files: [{ path: "a.txt", oldPath: null, change: "modified", added: 1, removed: 1, binary: false, hunks: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-x\n+y\n" }],
    };
    const restore = async (_n: number, _side: RestoreSide, opts: { yes?: boolean }): Promise<Restored> =>
      opts.yes ? { overwrites: null, undo: "u", written: ["a.txt"], deleted: [], kept: [] } : { overwrites: withFile, undo: "", written: [], deleted: [], kept: [] };
    render(FilesChanged, { turn: { ...emptySnapshot(), turnDiff: withFile }, restore });
    await fireEvent.click(screen.getByTestId("restore-before"));
    await waitFor(() => expect(screen.getByTestId("restore-ignored").textContent).toContain(".env, node_modules/"));
    await fireEvent.click(screen.getByTestId("restore-anyway"));
    await waitFor(() => expect(screen.getByTestId("restore-done").textContent?.replace(/\s+/g, " ")).toContain("not restored (ignored by git, outside checkpoints): .env, node_modules/"));
  });
});
