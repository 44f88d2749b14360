import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { flushSync, tick } from "svelte";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";
import { emptySnapshot } from "../patch";
import { SessionView } from "../session-view.svelte";
import Transcript from "./Transcript.svelte";

async function sessionWithTurns(n: number) {
  const t = new FakeTransport();
  const key = t.addSession("echo", "/work/demo", "long");
  for (let i = 0; i < n; i++) {
    t.emit(key, { taskId: `t${i}`, phase: "streaming", prompt: `prompt ${i}`, text: "" });
    t.emit(key, { text: `reply ${i}` });
    t.finish(key);
  }
  const view = new SessionView(key, t);
  await view.load();
  return { view, t, key, app: new AppStore(t) };
}

describe("Transcript", () => {
  it("draws an adopted session's earlier turns first, marked, with a way to the ones before", async () => {
    const t = new FakeTransport();
    const key = t.addSession("claude", "/work/demo", "adopted");
    t.earlier.set(
      key,
      Array.from({ length: 55 }, (_, i) => ({ ...emptySnapshot("claude"), phase: "done" as const, taskId: `n${i}`, prompt: `native ${i}` })),
    );
    t.emit(key, { taskId: "w", phase: "streaming", prompt: "in weft", text: "" });
    t.finish(key);
    const view = new SessionView(key, t);
    await view.load();
    await waitFor(() => expect(view.earlier).toHaveLength(50));
    render(Transcript, { view, app: new AppStore(t) });
    flushSync();
    await tick();
    const more = await screen.findByTestId("earlier-more");
    expect(more.textContent).toContain("5 earlier turns");
    const marked = screen.getAllByTestId("turn-earlier");
    expect(marked.length).toBeGreaterThan(0);
    expect(marked[0].textContent).toBe("claude's own");
    await fireEvent.click(more);
    await waitFor(() => expect(view.turns[0].prompt).toBe("native 0"));
    expect(view.turns.at(-1)?.prompt).toBe("in weft");
    await waitFor(() => expect(screen.queryByTestId("earlier-more")).toBeNull());
  });

  it("scrolls to the turn a search hit asked for, then lets go of it", async () => {
    const { view, app } = await sessionWithTurns(200);
    view.focusTaskId = "t150";
    render(Transcript, { view, app });
    flushSync();
    await tick();
    const list = screen.getByTestId("transcript");
    // Rows above the turn are measured at the estimate in jsdom: 5 rows per turn.
    expect(list.scrollTop).toBeGreaterThan(0);
    expect(view.focusTaskId).toBeNull();
  });

  it("keeps a focus request for a turn it does not have", async () => {
    const { view, app } = await sessionWithTurns(3);
    view.focusTaskId = "missing";
    render(Transcript, { view, app });
    flushSync();
    await tick();
    expect(view.focusTaskId).toBe("missing");
  });

  it("cancels and reorders queued prompts through the kernel's verbs", async () => {
    const { view, app, t, key } = await sessionWithTurns(1);
    // The view hears the session's patches (the app forwards them).
    t.onPatch((e) => view.receive(e));
    t.emit(key, { taskId: "run", phase: "streaming", prompt: "long one", text: "" });
    t.emit(key, { queued: [
      { taskId: "q1", prompt: "first", steer: false },
      { taskId: "q2", prompt: "second", steer: false },
      { taskId: "q3", prompt: "third", steer: false },
    ] });
    render(Transcript, { view, app });
    const queued = () => screen.getAllByTestId("queued-prompt").map((e) => e.textContent);
    await waitFor(() => expect(queued()).toEqual(["first", "second", "third"]));
    const ups = screen.getAllByTestId("queued-up") as HTMLButtonElement[];
    expect(ups[0].disabled).toBe(true);
    await fireEvent.click(ups[2]);
    expect(t.calls.at(-1)).toMatchObject({ verb: "requeue", args: [key, "q3", 2] });
    await waitFor(() => expect(queued()).toEqual(["first", "third", "second"]));
    await fireEvent.click(screen.getAllByTestId("queued-down")[0]);
    expect(t.calls.at(-1)).toMatchObject({ verb: "requeue", args: [key, "q1", 2] });
    await waitFor(() => expect(queued()).toEqual(["third", "first", "second"]));
    await fireEvent.click(screen.getAllByTestId("queued-remove")[1]);
    expect(t.calls.at(-1)).toMatchObject({ verb: "dequeue", args: [key, "q1"] });
    await waitFor(() => expect(queued()).toEqual(["third", "second"]));
  });

  it("edits a past prompt into the composer, and retries a failed or stopped turn as a new turn", async () => {
    const { view, app, t, key } = await sessionWithTurns(2);
    t.onPatch((e) => view.receive(e));
    t.emit(key, { taskId: "bad", phase: "streaming", prompt: "try this", text: "half", model: "echo-1", effort: "high" });
    t.emit(key, { phase: "done", error: "it broke" });
    render(Transcript, { view, app });
    await waitFor(() => expect(screen.getAllByTestId("turn-retry")).toHaveLength(1));
    await fireEvent.click(screen.getAllByTestId("turn-edit")[0]);
    expect(app.editRequest?.text).toBe("prompt 0");
    await fireEvent.click(screen.getByTestId("turn-retry"));
    const sent = t.calls.filter((c) => c.verb === "prompt").at(-1);
    expect(sent?.args[0]).toMatchObject({ prompt: "try this", sessionKey: key, model: "echo-1", effort: "high", agent: null });
  });

  it("copies a finished reply", async () => {
    const { view, app } = await sessionWithTurns(1);
    const written: string[] = [];
    Object.defineProperty(navigator, "clipboard", { value: { writeText: async (s: string) => void written.push(s) }, configurable: true });
    render(Transcript, { view, app });
    await fireEvent.click(await screen.findByTestId("copy-reply"));
    expect(written).toEqual(["reply 0"]);
    await waitFor(() => expect(screen.getByTestId("copy-reply").dataset.copied).toBe("true"));
  });

  it("finds a word anywhere in the session (Ctrl+F), counts the hits and marks the current one", async () => {
    const { view, app } = await sessionWithTurns(300);
    const { component } = render(Transcript, { view, app });
    flushSync();
    component.openFind();
    const input = (await screen.findByTestId("find-input")) as HTMLInputElement;
    await fireEvent.input(input, { target: { value: "reply 7" } });
    // reply 7, 70–79, 700+ do not exist: 11 rows.
    await waitFor(() => expect(screen.getByTestId("find-count").textContent).toBe("1 of 11"));
    const list = screen.getByTestId("transcript");
    await waitFor(() => expect(list.querySelector(".vrow.marked")?.getAttribute("data-vkey")).toBe("t7:text"));
    await fireEvent.keyDown(input, { key: "Enter", shiftKey: true });
    expect(screen.getByTestId("find-count").textContent).toBe("11 of 11");
    await waitFor(() => expect(list.querySelector(".vrow.marked")?.getAttribute("data-vkey")).toBe("t79:text"));
    await fireEvent.input(input, { target: { value: "nothing like it" } });
    expect(screen.getByTestId("find-count").textContent).toBe("no match");
    await fireEvent.keyDown(input, { key: "Escape" });
    expect(screen.queryByTestId("find-bar")).toBeNull();
  });

  it("opens links outside the window: web links in the browser, files in the editor, other schemes not at all (kept as text)", async () => {
    const t = new FakeTransport();
    const key = t.addSession("echo", "/work/demo", "links");
    t.emit(key, { taskId: "l1", phase: "streaming", prompt: "links", text: "" });
    t.emit(key, { text: "See [the docs](https://example.com/docs), [main](src/main.rs) and [call](tel:123)." });
    t.finish(key);
    const view = new SessionView(key, t);
    await view.load();
    const app = new AppStore(t);
    await app.refreshSessions();
    render(Transcript, { view, app });
    const docs = await screen.findByRole("link", { name: "the docs" });
    await fireEvent.click(docs);
    expect(t.calls.at(-1)).toMatchObject({ verb: "openUrl", args: ["https://example.com/docs"] });
    await fireEvent.click(screen.getByRole("link", { name: "main" }));
    await waitFor(() => expect(t.calls.at(-1)).toMatchObject({ verb: "openPath", args: ["src/main.rs", "/work/demo", false] }));
    // Another scheme keeps its text but loses its address (the sanitizer): nothing to follow.
    const before = t.calls.length;
    expect(screen.queryByRole("link", { name: "call" })).toBeNull();
    await fireEvent.click(screen.getByText("call"));
    expect(t.calls.length).toBe(before);
  });

  it("names the agent that answered each turn (a session that changed agent shows both)", async () => {
    const t = new FakeTransport();
    const key = t.addSession("claude", "/work/demo", "moved");
    t.emit(key, { taskId: "a", phase: "streaming", prompt: "first", agent: "claude", text: "" });
    t.emit(key, { text: "from claude" });
    t.finish(key);
    t.emit(key, { taskId: "b", phase: "streaming", prompt: "second", agent: "codex", text: "" });
    t.emit(key, { text: "from codex" });
    t.finish(key);
    const view = new SessionView(key, t);
    await view.load();
    render(Transcript, { view, app: new AppStore(t) });
    flushSync();
    await tick();
    expect(screen.getAllByTestId("turn-agent").map((e) => e.textContent)).toEqual(["claude", "codex"]);
  });
});

