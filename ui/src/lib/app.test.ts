import { describe, expect, it, vi } from "vitest";
import { AppStore, WARM_DWELL_MS } from "./app.svelte";
import { FakeTransport } from "./fake-transport";
import type { TerminalClient } from "./terminal/client";
import { VerbError } from "./transport";

const tick = () => new Promise((r) => setTimeout(r, 0));

async function started() {
  const t = new FakeTransport();
  const app = new AppStore(t);
  await app.start();
  await app.agentsReady;
  return { t, app };
}

describe("AppStore", () => {
  it("marks what changed while another session was open as unread, and writes the open one's seen mark at most once a second", async () => {
    const t = new FakeTransport();
    const a = t.addSession("echo", "/work/demo", "a");
    const b = t.addSession("echo", "/work/demo", "b");
    const app = new AppStore(t);
    await app.start();
    const info = (key: string) => app.sessions.find((s) => s.sessionKey === key)!;
    expect(app.unread(info(a))).toBe(false);
    app.selectSession(a);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const writes = vi.spyOn(Storage.prototype, "setItem");
    try {
      const at = info(a).updatedAt;
      t.emit(a, { phase: "streaming", taskId: "t", prompt: "p" });
      for (let i = 1; i <= 50; i++) t.emit(a, { textAppend: "x", updatedAt: at + i });
      const seenWrites = () => writes.mock.calls.filter(([k]) => k === "weft.seen").length;
      expect(seenWrites()).toBe(0);
      vi.advanceTimersByTime(1000);
      expect(seenWrites()).toBe(1);
      t.emit(a, { textAppend: "y", updatedAt: at + 60 });
      t.emit(b, { phase: "streaming", taskId: "u", prompt: "q", updatedAt: at + 70 });
      expect(app.unread(info(b))).toBe(true);
      // Opening b writes down what was seen of a, at once.
      app.selectSession(b);
      expect(seenWrites()).toBe(3);
      expect(app.unread(info(a))).toBe(false);
      expect(app.unread(info(b))).toBe(false);
      expect(JSON.parse(localStorage.getItem("weft.seen") ?? "{}")[a]).toBe(at + 60);
    } finally {
      writes.mockRestore();
      vi.useRealTimers();
    }
  });


  it("starts the agent's process ahead once a choice holds: the new session's agent, then an opened session, never each one clicked through", async () => {
    const t = new FakeTransport();
    const a = t.addSession("echo", "/work/demo", "a");
    const b = t.addSession("echo", "/work/demo", "b");
    const app = new AppStore(t);
    await app.start();
    await app.agentsReady;
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    try {
      const warmed = () => t.calls.filter((c) => c.verb === "prewarm").map((c) => c.args[0]);
      await app.chooseAgent("echo");
      vi.advanceTimersByTime(WARM_DWELL_MS);
      expect(warmed()).toEqual([{ type: "prewarm", sessionKey: null, agent: "echo", workdir: "/work/demo", model: "echo-1", effort: null, account: null }]);
      app.selectSession(a);
      vi.advanceTimersByTime(WARM_DWELL_MS / 2);
      app.selectSession(b);
      vi.advanceTimersByTime(WARM_DWELL_MS);
      expect(warmed().slice(1)).toEqual([{ type: "prewarm", sessionKey: b, agent: null, workdir: null, model: null, effort: null, account: null }]);
      // A new session bound for a new worktree: no folder to start a process in yet.
      app.newSession("/work/demo");
      app.newInWorktree = true;
      await app.chooseAgent("echo");
      vi.advanceTimersByTime(WARM_DWELL_MS);
      expect(warmed()).toHaveLength(2);
    } finally {
      vi.useRealTimers();
    }
  });

  it("starts in the workspace from the command line with the echo agent", async () => {
    const { app } = await started();
    expect(app.workspace).toBe("/work/demo");
    expect(app.workspaces).toEqual(["/work/demo"]);
    expect(app.agent).toBe("echo");
    expect(app.model).toBe("echo-1");
    expect(app.efforts).toEqual(["low", "high"]);
  });

  it("sends a new session's first prompt with the chosen agent, model and workdir", async () => {
    const { t, app } = await started();
    app.effort = "high";
    expect(await app.send("  hello  ")).toBe(true);
    const call = t.calls.find((c) => c.verb === "prompt");
    expect(call?.args[0]).toMatchObject({ prompt: "hello", agent: "echo", sessionKey: null, workdir: "/work/demo", model: "echo-1", effort: "high" });
    expect(app.selectedKey).toMatch(/^echo:/);
    expect(await app.send("   ")).toBe(false);
  });

  it("a new native session's prompt carries the chosen pack; other agents send none", async () => {
    const { t, app } = await started();
    app.agent = "native";
    app.pack = "notes";
    expect(await app.send("what do my notes say")).toBe(true);
    const native = t.calls.filter((c) => c.verb === "prompt").pop();
    expect(native?.args[0]).toMatchObject({ agent: "native", pack: "notes" });
    app.newSession();
    app.agent = "echo";
    expect(await app.send("hello")).toBe(true);
    const echo = t.calls.filter((c) => c.verb === "prompt").pop();
    expect(echo?.args[0]).toMatchObject({ agent: "echo", pack: null });
  });

  it("undo sends /undo to the selected native session and to no other", async () => {
    const { t, app } = await started();
    expect(app.canUndo).toBe(false);
    app.agent = "native";
    expect(await app.send("make a file")).toBe(true);
    expect(app.canUndo).toBe(true);
    expect(await app.undo()).toBe(true);
    const last = t.calls.filter((c) => c.verb === "prompt").pop();
    expect(last?.args[0]).toMatchObject({ prompt: "/undo", sessionKey: app.selectedKey });
    app.newSession();
    app.agent = "echo";
    await app.send("hello");
    expect(app.canUndo).toBe(false);
    expect(await app.undo()).toBe(false);
  });

  it("a new session in a workspace starts with the agent, model and effort last used there", async () => {
    localStorage.removeItem("weft.choices");
    const { app } = await started();
    app.effort = "high";
    expect(await app.send("remember this")).toBe(true);
    app.newSession();
    await tick();
    expect(app.effort).toBe("high");
    // Another workspace has its own.
    app.newSession("/work/other");
    app.effort = "low";
    expect(await app.send("over there")).toBe(true);
    app.newSession("/work/demo");
    await tick();
    expect(app.effort).toBe("high");
    app.newSession("/work/other");
    await tick();
    expect(app.effort).toBe("low");
    // The next window, in the first workspace.
    const next = await started();
    expect(next.app.workspace).toBe("/work/demo");
    expect(next.app.agent).toBe("echo");
    expect(next.app.effort).toBe("high");
    localStorage.removeItem("weft.choices");
  });

  it("while a turn runs, steers or queues as chosen and notes which", async () => {
    const { t, app } = await started();
    await app.send("first");
    await tick();
    const view = app.selected!;
    expect(view.running).toBe(true);
    await app.send("go left");
    expect(t.calls.at(-1)).toMatchObject({ verb: "steer", args: [view.key, "go left", []] });
    expect(view.notes.at(-1)?.text).toContain("Steered the running turn");
    t.steerOutcome = "queued";
    await app.send("go right");
    expect(view.notes.at(-1)?.text).toContain("queued");
    // A steer carries the composer's attachments, and the note names them.
    await app.send("look at this", ["/work/demo/shot.png", "/work/demo/notes.md"]);
    expect(t.calls.at(-1)).toMatchObject({
      verb: "steer",
      args: [view.key, "look at this", ["/work/demo/shot.png", "/work/demo/notes.md"]],
    });
    expect(view.notes.at(-1)?.text).toContain("queued: “look at this” (attached: shot.png, notes.md)");
    app.sendMode = "queue";
    await app.send("later");
    expect(t.calls.at(-1)).toMatchObject({ verb: "prompt" });
    expect(view.current.queued.map((q) => q.prompt)).toEqual(["later"]);
    await app.stopSelected();
    expect(t.calls.at(-1)).toMatchObject({ verb: "stop", args: [view.key] });
  });

  it("filters and groups sessions by workspace, and cycles the selection", async () => {
    const { t, app } = await started();
    t.addSession("echo", "/work/demo", "fix the parser");
    t.addSession("claude", "/work/other", "write docs");
    await app.refreshSessions();
    expect(app.workspaceGroups.map((g) => g.workdir)).toEqual(["/work/demo", "/work/other"]);
    app.search = "docs";
    expect(app.workspaceGroups.map((g) => g.sessions.map((s) => s.title))).toEqual([["write docs"]]);
    app.search = "";
    app.cycleSession(1);
    const first = app.selectedKey;
    app.cycleSession(1);
    expect(app.selectedKey).not.toBe(first);
    app.cycleSession(-1);
    expect(app.selectedKey).toBe(first);
  });

  it("starts a new session in a worktree of its own when asked, lists it under its repository's workspace, and keeps the choice per workspace", async () => {
    const { t, app } = await started();
    t.addSession("echo", "/work/demo", "in the folder itself");
    app.newSession("/work/demo");
    expect(app.newInWorktree).toBe(false);
    app.newInWorktree = true;
    app.worktrees.setNewInWorktree("/work/demo", true);
    expect(await app.send("try the parser rewrite")).toBe(true);
    const call = t.calls.filter((c) => c.verb === "prompt").pop();
    expect(call?.args[0]).toMatchObject({ workdir: "/work/demo", worktree: { name: "auto" } });
    await vi.waitFor(() => expect(app.worktrees.list).toHaveLength(1));
    await app.refreshSessions();
    const [demo, ...others] = app.workspaceGroups;
    // The worktree is no workspace of its own: its session sits under the repository's.
    expect(others.map((g) => g.workdir)).not.toContain(t.worktrees[0].path);
    expect(demo.workdir).toBe("/work/demo");
    expect(demo.sessions.map((s) => s.title)).toEqual(["in the folder itself"]);
    expect(demo.worktrees).toMatchObject([{ name: t.worktrees[0].name, branch: t.worktrees[0].branch, known: true }]);
    expect(demo.worktrees[0].sessions.map((s) => s.title)).toEqual(["try the parser rewrite"]);
    // Ctrl+Tab reaches the session in the worktree too.
    app.selectSession(demo.sessions[0].sessionKey);
    app.cycleSession(1);
    expect(app.selectedKey).toBe(demo.worktrees[0].sessions[0].sessionKey);
    // The choice holds for the next new session here, not in another workspace.
    app.newSession("/work/other");
    expect(app.newInWorktree).toBe(false);
    app.newSession("/work/demo");
    expect(app.newInWorktree).toBe(true);
    // A prompt into an existing session never asks for a worktree.
    app.selectSession(demo.sessions[0].sessionKey);
    await app.send("carry on");
    expect(t.calls.filter((c) => c.verb === "prompt").pop()?.args[0]).toMatchObject({ worktree: null });
  });

  it("shows a verb's failure as a banner", async () => {
    const { t, app } = await started();
    const served = t.request.bind(t);
    t.request = async (r) => {
      if (r.type === "getSnapshot") throw { code: "unknownSession", message: "unknown session `x`" };
      return served(r);
    };
    app.selectSession("echo:nope");
    await tick();
    expect(app.selected?.loadError).toBe("unknown session `x`");
  });

  it("remembers picked workspaces, newest first", async () => {
    const { app } = await started();
    await app.pickWorkspace();
    expect(app.workspaces).toEqual(["/work/picked", "/work/demo"]);
    expect(app.workspace).toBe("/work/picked");
  });

  it("without a folder dialog (a browser), asks for the path in a field", async () => {
    const t = new FakeTransport();
    t.pickWorkspace = undefined;
    const app = new AppStore(t);
    await app.start();
    await app.pickWorkspace();
    expect(app.enteringWorkspace).toBe(true);
    expect(await app.enterWorkspace("relative/path")).toBe(false);
    expect(app.error).toMatch(/absolute path/);
    expect(await app.enterWorkspace("  /work/typed/  ")).toBe(true);
    expect(app.enteringWorkspace).toBe(false);
    expect(app.error).toBeNull();
    expect(app.workspace).toBe("/work/typed");
    expect(app.workspaces[0]).toBe("/work/typed");
  });

  it("connects before any verb and shows when the link is down, with no error banner for verbs lost with it", async () => {
    const { t, app } = await started();
    expect(t.calls[0].verb).toBe("connect");
    t.linkState({ state: "disconnected", reason: "going away", reconnecting: true });
    expect(app.link).toEqual({ state: "disconnected", reason: "going away", reconnecting: true });
    const served = t.request.bind(t);
    t.request = async (r) => {
      if (r.type === "listSessions") throw new VerbError({ code: "internal", message: "Not connected to Weft (reconnecting)." }, true);
      return served(r);
    };
    await app.refreshSessions();
    expect(app.error).toBeNull();
    t.linkState({ state: "connected" });
    expect(app.link.state).toBe("connected");
  });

  it("marks sessions already waiting for an answer from the inbox at start", async () => {
    const t = new FakeTransport();
    const key = t.addSession();
    t.emit(key, { interactions: [{ promptId: "p", kind: "permission", title: "?", detail: null, toolName: "x", toolInput: null, questions: [] }] });
    const app = new AppStore(t);
    await app.start();
    await tick();
    expect(app.needsAnswer[key]).toBe(1);
  });

  it("re-reads one session's snapshot on its resync, every open one on a resync of all", async () => {
    const { t, app } = await started();
    const a = t.addSession();
    const b = t.addSession();
    app.selectSession(a);
    app.selectSession(b);
    await tick();
    const reads = () => t.calls.filter((c) => c.verb === "getSnapshot").map((c) => c.args[0]);
    expect(reads()).toEqual([a, b]);
    t.resync(a);
    await tick();
    expect(reads()).toEqual([a, b, a]);
    t.resync(null);
    await tick();
    expect(reads().slice(3).sort()).toEqual([a, b].sort());
  });

  it("marks sessions waiting for an answer from the patch stream", async () => {
    const { t, app } = await started();
    const key = t.addSession();
    t.emit(key, { interactions: [{ promptId: "p", kind: "user-input", title: "?", detail: null, toolName: null, toolInput: null, questions: [] }] });
    expect(app.needsAnswer[key]).toBe(1);
  });
});

