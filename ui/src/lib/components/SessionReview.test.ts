import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { SessionInfo, TurnDiff } from "../../generated";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
import { emptySnapshot } from "../patch";
import type { SessionView } from "../session-view.svelte";
import SessionReview from "./SessionReview.svelte";

const hunks = (top: string, shift: number) =>
  `--- a/p.rs\n+++ b/p.rs\n@@ -1,2 +1,2 @@\n a\n-b\n+${top}\n@@ -40,2 +${40 + shift},2 @@\n x\n-y\n+Y\n`;
const diff = (after: string, top: string, shift: number): TurnDiff => ({
  turn: 0,
  before: "c0",
  after,
  cut: null,
  notStored: [],
  ignored: [],
  files: [{ path: "p.rs", oldPath: null, change: "modified", added: 2, removed: 2, binary: false, hunks: hunks(top, shift) }],
});
const turnEnding = (after: string) => ({ ...emptySnapshot(), prompt: "p", turnDiff: { ...diff(after, "B", 0), turn: 1 } });
const viewOf = (afters: string[]) => ({ turns: afters.map(turnEnding) }) as unknown as SessionView;

describe("SessionReview", () => {
  beforeEach(() => localStorage.clear());

  it("keeps viewed hunks viewed across a later turn that changes another hunk, sends comments as one prompt, and reviews since the last mark", async () => {
    const t = new FakeTransport();
    const app = new AppStore(t);
    await app.start();
    const key = t.addSession("claude", "/work/demo", "parser");
    const info = { ...[...t.sessions.values()][0].info, phase: "idle" } as SessionInfo;
    let current = diff("c1", "B", 0);
    t.sessionDiffOf = (_, from) => (from === "c2" ? { ...diff("c2", "B2", 1), files: [] } : current);
    const { rerender } = render(SessionReview, { app, info, view: viewOf(["c1"]) });
    await waitFor(() => expect(screen.getAllByTestId("review-hunk")).toHaveLength(2));
    for (const box of screen.getAllByTestId("hunk-viewed")) await fireEvent.click(box);
    await waitFor(() => expect(screen.getByTestId("review-file").dataset.viewed).toBe("true"));

    // The agent's next turn rewrites the top hunk and adds a line above the bottom one.
    current = diff("c2", "B2", 1);
    await rerender({ app, info, view: viewOf(["c1", "c2"]) });
    await waitFor(() => expect(screen.getByTestId("file-viewed-count").textContent).toBe("1/2 viewed"));
    const [top, bottom] = screen.getAllByTestId("review-hunk");
    expect([top.dataset.viewed, bottom.dataset.viewed]).toEqual(["false", "true"]);

    // A comment on the reopened hunk reaches the agent as one prompt quoting it.
    await fireEvent.click(top.querySelector("[data-testid=hunk-comment]")!);
    await fireEvent.input(screen.getByTestId("comment-text"), { target: { value: "keep B, B2 breaks the parser" } });
    await fireEvent.click(screen.getByTestId("comment-add"));
    await fireEvent.click(screen.getByTestId("review-send-comments"));
    await waitFor(() => expect(screen.getByTestId("review-sent").textContent).toContain("1 comment sent"));
    const sent = t.calls.filter((c) => c.verb === "prompt").pop()?.args[0] as { sessionKey: string; prompt: string };
    expect(sent.sessionKey).toBe(key);
    expect(sent.prompt).toContain("p.rs, lines 1–2:");
    expect(sent.prompt).toContain("+B2\n```\nkeep B, B2 breaks the parser");

    // Revert the reopened hunk: its own lines go to the daemon; undone with one click.
    await fireEvent.click(screen.getAllByTestId("review-hunk")[0].querySelector("[data-testid=hunk-revert]")!);
    await waitFor(() => expect(screen.getByTestId("review-reverted").textContent).toContain("p.rs"));
    expect(t.calls.find((c) => c.verb === "revertHunk")?.args[0]).toEqual({ sessionKey: key, path: "p.rs", hunk: "@@ -1,2 +1,2 @@\n a\n-b\n+B2\n" });
    await fireEvent.click(screen.getByTestId("review-revert-undo"));
    await waitFor(() => expect(screen.queryByTestId("review-reverted")).toBeNull());
    expect(t.calls.find((c) => c.verb === "restore")?.args[0]).toMatchObject({ sessionKey: key, undo: true, yes: true });

    // Marked reviewed: "since I last reviewed" starts at the latest checkpoint.
    await fireEvent.click(screen.getByTestId("review-mark-reviewed"));
    await fireEvent.click(screen.getByTestId("review-mode-since"));
    await waitFor(() => expect(screen.getByTestId("review-nothing").textContent).toContain("Nothing changed since"));
    expect(t.calls.filter((c) => c.verb === "sessionDiff").pop()?.args).toEqual([key, "c2"]);
  });
});
