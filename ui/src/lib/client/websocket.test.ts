import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { ServerMessage, Welcome } from "../../generated";
import { encodeFrame, FRAME_DATA } from "../terminal/stream";
import type { LinkState } from "../transport";
import { WeftClient } from "./client";
import type { LinkEvents, Shell } from "./link";
import { pageSocketUrl, webSocketLink } from "./websocket";

const WELCOME: Welcome = { version: "0.1.0", pid: 7, scopes: ["read", "control"], restarting: false };

/** A WebSocket stand-in: the test plays the daemon's side. */
class FakeSocket {
  static all: FakeSocket[] = [];
  static readonly OPEN = 1;
  readyState = 0;
  binaryType = "blob";
  sent: string[] = [];
  onopen: (() => void) | null = null;
  onmessage: ((e: { data: unknown }) => void) | null = null;
  onclose: ((e: { code: number; reason: string }) => void) | null = null;
  onerror: (() => void) | null = null;
  constructor(readonly url: string) {
    FakeSocket.all.push(this);
  }
  send(data: string) {
    this.sent.push(data);
  }
  close() {
    this.drop(1000, "");
  }
  // The daemon's side.
  accept() {
    this.readyState = 1;
    this.onopen?.();
  }
  hello() {
    return JSON.parse(this.sent[0]);
  }
  welcome(welcome = WELCOME) {
    this.serve({ type: "reply", id: this.hello().id, result: welcome } as ServerMessage);
  }
  serve(message: ServerMessage) {
    this.onmessage?.({ data: JSON.stringify(message) });
  }
  binary(bytes: Uint8Array) {
    this.onmessage?.({ data: bytes.slice().buffer });
  }
  drop(code = 1006, reason = "") {
    if (this.readyState === 3) return;
    this.readyState = 3;
    this.onclose?.({ code, reason });
  }
  requests() {
    return this.sent.slice(1).map((s) => JSON.parse(s));
  }
}

const latest = () => FakeSocket.all.at(-1)!;

function recorder() {
  const log: string[] = [];
  const events: LinkEvents = {
    message: (m) => log.push(`message ${m.type}`),
    frame: (b) => log.push(`frame ${b.length}`),
    down: (reason, again) => log.push(`down ${reason} ${again}`),
    up: (w) => log.push(`up ${w.pid}`),
  };
  return { log, events };
}

function link(token: string | null = "tok-1") {
  return webSocketLink({
    url: "ws://127.0.0.1:7777/ws",
    token,
    version: "0.1.0",
    retryMs: { first: 100, max: 400 },
    WebSocket: FakeSocket as unknown as typeof WebSocket,
  });
}

beforeEach(() => {
  FakeSocket.all = [];
  vi.useFakeTimers();
});
afterEach(() => {
  vi.useRealTimers();
});

describe("pageSocketUrl", () => {
  it("is the page's host at /ws, wss under https", () => {
    expect(pageSocketUrl({ protocol: "http:", host: "127.0.0.1:7777" })).toBe("ws://127.0.0.1:7777/ws");
    expect(pageSocketUrl({ protocol: "https:", host: "weft.local" })).toBe("wss://weft.local/ws");
  });
});