describe("AppStore and the agent's terminal", () => {
  function terminals(): TerminalClient & { calls: string[] } {
    const calls: string[] = [];
    const note = (verb: string) => async (key: string) => void calls.push(`${verb} ${key}`);
    return {
      calls,
      open: async (args) => {
        calls.push(`open ${args.sessionKey}`);
        return { sessionKey: args.sessionKey ?? "echo:new" };
      },
      attach: async (key) => void calls.push(`attach ${key}`),
      detach: note("detach"),
      write: async () => {},
      resize: async () => {},
      close: note("close"),
    };
  }

  it("stops no terminal turn opened elsewhere (it ends by closing), and closing ends it from here", async () => {
    const t = new FakeTransport();
    const term = terminals();
    const app = new AppStore(t, term);
    await app.start();
    const key = t.addSession();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "", terminal: true });
    app.selectSession(key);
    await app.selected!.load();
    expect(app.selected!.terminalOffer).toBe("show");
    await app.stopSelected();
    expect(t.calls.some((c) => c.verb === "stop")).toBe(false);
    app.selected!.showTerminal();
    await app.closeTerminal(key);
    expect(term.calls).toEqual([`close ${key}`]);
    expect(app.selected!.terminalShown).toBe(false);
  });
});

describe("AppStore transcript search", () => {
  it("searches past turns once typing pauses and keeps only the latest answer", async () => {
    const { t, app } = await started();
    const key = t.addSession("echo", "/work/demo", "zoo trip");
    t.emit(key, { taskId: "t1", phase: "streaming", prompt: "where is the zebra", text: "" });
    t.emit(key, { text: "Echo: where is the zebra", phase: "done" });
    t.finish(key);
    app.search = "z";
    await app.searchChanged(0);
    expect(app.searchHits).toEqual([]);
    expect(t.calls.some((c) => c.verb === "search")).toBe(false);
    app.search = "zebra";
    const stale = app.searchChanged(50);
    app.search = "nothing-here";
    await app.searchChanged(0);
    await stale;
    expect(app.searchHits).toEqual([]);
    app.search = "zebra";
    await app.searchChanged(0);
    expect(app.searchHits).toHaveLength(1);
    expect(app.searchHits[0]).toMatchObject({ sessionKey: key, taskId: "t1" });
    expect(app.searchHits[0].snippet).toContain("«zebra»");
    app.search = "";
    await app.searchChanged(0);
    expect(app.searchHits).toEqual([]);
  });
});
