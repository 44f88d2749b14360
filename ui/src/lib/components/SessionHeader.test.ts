import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { SessionInfo } from "../../generated";
import type { AppStore } from "../app.svelte";
import { LiveSnapshot } from "../live-snapshot.svelte";
import { emptySnapshot } from "../patch";
import type { SessionView } from "../session-view.svelte";
import SessionHeader from "./SessionHeader.svelte";

/** The header as App renders it, over a live snapshot the test patches. */
function header(current: LiveSnapshot, extra: Partial<SessionInfo> = {}) {
  const app = {
    agents: [],
    accounts: { forAgent: () => [], label: (id: string) => id },
  } as unknown as AppStore;
  const view = { key: "claude:1", current, turns: [], terminalOffer: null } as unknown as SessionView;
  return render(SessionHeader, {
    app,
    view,
    info: { title: "a session", workdir: "/w", ...extra } as unknown as SessionInfo,
    verbs: null,
    terminals: false,
    actions: [],
  });
}

describe("the session header's degraded state", () => {
  it("shows what the session runs without, with each reason, until the snapshot clears it", async () => {
    const current = new LiveSnapshot({ ...emptySnapshot("acp"), phase: "done" });
    header(current);
    expect(screen.queryByTestId("session-degraded")).toBeNull();

    current.apply({
      degraded: [
        { capability: "context", reason: "its session s-1 could not be loaded; it started from Weft's handover" },
        { capability: "mcp:db", reason: "MCP server `db` did not start: exited 1" },
      ],
    });
    const chip = await screen.findByTestId("degraded-chip");
    expect(chip.textContent).toBe("Runs without 2");
    expect(chip.title).toContain("its own context: its session s-1 could not be loaded");
    await fireEvent.click(chip);
    const items = screen.getAllByTestId("degraded-item");
    expect(items.map((i) => i.dataset.capability)).toEqual(["context", "mcp:db"]);
    expect(items[1].textContent).toContain("MCP server db");
    expect(items[1].textContent).toContain("exited 1");

    // A new turn does not take it away; only the state clearing does.
    current.apply({ phase: "streaming", text: "" });
    current.apply({ degraded: [{ capability: "prompts", reason: "runs headless" }] });
    expect((await screen.findByTestId("degraded-chip")).textContent).toBe("Without permission prompts");
    current.apply({ degraded: [] });
    await Promise.resolve();
    expect(screen.queryByTestId("session-degraded")).toBeNull();
  });
});

describe("the session header's place", () => {
  it("names the branch of a session in its own worktree, and the folder of one that is not", () => {
    const worktree = { name: "fix-tests", path: "/data/weft/worktrees/app/fix-tests", branch: "weft/fix-tests", base: "main" };
    const { unmount } = header(new LiveSnapshot(emptySnapshot("claude")), { worktree });
    expect(screen.getByTestId("session-branch").textContent).toContain("weft/fix-tests");
    expect(screen.getByTestId("session-branch").title).toContain("from main");
    expect(screen.queryByTestId("session-where")).toBeNull();
    unmount();
    header(new LiveSnapshot(emptySnapshot("claude")));
    expect(screen.queryByTestId("session-branch")).toBeNull();
    expect(screen.getByTestId("session-where").textContent).toBe("w");
  });
});
