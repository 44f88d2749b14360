import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/svelte";
import { flushSync, tick } from "svelte";
import { FakeTransport } from "../fake-transport";
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
  return view;
}

describe("Transcript", () => {
  it("scrolls to the turn a search hit asked for, then lets go of it", async () => {
    const view = await sessionWithTurns(200);
    view.focusTaskId = "t150";
    render(Transcript, { view });
    flushSync();
    await tick();
    const list = screen.getByTestId("transcript");
    // Rows above the turn are measured at the estimate in jsdom: 5 rows per turn.
    expect(list.scrollTop).toBeGreaterThan(0);
    expect(view.focusTaskId).toBeNull();
  });

  it("keeps a focus request for a turn it does not have", async () => {
    const view = await sessionWithTurns(3);
    view.focusTaskId = "missing";
    render(Transcript, { view });
    flushSync();
    await tick();
    expect(view.focusTaskId).toBe("missing");
  });
});
