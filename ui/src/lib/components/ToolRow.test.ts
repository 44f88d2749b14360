import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { ToolCall } from "../../generated";
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

  it("offers nothing for a call without a file", async () => {
    render(ToolRow, { call: call({ command: "ls" }), onopen: () => {} });
    await fireEvent.click(screen.getByTestId("tool-row-toggle"));
    expect(screen.queryByTestId("tool-open-file")).toBeNull();
  });
});
