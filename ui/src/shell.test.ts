// The shell in jsdom over the fake daemon: places by address, the palette, the help
// sheet and the sidebar's keyboard (the WebView e2e in ui/e2e/shell.e2e.test.mjs drives
// the same in the real window).
import { afterEach, describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "./App.svelte";
import { AppStore } from "./lib/app.svelte";
import { FakeTransport } from "./lib/fake-transport";

async function started(t = new FakeTransport()) {
  const app = new AppStore(t);
  render(App, { app });
  await waitFor(() => expect(screen.getByTestId("app").dataset.ready).toBe("true"));
  return { app, t };
}

afterEach(() => {
  window.history.replaceState(null, "", "/");
  localStorage.clear();
});

describe("the shell's places", () => {
  it("opens at the address it was loaded with, and goes where back/forward say", async () => {
    window.history.replaceState(null, "", "/#/settings/appearance");
    const { app } = await started();
    await screen.findByTestId("appearance-settings");
    expect(app.place).toEqual({ view: "settings", tab: "appearance" });
    await fireEvent.click(screen.getByTestId("rail-inbox"));
    await screen.findByTestId("inbox-view");
    expect(window.location.hash).toBe("#/inbox");
    window.history.replaceState(null, "", "/#/usage");
    window.dispatchEvent(new HashChangeEvent("hashchange"));
    await screen.findByTestId("usage-view");
    expect(screen.getByTestId("rail-usage").getAttribute("aria-current")).toBe("page");
  });

  it("puts a session's key in the address and a library search in its query", async () => {
    const t = new FakeTransport();
    const key = t.addSession("echo", "/work/demo", "fix the parser");
    const { app } = await started(t);
    await app.refreshSessions();
    app.selectSession(key);
    await waitFor(() => expect(window.location.hash).toBe(`#/s/${encodeURIComponent(key)}`));
    app.go({ view: "library", q: "parser" });
    await waitFor(() => expect(window.location.hash).toBe("#/library?q=parser"));
  });

  it("counts the questions waiting on the rail and lists them in the inbox", async () => {
    const t = new FakeTransport();
    const key = t.addSession();
    t.emit(key, {
      interactions: [{ promptId: "p1", kind: "permission", title: "Run rm -rf build?", detail: null, toolName: "Bash", questions: [], createdAt: 1, expiresAt: null } as never],
    });
    const { app } = await started(t);
    await waitFor(() => expect(screen.getByTestId("rail-inbox-count").textContent).toBe("1"));
    app.go({ view: "inbox" });
    const item = await screen.findByTestId("inbox-item");
    expect(item.textContent).toContain("Run rm -rf build?");
    await fireEvent.click(screen.getByTestId("inbox-answer"));
    expect(app.place.view).toBe("session");
    expect(app.selectedKey).toBe(key);
  });
});

describe("the palette and the help sheet", () => {
  it("opens on Ctrl+K, finds an action by a few letters, runs it with Enter", async () => {
    const { app } = await started();
    await fireEvent.keyDown(window, { key: "k", ctrlKey: true });
    const input = await screen.findByTestId("palette-input");
    await fireEvent.input(input, { target: { value: "usag" } });
    await waitFor(() => {
      const first = document.querySelector('[data-testid="palette-item"][data-selected]');
      expect(first?.getAttribute("data-action-id")).toBe("go-usage");
    });
    await fireEvent.keyDown(input, { key: "Enter" });
    await waitFor(() => expect(app.place.view).toBe("usage"));
    await waitFor(() => expect(screen.queryByTestId("palette")).toBeNull());
  });

  it("opens on Ctrl+Shift+K before anything else sees the key, and lists shortcuts on ?", async () => {
    await started();
    const inner = document.createElement("textarea");
    inner.className = "xterm-helper-textarea";
    document.body.appendChild(inner);
    let agentSaw = false;
    inner.addEventListener("keydown", () => (agentSaw = true));
    await fireEvent.keyDown(inner, { key: "K", ctrlKey: true, shiftKey: true });
    await screen.findByTestId("palette");
    expect(agentSaw).toBe(false);
    inner.remove();
    await fireEvent.keyDown(screen.getByTestId("palette-input"), { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("palette")).toBeNull());
    await fireEvent.keyDown(document.body, { key: "?" });
    const sheet = await screen.findByTestId("help-sheet");
    expect(sheet.textContent).toContain("Ctrl+K");
    expect(sheet.textContent).toContain("go to Inbox");
  });
});

describe("the review", () => {
  it("lists the sessions whose agent changed files, not the archived ones", async () => {
    const t = new FakeTransport();
    const edit = { path: "/work/demo/a.txt", kind: "modify" as const, diff: "--- a/a.txt\n+++ b/a.txt\n@@ -1 +1 @@\n-a\n+b\n" };
    const keys = [t.addSession("echo", "/work/demo", "kept"), t.addSession("echo", "/work/demo", "done with")];
    for (const key of keys) {
      t.emit(key, {
        phase: "streaming",
        taskId: `t-${key}`,
        prompt: "edit",
        toolCalls: [{ id: "c1", name: "Edit", summary: "a.txt", input: {}, result: null, status: "done", kind: "edit", parentId: null, changes: [edit] }],
      });
      t.finish(key);
    }
    for (const s of t.sessions.values()) s.info.turns = 1;
    const { app } = await started(t);
    await app.refreshSessions();
    app.go({ view: "review" });
    await waitFor(() => expect(screen.getAllByTestId("review-item").map((e) => e.dataset.sessionKey).sort()).toEqual([...keys].sort()));
    await app.mark(keys[1], "archive");
    await waitFor(() => expect(screen.getAllByTestId("review-item").map((e) => e.dataset.sessionKey)).toEqual([keys[0]]));
  });
});

describe("the sidebar", () => {
  it("filters by state and folds a workspace from the keyboard", async () => {
    const t = new FakeTransport();
    const a = t.addSession("echo", "/work/demo", "first");
    t.addSession("echo", "/work/demo", "second");
    t.emit(a, { phase: "streaming", taskId: "x", prompt: "p" });
    const { app } = await started(t);
    await app.refreshSessions();
    await waitFor(() => expect(screen.getAllByTestId("session-item").length).toBe(2));
    await fireEvent.change(screen.getByTestId("filter-state"), { target: { value: "running" } });
    await waitFor(() => expect(screen.getAllByTestId("session-item").map((e) => e.dataset.sessionKey)).toEqual([a]));
    await fireEvent.change(screen.getByTestId("filter-state"), { target: { value: "" } });
    await waitFor(() => expect(screen.getAllByTestId("session-item").length).toBe(2));
    const head = document.querySelector<HTMLElement>('[data-workdir="/work/demo"] .ws-head')!;
    head.focus();
    await fireEvent.keyDown(head, { key: "ArrowLeft" });
    await waitFor(() => expect(screen.queryAllByTestId("session-item")).toHaveLength(0));
    expect(screen.getByTestId("workspace-count").textContent).toBe("2");
    await fireEvent.keyDown(head, { key: "ArrowRight" });
    await waitFor(() => expect(screen.getAllByTestId("session-item")).toHaveLength(2));
  });

  it("pins a session to the top and archives one into a folded Archived section, from the palette", async () => {
    const t = new FakeTransport();
    const older = t.addSession("echo", "/work/demo", "older");
    const newer = t.addSession("echo", "/work/demo", "newer");
    const { app } = await started(t);
    await app.refreshSessions();
    const shown = () => screen.queryAllByTestId("session-item").map((e) => e.dataset.sessionKey);
    await waitFor(() => expect(shown()).toEqual([newer, older]));
    const run = async (id: string) => {
      await fireEvent.keyDown(window, { key: "k", ctrlKey: true });
      const input = await screen.findByTestId("palette-input");
      await fireEvent.input(input, { target: { value: id === "pin" ? "pin this" : "archive this" } });
      await waitFor(() => expect(document.querySelector('[data-testid="palette-item"][data-selected]')?.getAttribute("data-action-id")).toBe(id));
      await fireEvent.keyDown(input, { key: "Enter" });
      await waitFor(() => expect(screen.queryByTestId("palette")).toBeNull());
    };
    app.selectSession(older);
    await run("pin");
    await waitFor(() => expect(shown()).toEqual([older, newer]));
    const pinned = screen.getAllByTestId("session-item")[0];
    expect(pinned.dataset.pinned).toBe("true");
    expect(pinned.querySelector('[data-testid="session-pinned"]')).not.toBeNull();
    expect(t.calls.filter((c) => c.verb === "manageSession").map((c) => c.args)).toEqual([[older, { type: "pin" }]]);

    app.selectSession(newer);
    await run("archive");
    await waitFor(() => expect(shown()).toEqual([older]));
    expect(screen.getByTestId("archived-count").textContent).toBe("1");
    expect(screen.getByTestId("archived-head").dataset.folded).toBe("true");
    await fireEvent.click(screen.getByTestId("archived-toggle"));
    await waitFor(() => expect(shown()).toEqual([older, newer]));
    expect(screen.getAllByTestId("session-item")[1].dataset.archived).toBe("true");
    // A workspace with only archived sessions left keeps no empty group of its own.
    expect(screen.getAllByTestId("workspace").map((e) => e.dataset.workdir)).toEqual(["/work/demo"]);
  });
});
