import { describe, expect, it } from "vitest";
import type { ClientMessage, PatchEvent, ServerMessage, Welcome } from "../../generated";
import { emptySnapshot } from "../patch";
import { SessionView } from "../session-view.svelte";
import { encodeFrame, FRAME_DATA, FRAME_SCREEN, type Frame } from "../terminal/stream";
import { VerbError, type LinkState } from "../transport";
import { WeftClient } from "./client";
import type { Link, LinkEvents, Shell } from "./link";

const tick = () => new Promise((r) => setTimeout(r, 0));
const WELCOME: Welcome = { version: "0.1.0", pid: 42, scopes: ["read", "control"], restarting: false };

/** A link-level stand-in for the daemon: records what is sent; the test answers. */
class ScriptedLink implements Link {
  sent: ClientMessage[] = [];
  events!: LinkEvents;
  down = false;
  /** Answers `subscribeAll` at once (most tests do not care about it). */
  autoSubscribe = true;

  async connect(events: LinkEvents) {
    this.events = events;
    return WELCOME;
  }
  send(message: ClientMessage) {
    if (this.down) throw { code: "internal", message: "link down" };
    this.sent.push(message);
    if (this.autoSubscribe && message.type === "subscribeAll") this.reply(message.id, null);
  }
  reply(id: number, result: unknown) {
    this.events.message({ type: "reply", id, result } as ServerMessage);
  }
  fail(id: number, code: "unknownSession" | "busy", message: string) {
    this.events.message({ type: "error", id, error: { code, message } });
  }
  push(message: ServerMessage) {
    this.events.message(message);
  }
  frame(key: string, kind: number, offset: number, payload: string) {
    this.events.frame(encodeFrame(key, kind, offset, payload));
  }
  last(type: ClientMessage["type"]): ClientMessage {
    const m = this.sent.filter((s) => s.type === type).at(-1);
    if (!m) throw new Error(`no ${type} sent (sent: ${this.sent.map((s) => s.type).join(", ")})`);
    return m;
  }
  count(type: ClientMessage["type"]) {
    return this.sent.filter((s) => s.type === type).length;
  }
}

const shell: Shell = {
  appInfo: async () => ({ version: "0", stateDir: "/s", logPath: null, initialWorkspace: null }),
  recentWorkspaces: async () => [],
  addRecentWorkspace: async (p) => [p],
  removeRecentWorkspace: async () => [],
};

async function connected() {
  const link = new ScriptedLink();
  const client = new WeftClient(link, shell);
  await client.connect();
  return { link, client };
}

/** A session view of echo:1 fed by `client`, loaded from an empty snapshot and history. */
async function loadedView(link: ScriptedLink, client: WeftClient) {
  const view = new SessionView("echo:1", client);
  await client.onPatch((e) => view.receive(e));
  const loading = view.load();
  link.reply(link.last("getSnapshot").id, { sessionKey: "echo:1", seq: 0, snapshot: emptySnapshot("echo") });
  link.reply(link.last("getHistory").id, []);
  await loading;
  return view;
}

const text = (f: Frame) => ("data" in f ? new TextDecoder().decode(f.data) : `exit ${f.exit.code}`);

describe("WeftClient requests", () => {
  it("subscribes to every session once connected, and matches replies to requests by id", async () => {
    const { link, client } = await connected();
    expect(link.sent.map((m) => m.type)).toEqual(["subscribeAll"]);
    expect(client.welcome).toEqual(WELCOME);
    const sessions = client.request({ type: "listSessions", workdir: "/w" });
    const effort = client.request({ type: "listEffort", agent: "echo" });
    const [a, b] = link.sent.slice(1);
    expect(a).toEqual({ id: a.id, type: "listSessions", workdir: "/w" });
    expect(b).toEqual({ id: b.id, type: "listEffort", agent: "echo" });
    expect(a.id).not.toBe(b.id);
    // Answered out of order; a reply to nobody's id is ignored.
    link.reply(9999, "stray");
    link.reply(b.id, ["low", "high"]);
    link.reply(a.id, []);
    expect(await effort).toEqual(["low", "high"]);
    expect(await sessions).toEqual([]);
  });

  it("sends no subscribeAll over a link that subscribes by itself (the desktop shell)", async () => {
    const link = Object.assign(new ScriptedLink(), { subscribesAll: true });
    await new WeftClient(link, shell).connect();
    expect(link.sent).toEqual([]);
  });

  it("sends each verb as its wire request with every field", async () => {
    const { link, client } = await connected();
    void client.request({ type: "prompt", prompt: "hi", agent: "echo", sessionKey: null, workdir: "/w", model: null, effort: null, attachments: [] });
    void client.request({ type: "getHistory", sessionKey: "echo:1", limit: null, before: null });
    void client.request({ type: "search", query: "zebra", limit: null });
    void client.request({ type: "interact", sessionKey: "echo:1", promptId: "p", action: "select", value: "allow", answers: {} });
    const [prompt, history, search, interact] = link.sent.slice(1);
    expect(prompt).toMatchObject({ type: "prompt", prompt: "hi", agent: "echo", workdir: "/w", attachments: [] });
    expect(history).toMatchObject({ type: "getHistory", sessionKey: "echo:1", limit: null, before: null });
    expect(search).toMatchObject({ type: "search", query: "zebra", limit: null });
    expect(interact).toMatchObject({ type: "interact", sessionKey: "echo:1", promptId: "p", action: "select", value: "allow" });
  });

  it("turns an error reply into a VerbError with the wire code", async () => {
    const { link, client } = await connected();
    const snap = client.request({ type: "getSnapshot", sessionKey: "echo:nope" });
    link.fail(link.last("getSnapshot").id, "unknownSession", "unknown session `echo:nope`");
    const error = await snap.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VerbError);
    expect(error).toMatchObject({ code: "unknownSession", message: "unknown session `echo:nope`" });
  });

  it("fails every request in flight on an error the daemon could not attribute (id 0)", async () => {
    const { link, client } = await connected();
    const a = client.request({ type: "getSnapshot", sessionKey: "echo:1" }).catch((e: unknown) => e);
    const b = client.request({ type: "stop", sessionKey: "echo:2" }).catch((e: unknown) => e);
    link.push({ type: "error", id: 0, error: { code: "badRequest", message: "bad message: no id" } });
    for (const e of [await a, await b]) {
      expect(e).toBeInstanceOf(VerbError);
      expect(e).toMatchObject({ code: "badRequest", message: "bad message: no id" });
    }
  });

  it("rejects at once with a VerbError when the link cannot send", async () => {
    const { link, client } = await connected();
    link.down = true;
    await expect(client.request({ type: "stop", sessionKey: "echo:1" })).rejects.toMatchObject({ code: "internal", message: "link down" });
  });
});

