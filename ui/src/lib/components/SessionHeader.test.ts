import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { SessionInfo } from "../../generated";
import type { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
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

describe("the session header's preview of a remote worktree", () => {
  it("opens a host's worktree's dev server here through the same forward as the sidebar, once forwarded", async () => {
    const t = new FakeTransport();
    const opened: string[] = [];
    t.openUrl = async (url: string) => void opened.push(url);
    const path = "gpu:/home/me/.local/share/weft/worktrees/app/fix";
    const app = {
      agents: [],
      accounts: { forAgent: () => [], label: (id: string) => id },
      transport: t,
      worktrees: { list: [{ name: "fix", repo: "gpu:/home/me/app", path, branch: "weft/fix", base: "main", ahead: 0, behind: 0, dirty: false, ports: "40000-40009", sessions: ["gpu/claude:1"], setupLog: null }] },
      error: null,
    } as unknown as AppStore;
    const view = { key: "gpu/claude:1", current: new LiveSnapshot(emptySnapshot("claude")), turns: [], terminalOffer: null } as unknown as SessionView;
    const worktree = { name: "fix", path, branch: "weft/fix", base: "main" };
    const { unmount } = render(SessionHeader, {
      app,
      view,
      info: { title: "a session", workdir: path, worktree } as unknown as SessionInfo,
      verbs: null,
      terminals: false,
      actions: [],
    });
    const button = screen.getByTestId("session-preview");
    expect(button.textContent).toBe("Open preview");
    expect(button.title).toContain("port 40000 on gpu");
    await fireEvent.click(button);
    await waitFor(() => expect(opened).toEqual(["http://127.0.0.1:40000/"]));
    expect(t.forwards).toEqual([{ host: "gpu", port: 40000, local: 40000, listening: true }]);
    // Forwarded already (by this button or the sidebar's): opened again, not forwarded twice.
    await fireEvent.click(button);
    await waitFor(() => expect(opened.length).toBe(2));
    expect(t.calls.filter((c) => c.verb === "forwardHostPort").length).toBe(1);
    unmount();
  });

  it("has no preview for a worktree of this machine", () => {
    const t = new FakeTransport();
    const path = "/data/weft/worktrees/app/fix";
    const app = {
      agents: [],
      accounts: { forAgent: () => [], label: (id: string) => id },
      transport: t,
      worktrees: { list: [{ name: "fix", repo: "/app", path, branch: "weft/fix", base: "main", ahead: 0, behind: 0, dirty: false, ports: "40000-40009", sessions: ["claude:1"], setupLog: null }] },
    } as unknown as AppStore;
    const view = { key: "claude:1", current: new LiveSnapshot(emptySnapshot("claude")), turns: [], terminalOffer: null } as unknown as SessionView;
    render(SessionHeader, {
      app,
      view,
      info: { title: "a session", workdir: path, worktree: { name: "fix", path, branch: "weft/fix", base: "main" } } as unknown as SessionInfo,
      verbs: null,
      terminals: false,
      actions: [],
    });
    expect(screen.getByTestId("session-branch")).toBeTruthy();
    expect(screen.queryByTestId("session-preview")).toBeNull();
  });
});
