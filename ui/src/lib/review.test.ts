import { beforeEach, describe, expect, it } from "vitest";
import { commentsPrompt, loadReview, reviewFiles, saveReview, splitHunks } from "./review";

const file = (top: string[], bottom: string[], shift = 0) =>
  [
    "--- a/src/p.rs",
    "+++ b/src/p.rs",
    `@@ -1,2 +1,2 @@`,
    ...top,
    `@@ -40,2 +${40 + shift},2 @@`,
    ...bottom,
    "",
  ].join("\n");

describe("review hunks", () => {
  beforeEach(() => localStorage.clear());

  it("splits a file's diff into hunks with the new file's lines", () => {
    const { head, hunks } = splitHunks("src/p.rs", file([" a", "-b", "+B"], [" x", "-y", "+Y"]));
    expect(head).toBe("--- a/src/p.rs\n+++ b/src/p.rs");
    expect(hunks.map((h) => h.lines)).toEqual([{ from: 1, to: 2 }, { from: 40, to: 41 }]);
    expect(hunks[1].body).toBe(" x\n-y\n+Y");
  });

  it("keeps a hunk's key when only its position moved, and changes it when its lines did", () => {
    const before = splitHunks("src/p.rs", file([" a", "-b", "+B"], [" x", "-y", "+Y"])).hunks;
    // A later turn rewrote the top hunk and added lines above the bottom one.
    const after = splitHunks("src/p.rs", file([" a", "-b", "+B2", "+B3"], [" x", "-y", "+Y"], 1)).hunks;
    expect(after[1].key).toBe(before[1].key);
    expect(after[0].key).not.toBe(before[0].key);
    // The same lines in another file are another hunk.
    expect(splitHunks("src/q.rs", file([" a", "-b", "+B"], [])).hunks[0].key).not.toBe(before[0].key);
  });

  it("keeps viewed marks across windows and drops the marks of hunks no longer in the session's diff", () => {
    const diff = { turn: 0, before: "b", after: "a", cut: null, notStored: [], ignored: [], files: [{ path: "src/p.rs", oldPath: null, change: "modified" as const, added: 2, removed: 2, binary: false, hunks: file([" a", "-b", "+B"], [" x", "-y", "+Y"]) }] };
    const files = reviewFiles(diff);
    saveReview("k", { viewed: [files[0].hunks[0].key, "gone"], reviewedAt: "a" }, files);
    expect(loadReview("k")).toEqual({ viewed: [files[0].hunks[0].key], reviewedAt: "a" });
    localStorage.setItem("weft.review.k", "{not json");
    expect(loadReview("k")).toEqual({ viewed: [], reviewedAt: null });
  });

  it("quotes each comment's file, lines and hunk in one prompt", () => {
    const prompt = commentsPrompt([
      { path: "src/p.rs", lines: { from: 40, to: 41 }, quote: "@@ -40,2 +40,2 @@\n x\n-y\n+Y", text: "  Y should stay y  " },
      { path: "gone.rs", lines: null, quote: "@@ -1 +0,0 @@\n-z", text: "why delete this?" },
    ]);
    expect(prompt).toContain("1. src/p.rs, lines 40–41:\n```diff\n@@ -40,2 +40,2 @@\n x\n-y\n+Y\n```\nY should stay y");
    expect(prompt).toContain("2. gone.rs, removed lines:");
  });
});