describe("WeftClient pushed messages", () => {
  it("hands patches, resyncs and the daemon's closing to whoever listens", async () => {
    const { link, client } = await connected();
    const patches: PatchEvent[] = [];
    const resyncs: (string | null)[] = [];
    const states: LinkState[] = [];
    const off = await client.onPatch((e) => patches.push(e));
    await client.onResync((k) => resyncs.push(k));
    await client.onLinkState((s) => states.push(s));
    link.push({ type: "patch", sessionKey: "echo:1", seq: 1, patch: { textAppend: "He" } });
    link.push({ type: "resync", sessionKey: "echo:1" });
    link.push({ type: "closing", reason: "restarting for version 0.2.0" });
    link.push({ type: "resync", sessionKey: null });
    off();
    link.push({ type: "patch", sessionKey: "echo:1", seq: 2, patch: { textAppend: "llo" } });
    expect(patches).toEqual([{ sessionKey: "echo:1", seq: 1, patch: { textAppend: "He" } }]);
    expect(resyncs).toEqual(["echo:1", null]);
    expect(states).toEqual([
      { state: "disconnected", reason: "restarting for version 0.2.0", reconnecting: true },
      { state: "connected" },
    ]);
  });

  it("a session view re-reads its snapshot through the client on a seq gap", async () => {
    const { link, client } = await connected();
    const view = await loadedView(link, client);
    link.push({ type: "patch", sessionKey: "echo:1", seq: 1, patch: { phase: "streaming", taskId: "a", textAppend: "a" } });
    link.push({ type: "patch", sessionKey: "echo:1", seq: 2, patch: { textAppend: "b" } });
    expect(view.current.text).toBe("ab");
    expect(link.count("getSnapshot")).toBe(1);
    // seq 3 was lost: the view asks for the whole snapshot and goes on from its seq.
    link.push({ type: "patch", sessionKey: "echo:1", seq: 4, patch: { textAppend: "d" } });
    expect(view.resyncs).toBe(1);
    expect(link.count("getSnapshot")).toBe(2);
    link.push({ type: "patch", sessionKey: "echo:1", seq: 5, patch: { textAppend: "e" } });
    const snapshot = { ...emptySnapshot("echo"), phase: "streaming" as const, taskId: "a", text: "abcd" };
    link.reply(link.last("getSnapshot").id, { sessionKey: "echo:1", seq: 4, snapshot });
    link.reply(link.last("getHistory").id, []);
    await tick();
    expect(view.seq).toBe(5);
    expect(view.current.text).toBe("abcde");
  });

  it("a merged patch (from..seq) applies without a resync", async () => {
    const { link, client } = await connected();
    const view = await loadedView(link, client);
    link.push({ type: "patch", sessionKey: "echo:1", seq: 1, patch: { phase: "streaming", taskId: "a", textAppend: "a" } });
    // Seqs 2..4 merged into one, as the daemon sends them to a client that fell behind.
    link.push({ type: "patch", sessionKey: "echo:1", seq: 4, from: 2, patch: { textAppend: "bcd" } });
    expect(view.resyncs).toBe(0);
    expect(link.count("getSnapshot")).toBe(1);
    expect(view.seq).toBe(4);
    expect(view.current.text).toBe("abcd");
  });
});