describe("Transcript of a host's session", () => {
  it("offers to copy a tool call's file to this machine through the shell's save dialog, and not for a local session", async () => {
    const t = new FakeTransport();
    const call = { id: "c1", name: "Write", summary: "Write report.md", input: { file_path: "report.md" }, result: "ok", status: "done", kind: "edit", parentId: null };
    const key = t.addSession("echo", "gpu:/srv/proj", "remote");
    t.emit(key, { taskId: "r1", phase: "streaming", prompt: "write it", text: "", toolCalls: [call] } as never);
    t.finish(key);
    const view = new SessionView(key, t);
    await view.load();
    const app = new AppStore(t);
    await app.refreshSessions();
    const { unmount } = render(Transcript, { view, app });
    await fireEvent.click(await screen.findByTestId("tool-row-toggle"));
    await fireEvent.click(screen.getByTestId("tool-save-file"));
    await waitFor(() => expect(t.calls.at(-1)).toMatchObject({ verb: "saveRemoteFile", args: ["report.md", "gpu:/srv/proj"] }));
    unmount();

    const localKey = t.addSession("echo", "/work/demo", "local");
    t.emit(localKey, { taskId: "l1", phase: "streaming", prompt: "write it", text: "", toolCalls: [call] } as never);
    t.finish(localKey);
    const local = new SessionView(localKey, t);
    await local.load();
    await app.refreshSessions();
    render(Transcript, { view: local, app });
    await fireEvent.click(await screen.findByTestId("tool-row-toggle"));
    expect(screen.getByTestId("tool-open-file")).toBeTruthy();
    expect(screen.queryByTestId("tool-save-file")).toBeNull();
  });
});
