import { beforeEach, describe, expect, it, vi } from "vitest";
import type { ServerMessage } from "../../generated";
import { encodeFrame, FRAME_DATA } from "../terminal/stream";

// The shell's side: what was invoked, and how it answers.
const invoked: { command: string; args: Record<string, unknown> }[] = [];
let answer: (command: string, args: Record<string, unknown>) => Promise<unknown> = async () => null;

vi.mock("@tauri-apps/api/core", () => {
  class Channel<T> {
    onmessage: (message: T) => void = () => {};
  }
  return {
    Channel,
    invoke: (command: string, args: Record<string, unknown> = {}) => {
      invoked.push({ command, args });
      return answer(command, args);
    },
  };
});
vi.mock("@tauri-apps/plugin-dialog", () => ({ open: async () => "/picked" }));

// This window's own event listeners (getCurrentWebviewWindow().listen), by event name.
const listeners = new Map<string, (event: { payload: unknown }) => void>();
let unlistened = 0;
vi.mock("@tauri-apps/api/webviewWindow", () => ({
  getCurrentWebviewWindow: () => ({
    label: "main",
    listen: async (event: string, handler: (event: { payload: unknown }) => void) => {
      listeners.set(event, handler);
      return () => {
        listeners.delete(event);
        unlistened += 1;
      };
    },
  }),
}));

const { NAVIGATE, tauriLink, tauriShell } = await import("./tauri");

const tick = () => new Promise((r) => setTimeout(r, 0));

beforeEach(() => {
  invoked.length = 0;
});

describe("tauriLink", () => {
  it("connects once with a Channel that carries messages as JSON and terminal frames as bytes", async () => {
    const welcome = { version: "0.1.0", pid: 9, scopes: ["read", "control"], restarting: false };
    answer = async (command) => (command === "weft_connect" ? welcome : null);
    const messages: ServerMessage[] = [];
    const frames: Uint8Array[] = [];
    const link = tauriLink();
    const got = await link.connect({ message: (m) => messages.push(m), frame: (b) => frames.push(b), down: () => {}, up: () => {} });
    expect(got).toEqual(welcome);
    expect(invoked.map((i) => i.command)).toEqual(["weft_connect"]);
    const channel = invoked[0].args.onMessage as { onmessage: (m: unknown) => void };
    channel.onmessage({ type: "resync", sessionKey: null });
    channel.onmessage(encodeFrame("echo:1", FRAME_DATA, 0, "hi").slice().buffer);
    expect(messages).toEqual([{ type: "resync", sessionKey: null }]);
    expect(frames.map((f) => f.length)).toEqual([20]);
  });

  it("sends each request with weft_request (no id) and hands back its result or error under the id", async () => {
    const messages: ServerMessage[] = [];
    answer = async (command, args) => {
      if (command === "weft_connect") return { version: "", pid: 1, scopes: [], restarting: false };
      const request = args.request as { type: string };
      if (request.type === "stop") throw { code: "unknownSession", message: "no such session" };
      return request.type === "listTools" ? [] : undefined;
    };
    const link = tauriLink();
    await link.connect({ message: (m) => messages.push(m), frame: () => {}, down: () => {}, up: () => {} });
    link.send({ id: 4, type: "listTools" });
    link.send({ id: 5, type: "stop", sessionKey: "echo:1" });
    link.send({ id: 6, type: "subscribeAll" });
    await tick();
    expect(invoked.slice(1)).toEqual([
      { command: "weft_request", args: { request: { type: "listTools" } } },
      { command: "weft_request", args: { request: { type: "stop", sessionKey: "echo:1" } } },
      { command: "weft_request", args: { request: { type: "subscribeAll" } } },
    ]);
    expect(messages).toEqual([
      { type: "reply", id: 4, result: [] },
      { type: "error", id: 5, error: { code: "unknownSession", message: "no such session" } },
      { type: "reply", id: 6, result: null },
    ]);
  });
});

describe("tauriShell", () => {
  it("is the shell's own commands and the folder dialog", async () => {
    answer = async (command) => (command === "recent_workspaces" ? ["/a"] : command === "export_session" ? "/saved.md" : null);
    const shell = tauriShell();
    expect(await shell.recentWorkspaces()).toEqual(["/a"]);
    await shell.addRecentWorkspace("/b");
    await shell.removeRecentWorkspace("/b");
    await shell.openLog?.();
    expect(await shell.pickWorkspace?.()).toBe("/picked");
    // Export names the session only: the shell picks the path in its own dialog.
    expect(await shell.saveExport?.("claude:n1", "markdown")).toBe("/saved.md");
    expect(invoked.map((i) => [i.command, i.args])).toEqual([
      ["recent_workspaces", {}],
      ["add_recent_workspace", { path: "/b" }],
      ["remove_recent_workspace", { path: "/b" }],
      ["open_log", {}],
      ["export_session", { sessionKey: "claude:n1", format: "markdown" }],
    ]);
  });
});

describe("tauriShell: the tray and pop-out windows", () => {
  it("sends the inbox count to the tray with set_inbox_count", async () => {
    answer = async () => null;
    await tauriShell().setInboxCount?.(2);
    await tauriShell().setInboxCount?.(0);
    expect(invoked.map((i) => [i.command, i.args])).toEqual([
      ["set_inbox_count", { count: 2 }],
      ["set_inbox_count", { count: 0 }],
    ]);
  });

  it("opens a pop-out with open_window and rejects with the shell's error as a VerbError", async () => {
    answer = async (command, args) => {
      if (command === "open_window" && !String(args.hash).startsWith("#/")) throw { code: "badRequest", message: "a window opens at an address of the app" };
      return null;
    };
    const shell = tauriShell();
    await shell.openWindow?.("#/s/claude%3Aabc");
    expect(invoked.map((i) => [i.command, i.args])).toEqual([["open_window", { hash: "#/s/claude%3Aabc" }]]);
    await expect(shell.openWindow?.("https://evil.example/")).rejects.toMatchObject({ code: "badRequest", message: "a window opens at an address of the app" });
  });

  it("hands the addresses the shell's navigate event names to the handler until unsubscribed", async () => {
    const heard: string[] = [];
    const unsubscribe = await tauriShell().onNavigate!((hash) => heard.push(hash));
    const emit = (payload: unknown) => listeners.get(NAVIGATE)?.({ payload });
    emit("#/inbox");
    // Anything but an address of the app is not passed on.
    emit("https://evil.example/");
    emit(42);
    expect(heard).toEqual(["#/inbox"]);
    unsubscribe();
    expect(unlistened).toBe(1);
    expect(listeners.has(NAVIGATE)).toBe(false);
    // No command is invoked for it: the event comes to this window by itself.
    expect(invoked).toEqual([]);
  });
});