describe("webSocketLink", () => {
  it("says hello with the token in the first frame, then passes text as messages and binary as frames", async () => {
    const { log, events } = recorder();
    const l = link();
    const connecting = l.connect(events);
    const ws = latest();
    expect(ws.url).toBe("ws://127.0.0.1:7777/ws");
    expect(ws.binaryType).toBe("arraybuffer");
    expect(() => l.send({ id: 1, type: "inbox" })).toThrow();
    ws.accept();
    expect(ws.hello()).toEqual({ id: 0, type: "hello", version: "0.1.0", surface: "browser", env: null, token: "tok-1" });
    ws.welcome();
    expect(await connecting).toEqual(WELCOME);
    l.send({ id: 1, type: "inbox" });
    expect(ws.requests()).toEqual([{ id: 1, type: "inbox" }]);
    ws.serve({ type: "reply", id: 1, result: [] });
    ws.binary(encodeFrame("echo:1", FRAME_DATA, 0, "hi"));
    ws.onmessage?.({ data: "{not json" });
    expect(log).toEqual(["message reply", "frame 20"]);
  });

  it("refuses to connect when the hello is refused, and does not retry", async () => {
    const { log, events } = recorder();
    const connecting = link("wrong").connect(events);
    latest().accept();
    latest().serve({ type: "error", id: 0, error: { code: "badRequest", message: "bad token" } });
    await expect(connecting).rejects.toMatchObject({ code: "badRequest", message: "bad token" });
    await vi.advanceTimersByTimeAsync(5000);
    expect(FakeSocket.all).toHaveLength(1);
    expect(log).toEqual([]);
  });

  it("does not dial without a token, and says where one comes from", async () => {
    await expect(link(null).connect(recorder().events)).rejects.toMatchObject({ code: "badRequest", message: expect.stringContaining("weft serve") });
    expect(FakeSocket.all).toHaveLength(0);
  });

  it("rejects a connection that closes before its hello is answered", async () => {
    const connecting = link().connect(recorder().events);
    latest().drop(1006, "");
    await expect(connecting).rejects.toMatchObject({ code: "internal", message: expect.stringContaining("closed (1006)") });
  });

  it("after a drop, dials again with a growing pause until a hello is answered", async () => {
    const { log, events } = recorder();
    const l = link();
    const connecting = l.connect(events);
    latest().accept();
    latest().welcome();
    await connecting;
    latest().drop(1001, "daemon stopped");
    expect(log).toEqual(["down daemon stopped true"]);
    expect(() => l.send({ id: 2, type: "inbox" })).toThrow(/Not connected/);
    await vi.advanceTimersByTimeAsync(99);
    expect(FakeSocket.all).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeSocket.all).toHaveLength(2);
    latest().drop(); // nobody listening yet
    await vi.advanceTimersByTimeAsync(199);
    expect(FakeSocket.all).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeSocket.all).toHaveLength(3);
    latest().drop();
    await vi.advanceTimersByTimeAsync(400); // capped at max
    expect(FakeSocket.all).toHaveLength(4);
    latest().accept();
    expect(latest().hello().token).toBe("tok-1");
    latest().welcome({ ...WELCOME, pid: 8 });
    await vi.advanceTimersByTimeAsync(0);
    expect(log).toEqual(["down daemon stopped true", "up 8"]);
    l.send({ id: 3, type: "inbox" });
    expect(latest().requests()).toEqual([{ id: 3, type: "inbox" }]);
    // The pause starts small again after a success.
    latest().drop();
    await vi.advanceTimersByTimeAsync(100);
    expect(FakeSocket.all).toHaveLength(5);
  });

  it("with the client: the window is told, resubscribes and re-reads everything once back", async () => {
    const shell: Shell = {
      appInfo: async () => ({ version: "", stateDir: "", logPath: null, initialWorkspace: null }),
      recentWorkspaces: async () => [],
      addRecentWorkspace: async () => [],
      removeRecentWorkspace: async () => [],
    };
    const client = new WeftClient(link(), shell);
    const states: LinkState[] = [];
    const resyncs: (string | null)[] = [];
    await client.onLinkState((s) => states.push(s));
    await client.onResync((k) => resyncs.push(k));
    const connecting = client.connect();
    latest().accept();
    latest().welcome();
    await vi.advanceTimersByTimeAsync(0);
    const subscribe = latest().requests()[0];
    expect(subscribe.type).toBe("subscribeAll");
    latest().serve({ type: "reply", id: subscribe.id, result: null });
    await connecting;
    const pending = client.request({ type: "listSessions", workdir: null });
    latest().serve({ type: "closing", reason: "stopped by `weft daemon stop`" });
    latest().drop(1001, "going away");
    await expect(pending).rejects.toMatchObject({ code: "internal" });
    await expect(client.request({ type: "inbox" })).rejects.toMatchObject({ offline: true, message: expect.stringMatching(/Not connected/) });
    await vi.advanceTimersByTimeAsync(100);
    latest().accept();
    latest().welcome();
    await vi.advanceTimersByTimeAsync(0);
    const again = latest().requests()[0];
    expect(again.type).toBe("subscribeAll");
    latest().serve({ type: "reply", id: again.id, result: null });
    await vi.advanceTimersByTimeAsync(0);
    expect(states).toEqual([
      { state: "disconnected", reason: "stopped by `weft daemon stop`", reconnecting: true },
      // The connection drops after the closing: its reason is the one that says why.
      { state: "disconnected", reason: "stopped by `weft daemon stop`", reconnecting: true },
      { state: "connected" },
    ]);
    expect(resyncs).toEqual([null]);
  });
});
