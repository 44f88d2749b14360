import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { FileChange, ToolCall } from "../../generated";
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
});
