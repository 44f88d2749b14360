import { describe, expect, it } from "vitest";
import { flushSync } from "svelte";
import { FakeTransport } from "./fake-transport";
import { emptySnapshot } from "./patch";
import { SessionView } from "./session-view.svelte";

const tick = () => new Promise((r) => setTimeout(r, 0));

function setup() {
  const t = new FakeTransport();
  const key = t.addSession();
  const view = new SessionView(key, t);
  void t.onPatch((e) => e.sessionKey === key && view.receive(e));
  return { t, key, view };
}

describe("SessionView", () => {
  it("loads the snapshot, then applies patches in seq order", async () => {
    const { t, key, view } = setup();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "hi", textAppend: "He" });
    await view.load();
    expect(view.current.text).toBe("He");
    t.emit(key, { textAppend: "llo" });
    expect(view.current.text).toBe("Hello");
    expect(view.seq).toBe(2);
  });

  it("buffers patches that arrive before the first snapshot", async () => {
    const { t, key, view } = setup();
    const loading = view.load();
    t.emit(key, { phase: "streaming", taskId: "a", textAppend: "x" });
    await loading;
    await tick();
    expect(view.current.text).toBe("x");
    expect(view.seq).toBe(1);
  });

  it("ignores patches it already has and re-reads the snapshot on a gap", async () => {
    const { t, key, view } = setup();
    await view.load();
    const first = t.emit(key, { phase: "streaming", taskId: "a", textAppend: "a" });
    view.receive(first); // a duplicate
    expect(view.current.text).toBe("a");
    t.emit(key, { textAppend: "b" }, 5); // seq jumps 1 -> 5
    await tick();
    await tick();
    expect(view.resyncs).toBe(1);
    expect(view.current.text).toBe("ab");
    expect(view.seq).toBe(5);
    expect(t.calls.filter((c) => c.verb === "getSnapshot").length).toBe(2);
    t.emit(key, { textAppend: "c" });
    expect(view.current.text).toBe("abc");
  });

  it("after a missed patch reads only the turns finished since, not the whole history again", async () => {
    const { t, key, view } = setup();
    for (const id of ["a", "b", "c", "d", "e"]) {
      t.emit(key, { phase: "streaming", taskId: id, prompt: id, textAppend: id });
      t.finish(key);
    }
    await view.load();
    expect(view.history.map((h) => h.taskId)).toEqual(["a", "b", "c", "d"]);
    const kept = view.history[0];
    t.emit(key, { phase: "streaming", taskId: "f", prompt: "f", textAppend: "f" });
    t.finish(key);
    t.emit(key, { phase: "streaming", taskId: "g", prompt: "g", textAppend: "g" }, 40); // a gap
    await tick();
    await tick();
    expect(view.resyncs).toBe(1);
    expect(view.history.map((h) => h.taskId)).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(view.history[0]).toBe(kept); // the turns held are kept, not read again
    const reads = t.calls.filter((c) => c.verb === "getHistory").map((c) => c.args[1]);
    expect(reads).toEqual([null, 4]);
    expect(view.current.taskId).toBe("g");
  });

  it("after a missed patch reads the whole history when the newest turns do not reach the ones held", async () => {
    const { t, key, view } = setup();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "a", textAppend: "a" });
    t.finish(key);
    await view.load();
    t.emit(key, { phase: "streaming", taskId: "b", prompt: "b", textAppend: "b" });
    view.receive = () => {}; // this view misses every patch from here on
    for (const id of ["c", "d", "e", "f", "g"]) {
      t.finish(key);
      t.emit(key, { phase: "streaming", taskId: id, prompt: id, textAppend: id });
    }
    delete (view as { receive?: unknown }).receive;
    t.emit(key, { textAppend: "!" }, 80);
    await tick();
    await tick();
    await tick();
    expect(view.history.map((h) => h.taskId)).toEqual(["a", "b", "c", "d", "e", "f"]);
    expect(t.calls.filter((c) => c.verb === "getHistory").map((c) => c.args[1])).toEqual([null, 4, null]);
  });

  it("applies a merged patch that follows its seq, and re-reads for one it holds part of", async () => {
    const { t, key, view } = setup();
    await view.load();
    t.emit(key, { phase: "streaming", taskId: "a", textAppend: "a" });
    t.emitMerged(key, { textAppend: "bcd" }, 3); // seqs 2..=4
    expect(view.current.text).toBe("abcd");
    expect(view.seq).toBe(4);
    expect(view.resyncs).toBe(0);
    // A view that read the snapshot at 4 gets 4..=6 merged: it cannot split it.
    const late = new SessionView(key, t);
    await late.load();
    t.emit(key, { textAppend: "e" });
    t.emit(key, { textAppend: "f" });
    late.receive({ sessionKey: key, seq: 6, from: 4, patch: { textAppend: "def" } });
    await tick();
    await tick();
    expect(late.resyncs).toBe(1);
    expect(late.current.text).toBe("abcdef");
    expect(late.seq).toBe(6);
  });

  it("moves a finished turn into the history when the next starts", async () => {
    const { t, key, view } = setup();
    await view.load();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "one", textAppend: "1" });
    t.emit(key, { phase: "done" });
    t.emit(key, { phase: "streaming", taskId: "b", prompt: "two", text: "" });
    flushSync();
    expect(view.turns.map((x) => x.prompt)).toEqual(["one", "two"]);
    expect(view.history[0].phase).toBe("done");
    expect(view.running).toBe(true);
  });

  it("does not draw the current turn twice when history already holds it", async () => {
    const { t, key, view } = setup();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "one" });
    t.finish(key);
    await view.load();
    expect(view.turns.map((x) => x.taskId)).toEqual(["a"]);
  });

  it("says why an unanswered interaction went away", async () => {
    const { t, key, view } = setup();
    await view.load();
    const ask = { promptId: "p", kind: "permission" as const, title: "Run it?", detail: null, toolName: "Bash", toolInput: null, questions: [] };
    const ask2 = { ...ask, promptId: "q", title: "And this?" };
    t.emit(key, { phase: "streaming", taskId: "a", interactions: [ask, ask2] });
    view.markAnswered("q");
    t.emit(key, { phase: "done", incomplete: true, interactions: [] });
    expect(view.closedInteractions).toEqual([{ promptId: "p", title: "Run it?", reason: "the turn was stopped" }]);
    view.dismissClosed("p");
    expect(view.closedInteractions).toEqual([]);
  });

  it("offers to show a terminal open elsewhere, to open one when idle, nothing while a structured turn runs", async () => {
    const { t, key, view } = setup();
    await view.load();
    expect(view.terminalOffer).toBe("open");
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "hi" });
    expect(view.running).toBe(true);
    expect(view.terminalOpen).toBe(false);
    expect(view.terminalOffer).toBe("wait");
    t.emit(key, { phase: "done" });
    // Another window (or `weft tui`) opens the agent's terminal: its turn streams.
    t.emit(key, { phase: "streaming", taskId: "b", prompt: "", terminal: true });
    expect(view.terminalOpen).toBe(true);
    expect(view.terminalOffer).toBe("show");
    view.showTerminal();
    expect(view.terminalShown).toBe(true);
    expect(view.terminalOffer).toBeNull();
    // Closed from here: the pane goes; the kernel's patch ends the turn.
    view.terminalClosed();
    expect(view.terminalShown).toBe(false);
    t.emit(key, { phase: "done", terminal: false });
    expect(view.terminalOpen).toBe(false);
    expect(view.terminalOffer).toBe("open");
  });

  it("a terminal open before the window was: the first snapshot says so", async () => {
    const { t, key, view } = setup();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "", terminal: true });
    await view.load();
    expect(view.terminalOpen).toBe(true);
    expect(view.terminalOffer).toBe("show");
  });

  it("a terminal this window opened stays open for it until closed (a new pane re-attaches)", async () => {
    const { t, key, view } = setup();
    await view.load();
    view.showTerminal();
    expect(view.terminalOpen).toBe(false);
    view.terminalStarted();
    expect(view.terminalOpen).toBe(true);
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "", terminal: true });
    expect(view.terminalOffer).toBeNull();
    view.terminalClosed();
    expect(view.terminalOpened).toBe(false);
  });

  it("once the terminal's program exits, the next turns are structured again (its pane still re-attaches)", async () => {
    const { t, key, view } = setup();
    await view.load();
    view.showTerminal();
    view.terminalStarted();
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "", terminal: true });
    t.emit(key, { phase: "done", terminal: false });
    view.terminalEnded();
    // A prompt queued behind the terminal runs now: Stop applies to it.
    t.emit(key, { phase: "streaming", taskId: "b", prompt: "queued" });
    expect(view.terminalOpen).toBe(false);
    expect(view.terminalAttaches).toBe(true);
    expect(view.terminalShown).toBe(true);
  });

  it("shows an adopted session's turns from before Weft first, the newest page, then pages back", async () => {
    const { t, key, view } = setup();
    const past = (n: number) => ({ ...emptySnapshot("claude"), phase: "done" as const, taskId: `p${n}`, prompt: `before ${n}` });
    t.earlier.set(key, Array.from({ length: 60 }, (_, i) => past(i + 1)));
    const mine = { ...emptySnapshot("claude"), phase: "done" as const, taskId: "w1", prompt: "in weft" };
    const s = t.sessions.get(key);
    if (s) s.history = [mine];
    await view.load();
    await tick();
    expect(view.turns.map((x) => x.prompt).slice(0, 2)).toEqual(["before 11", "before 12"]);
    expect(view.turns.at(-1)?.prompt).toBe("in weft");
    expect(view.turns).toHaveLength(51);
    expect(view.earlierBefore).toBe(10);
    await view.loadEarlier();
    expect(view.turns).toHaveLength(61);
    expect(view.turns[0].prompt).toBe("before 1");
    expect(view.earlierBefore).toBe(0);
    // Nothing more to read: no request.
    const asked = t.calls.filter((c) => c.verb === "earlierTurns").length;
    await view.loadEarlier();
    expect(t.calls.filter((c) => c.verb === "earlierTurns")).toHaveLength(asked);
  });

  it("a session with no agent file has no earlier turns and loads as before", async () => {
    const { t, key, view } = setup();
    t.emit(key, { phase: "done", taskId: "a", prompt: "hi", textAppend: "yo" });
    await view.load();
    await tick();
    expect(t.calls.some((c) => c.verb === "earlierTurns")).toBe(true);
    expect(view.earlier).toEqual([]);
    expect(view.loadError).toBeNull();
    expect(view.turns.map((x) => x.prompt)).toEqual(["hi"]);
  });
});
