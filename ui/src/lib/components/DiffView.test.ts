import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import DiffView from "./DiffView.svelte";
import { diffRows } from "../diff/rows";
import type { FileChange } from "../../generated";

/** A file rewritten whole: `n` lines removed and `n` added, in one hunk. */
function rewrite(path: string, n: number): FileChange {
  const old = Array.from({ length: n }, (_, i) => `-let old_${i} = ${i};`);
  const now = Array.from({ length: n }, (_, i) => `+let new_${i} = ${i * 2};`);
  return { path, kind: "modify", diff: `--- a/${path}\n+++ b/${path}\n@@ -1,${n} +1,${n} @@\n${[...old, ...now].join("\n")}\n` };
}

describe("DiffView", () => {
  it("draws a 20,000-line diff virtualized: only a window of its rows is in the DOM", async () => {
    render(DiffView, { changes: [rewrite("src/big.rs", 10_000)] });
    const diff = await screen.findByTestId("tool-diff");
    expect(diff.dataset.virtual).toBe("true");
    const drawn = diff.querySelectorAll("[data-testid=vdiff-line]").length;
    expect(drawn).toBeGreaterThan(10);
    expect(drawn).toBeLessThan(500);
    // diff2html's table would have a row for every line.
    expect(diff.querySelectorAll("tr").length).toBe(0);
    // The first lines, numbered and highlighted (Rust, by the extension).
    const first = diff.querySelector("[data-testid=vdiff-line]");
    expect(first?.textContent).toContain("let old_0 = 0;");
    expect(first?.querySelector(".hljs-keyword")?.textContent).toBe("let");
  });

  it("moves its window of rows with the scroll, keeping the rows' places and only a window drawn", async () => {
    render(DiffView, { changes: [rewrite("src/big.rs", 10_000)] });
    const scroller = await screen.findByTestId("vdiff-scroller");
    const space = scroller.firstElementChild as HTMLElement;
    // Every row 18 px: the spacer is as tall as all of them (a file row, a hunk row, 20,000 lines).
    expect(space.style.height).toBe(`${20_002 * 18}px`);
    // jsdom lays nothing out, so the scroll position is given by hand.
    Object.defineProperty(scroller, "scrollTop", { configurable: true, value: 18 * 15_000 });
    await fireEvent.scroll(scroller);
    const lines = [...scroller.querySelectorAll("[data-testid=vdiff-line]")];
    expect(lines.length).toBeGreaterThan(10);
    expect(lines.length).toBeLessThan(500);
    // Row 15,000 is the 14,998th line: the 4,998th added one, numbered 4,998 in the new file.
    expect(scroller.textContent).toContain("let new_4997 = 9994;");
    expect(scroller.textContent).not.toContain("let old_0 = 0;");
    // The window sits where its first row belongs.
    const window = space.firstElementChild as HTMLElement;
    const firstRow = Number(window.style.transform.match(/translateY\((\d+)px\)/)?.[1]) / 18;
    expect(firstRow).toBeGreaterThan(14_900);
    expect(firstRow).toBeLessThanOrEqual(15_000);
    expect(lines[0].textContent).toContain(`let new_${firstRow - 10_002} = ${(firstRow - 10_002) * 2};`);
  });

  it("draws a large diff side by side as well, removed lines left of the added", async () => {
    render(DiffView, { changes: [rewrite("src/big.rs", 2_000)] });
    await fireEvent.click(await screen.findByTestId("vdiff-layout"));
    const diff = screen.getByTestId("tool-diff");
    const pair = diff.querySelector("[data-testid=vdiff-line]");
    expect(pair?.querySelectorAll(".half").length).toBe(2);
    expect(pair?.querySelector(".half:first-child")?.textContent).toContain("let old_0 = 0;");
    expect(pair?.querySelector(".half:last-child")?.textContent).toContain("let new_0 = 0;");
    expect(diff.querySelectorAll("[data-testid=vdiff-line]").length).toBeLessThan(500);
  });

  it("keeps diff2html for a diff of ordinary size", async () => {
    render(DiffView, { changes: [rewrite("src/small.rs", 20)] });
    const diff = await screen.findByTestId("tool-diff");
    expect(diff.dataset.virtual).toBeUndefined();
    // Every line drawn, as a table row.
    expect(diff.querySelectorAll("tr").length).toBeGreaterThanOrEqual(40);
  });
});

describe("diffRows", () => {
  it("numbers unified lines by both sides and pairs a hunk's lines side by side", () => {
    const change: FileChange = {
      path: "a.txt",
      kind: "modify",
      diff: "--- a/a.txt\n+++ b/a.txt\n@@ -3,3 +3,4 @@\n keep\n-gone\n+new one\n+new two\n tail\n\\ No newline at end of file\n",
    };
    const unified = diffRows([change], "unified").filter((r) => r.type === "line");
    expect(unified.map((r) => (r.type === "line" ? [r.kind, r.old, r.new, r.text] : null))).toEqual([
      ["ctx", 3, 3, "keep"],
      ["del", 4, null, "gone"],
      ["add", null, 4, "new one"],
      ["add", null, 5, "new two"],
      ["ctx", 5, 6, "tail"],
    ]);
    const split = diffRows([change], "split").filter((r) => r.type === "pair");
    expect(split.map((r) => (r.type === "pair" ? [r.left?.text ?? null, r.right?.text ?? null] : null))).toEqual([
      ["keep", "keep"],
      ["gone", "new one"],
      [null, "new two"],
      ["tail", "tail"],
    ]);
  });
});
