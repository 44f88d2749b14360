import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { FileChange, ToolCall } from "../../generated";
import ToolRow from "./ToolRow.svelte";

const call = (input: unknown): ToolCall =>
  ({ id: "c1", name: "Edit", summary: "Edit src/a.rs", input, result: "ok", status: "done", kind: "edit", parentId: null }) as ToolCall;

describe("ToolRow", () => {
  it("offers to open the file a call worked on, or show it in its folder", async () => {
    const opened: [string, boolean][] = [];
    render(ToolRow, { call: call({ file_path: "src/a.rs", old_string: "a", new_string: "b" }), onopen: (p: string, r: boolean) => opened.push([p, r]) });
    expect(screen.queryByTestId("tool-open-file")).toBeNull();
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    await fireEvent.click(screen.getByTestId("tool-open-file"));
    await fireEvent.click(screen.getByTestId("tool-reveal-file"));
    expect(opened).toEqual([
      ["src/a.rs", false],
      ["src/a.rs", true],
    ]);
  });

  it("shows a running command's latest output lines without opening it, and not once it ended", async () => {
    const running = { ...call({ command: "make" }), name: "bash", kind: "shell", status: "running", result: "one\ntwo\nthree\nfour\nfive\n" } as ToolCall;
    const { rerender } = render(ToolRow, { call: running });
    expect(screen.getByTestId("tool-live-output").textContent).toBe("two\nthree\nfour\nfive");
    await rerender({ call: { ...running, status: "done" } });
    expect(screen.queryByTestId("tool-live-output")).toBeNull();
  });

  it("offers nothing for a call without a file", async () => {
    render(ToolRow, { call: call({ command: "ls" }), onopen: () => {} });
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    expect(screen.queryByTestId("tool-open-file")).toBeNull();
  });

  it("draws a call's normalized changes as a highlighted diff", async () => {
    const change: FileChange = {
      path: "src/a.rs",
      kind: "modify",
      diff: "--- a/src/a.rs\n+++ b/src/a.rs\n@@ -1,2 +1,2 @@\n fn main() {\n-    let x = 1;\n+    let x = 2;\n",
    };
    render(ToolRow, { call: { ...call({ file_path: "src/a.rs" }), changes: [change] } });
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    const diff = await screen.findByTestId("tool-diff");
    expect(diff.querySelector(".d2h-file-name")?.textContent).toContain("src/a.rs");
    expect(diff.querySelector(".d2h-ins .d2h-code-line-ctn")?.textContent).toContain("let x = 2;");
    expect(diff.querySelector(".d2h-del .d2h-code-line-ctn")?.textContent).toContain("let x = 1;");
    // Syntax highlighting (Rust by the file's extension).
    expect(diff.querySelector(".d2h-ins .hljs-keyword")?.textContent).toBe("let");
    expect(screen.queryByTestId("tool-input")).toBeNull();
  });

  it("parses no agent's input: an edit without changes shows its input, not a diff", async () => {
    render(ToolRow, { call: call({ file_path: "src/a.rs", old_string: "a", new_string: "b" }) });
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    expect(screen.queryByTestId("tool-diff")).toBeNull();
    expect(screen.getByTestId("tool-input").textContent).toContain("old_string");
  });
});

describe("ToolRow of a host's session", () => {
  it("offers to copy the host's file to this machine", async () => {
    const saved: string[] = [];
    render(ToolRow, {
      call: call({ file_path: "report.pdf" }),
      onopen: () => {},
      onsave: (p: string) => saved.push(p),
    });
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    const button = screen.getByTestId("tool-save-file");
    expect(button.textContent).toContain("Copy to this machine");
    await fireEvent.click(button);
    expect(saved).toEqual(["report.pdf"]);
  });

  it("offers no copy for a file of this machine", async () => {
    render(ToolRow, { call: call({ file_path: "src/a.rs" }), onopen: () => {} });
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    expect(screen.getByTestId("tool-open-file")).toBeTruthy();
    expect(screen.queryByTestId("tool-save-file")).toBeNull();
  });
});
