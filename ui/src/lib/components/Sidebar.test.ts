import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
import { LibraryStore } from "../library.svelte";
import type { Transport } from "../transport";
import type { ClientRequest } from "../../generated";
import Sidebar from "./Sidebar.svelte";

async function started(t: FakeTransport) {
  const app = new AppStore(t);
  await app.start();
  render(Sidebar, { app });
  return app;
}

describe("Sidebar", () => {
  beforeEach(() => localStorage.clear());

  it("draws only the rows near the viewport of thousands of sessions", async () => {
    const t = new FakeTransport();
    for (let i = 0; i < 3000; i++) t.addSession("echo", "/work/demo", `session ${i}`);
    const app = await started(t);
    expect(app.sessions.length).toBe(3000);
    await waitFor(() => expect(screen.getAllByTestId("session-item").length).toBeGreaterThan(0));
    const drawn = screen.getAllByTestId("session-item").length;
    expect(drawn).toBeLessThan(100);
    expect(screen.getByTestId("session-list").dataset.rows).toBe("3001");
  });

  it("lists a worktree's sessions under it with its branch and state; its head starts a new session there", async () => {
    const t = new FakeTransport();
    const app = await started(t);
    await app.openWorkspace("/work/demo");
    app.newInWorktree = true;
    await app.send("rewrite the parser");
    Object.assign(t.worktrees[0], { ahead: 3, behind: 1, dirty: true });
    await app.worktrees.refresh(app.sessions, true);
    const head = await screen.findByTestId("worktree");
    expect(head.dataset.path).toBe(t.worktrees[0].path);
    expect(screen.getByTestId("worktree-branch").textContent).toBe(t.worktrees[0].branch);
    expect(screen.getByTestId("worktree-ahead").textContent).toBe("↑3");
    expect(screen.getByTestId("worktree-behind").textContent).toBe("↓1");
    expect(screen.getByTestId("worktree-dirty")).toBeTruthy();
    // No head of its own for the worktree's folder: it sits under the repository's.
    expect(screen.queryAllByTestId("workspace").map((w) => w.dataset.workdir)).toEqual(["/work/demo"]);
    const item = screen.getAllByTestId("session-item").find((el) => el.dataset.workdir === t.worktrees[0].path);
    expect(item?.classList.contains("nested")).toBe(true);
    await fireEvent.click(screen.getByTestId("worktree-item"));
    expect(app.selectedKey).toBeNull();
    expect(app.workspace).toBe(t.worktrees[0].path);
  });

  it("removes a recent workspace: forgotten, its group hidden until the folder is opened again", async () => {
    const t = new FakeTransport();
    t.addSession("echo", "/work/other", "over there");
    const app = await started(t);
    await app.openWorkspace("/work/other");
    await app.openWorkspace("/work/demo");
    const heads = () => screen.queryAllByTestId("workspace").map((w) => w.dataset.workdir);
    await waitFor(() => expect(heads()).toEqual(["/work/demo", "/work/other"]));
    const remove = screen.getAllByTestId("workspace-remove")[1];
    expect(remove.getAttribute("aria-label")).toBe("Remove other from the sidebar");
    await fireEvent.click(remove);
    await waitFor(() => expect(heads()).toEqual(["/work/demo"]));
    expect(t.calls.some((c) => c.verb === "removeRecentWorkspace" && c.args[0] === "/work/other")).toBe(true);
    expect(app.workspaces).toEqual(["/work/demo"]);
    // Kept across windows; a search still finds its sessions.
    expect(new AppStore(new FakeTransport()).hiddenWorkspaces).toEqual(["/work/other"]);
    app.search = "over";
    await waitFor(() => expect(heads()).toEqual(["/work/other"]));
    app.search = "";
    await app.openWorkspace("/work/other");
    await waitFor(() => expect(heads()).toEqual(["/work/other", "/work/demo"]));
    expect(app.hiddenWorkspaces).toEqual([]);
  });

  it("removing the current workspace moves to the next recent one", async () => {
    const t = new FakeTransport();
    const app = await started(t);
    await app.openWorkspace("/work/b");
    expect(app.workspace).toBe("/work/b");
    await app.removeWorkspace("/work/b");
    expect(app.workspace).toBe("/work/demo");
    expect(app.selectedKey).toBeNull();
  });
});

describe("Sidebar selection", () => {
  it("scrolls a session selected from elsewhere (Ctrl+Tab, a search hit) into view", async () => {
    localStorage.clear();
    const t = new FakeTransport();
    for (let i = 0; i < 500; i++) t.addSession("echo", "/work/demo", `session ${i}`);
    const app = new AppStore(t);
    await app.start();
    render(Sidebar, { app });
    const list = screen.getByTestId("session-list");
    expect(list.scrollTop).toBe(0);
    app.cycleSession(1);
    app.cycleSession(-1);
    // The first, then (wrapping) the last of 500.
    await waitFor(() => expect(list.scrollTop).toBeGreaterThan(10000));
    await waitFor(() => expect(list.querySelector(`[data-session-key="${app.selectedKey}"]`)).not.toBeNull());
  });

  it("lists the agents' own sessions under their workspace, marked, and opens one read-only", async () => {
    const t = new FakeTransport();
    t.addSession("echo", "/work/demo", "weft's own");
    const app = new AppStore(t);
    await app.start();
    const native = { sessionKey: "claude:n1", origin: "native", agent: "claude", sessionId: "n1", title: "fix the parser", workdir: "/work/demo", updatedAt: 0 };
    const asked: ClientRequest[] = [];
    const request = async (r: ClientRequest): Promise<unknown> => {
      asked.push(r);
      if (r.type === "listLibrary") return r.origin === "native" ? [native] : [];
      if (r.type === "searchLibrary")
        return [{ ...native, taskId: null, turn: 1, offset: 0, kind: "tool", snippet: "ran «parse_config»", at: 0 }];
      return { running: false, filesTotal: 1, filesDone: 1, bytesTotal: 1, bytesDone: 1, sweeps: 1 };
    };
    const library = new LibraryStore({ request } as unknown as Transport);
    const opened: string[] = [];
    render(Sidebar, { app, library, onopennative: (k: string) => opened.push(k) });
    const row = await screen.findByTestId("native-session-item");
    expect(row.dataset.sessionKey).toBe("claude:n1");
    expect(row.querySelector('[data-testid="native-mark"]')?.textContent).toBe("claude's own");
    // After Weft's session in the same workspace.
    const keys = [...document.querySelectorAll("[data-session-key]")].map((e) => e.getAttribute("data-session-key"));
    expect(keys.at(-1)).toBe("claude:n1");
    expect(keys.length).toBe(2);
    expect(asked.some((r) => r.type === "listLibrary" && r.origin === "native")).toBe(true);
    await fireEvent.click(row.querySelector("button")!);
    expect(opened).toEqual(["claude:n1"]);
    // The sidebar's search finds it by a word of its transcript.
    app.search = "parse_config";
    const hit = await screen.findByTestId("native-search-hit");
    expect(hit.querySelector("mark")?.textContent).toBe("parse_config");
    expect(asked.some((r) => r.type === "searchLibrary" && r.query === "parse_config")).toBe(true);
    await fireEvent.click(hit.querySelector("button")!);
    expect(opened).toEqual(["claude:n1", "claude:n1"]);
  });
});