describe("WeftClient terminals", () => {
  it("routes each frame by its session key to the pane attached to it", async () => {
    const { link, client } = await connected();
    const one: string[] = [];
    const two: string[] = [];
    const opened = client.open({ sessionKey: "echo:1", cols: 80, rows: 24 }, (f) => one.push(`${f.kind}:${text(f)}`));
    await tick();
    expect(link.last("openTerminal")).toMatchObject({ sessionKey: "echo:1", agent: null, workdir: null, model: null, cols: 80, rows: 24 });
    // The screen may come before the reply.
    link.frame("echo:1", FRAME_SCREEN, 0, "$ ");
    link.reply(link.last("openTerminal").id, { sessionKey: "echo:1" });
    expect(await opened).toEqual({ sessionKey: "echo:1" });
    const attached = client.attach("claude:2", (f) => two.push(`${f.kind}:${text(f)}`));
    await tick();
    link.reply(link.last("attachTerminal").id, { sessionKey: "claude:2" });
    await attached;
    link.frame("claude:2", FRAME_SCREEN, 5, "claude>");
    link.frame("echo:1", FRAME_DATA, 0, "ls\r\n");
    link.frame("nobody:3", FRAME_DATA, 0, "lost");
    link.events.frame(new Uint8Array([7, 7, 7]));
    expect(one).toEqual(["screen:$ ", "data:ls\r\n"]);
    expect(two).toEqual(["screen:claude>"]);
    // A detached pane gets nothing more; the other still does.
    const detached = client.detach("echo:1");
    await tick();
    expect(link.last("detachTerminal")).toMatchObject({ sessionKey: "echo:1" });
    link.reply(link.last("detachTerminal").id, null);
    await detached;
    link.frame("echo:1", FRAME_DATA, 4, "more");
    link.frame("claude:2", FRAME_DATA, 5, "!");
    expect(one).toHaveLength(2);
    expect(two).toEqual(["screen:claude>", "data:!"]);
  });

  it("gives a terminal opened for a new session the frames that came before its key was known", async () => {
    const { link, client } = await connected();
    const got: string[] = [];
    const opened = client.open({ agent: "echo", workdir: "/w", cols: 100, rows: 30 }, (f) => got.push(text(f)));
    link.frame("echo:new", FRAME_SCREEN, 0, "hello");
    link.reply(link.last("openTerminal").id, { sessionKey: "echo:new" });
    expect(await opened).toEqual({ sessionKey: "echo:new" });
    link.frame("echo:new", FRAME_DATA, 5, " world");
    expect(got).toEqual(["hello", " world"]);
  });

  it("sends a session's attach only after its detach was answered", async () => {
    const { link, client } = await connected();
    const detached = client.detach("echo:1");
    const attached = client.attach("echo:1", () => {});
    await tick();
    expect(link.count("attachTerminal")).toBe(0);
    link.reply(link.last("detachTerminal").id, null);
    await detached;
    await tick();
    expect(link.count("attachTerminal")).toBe(1);
    link.reply(link.last("attachTerminal").id, { sessionKey: "echo:1" });
    await attached;
  });

  it("types, resizes and closes through the wire's terminal verbs", async () => {
    const { link, client } = await connected();
    void client.write("echo:1", "ls\r");
    void client.resize("echo:1", 120, 40);
    void client.close("echo:1");
    await tick();
    expect(link.sent.slice(1).map(({ id: _id, ...m }) => m)).toEqual([
      { type: "writeTerminal", sessionKey: "echo:1", data: "ls\r" },
      { type: "resizeTerminal", sessionKey: "echo:1", cols: 120, rows: 40 },
      { type: "closeTerminal", sessionKey: "echo:1" },
    ]);
  });
});

describe("WeftClient over a link that reconnects", () => {
  it("fails what was in flight, then subscribes again, re-attaches panes and resyncs everything", async () => {
    const { link, client } = await connected();
    const states: LinkState[] = [];
    const resyncs: (string | null)[] = [];
    await client.onLinkState((s) => states.push(s));
    await client.onResync((k) => resyncs.push(k));
    const attached = client.attach("echo:1", () => {});
    await tick();
    link.reply(link.last("attachTerminal").id, { sessionKey: "echo:1" });
    await attached;
    const inFlight = client.request({ type: "listSessions", workdir: null });
    link.events.down("closed (1006)", true);
    await expect(inFlight).rejects.toMatchObject({ code: "internal", offline: true, message: "The connection to Weft was lost (closed (1006))." });
    expect(states).toEqual([{ state: "disconnected", reason: "closed (1006)", reconnecting: true }]);
    const before = link.sent.length;
    link.events.up({ ...WELCOME, pid: 43 });
    await tick();
    expect(link.sent.slice(before).map((m) => m.type)).toEqual(["subscribeAll", "attachTerminal"]);
    expect(client.welcome?.pid).toBe(43);
    expect(states.at(-1)).toEqual({ state: "connected" });
    expect(resyncs).toEqual([null]);
  });
});
