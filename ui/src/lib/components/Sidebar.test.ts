import { beforeEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
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
});
