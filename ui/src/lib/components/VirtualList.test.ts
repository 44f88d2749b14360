// jsdom lays nothing out, so virtua never learns the viewport's height: these check
// the list's own contract (attributes, methods, follow events) and that rows are still
// drawn where nothing is laid out. Scrolling with real layout is the WebView e2e's
// (daily.e2e.test.mjs: find in a 10,000-call session, jump to the bottom, the sidebar).
import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import { flushSync, tick } from "svelte";
import Harness from "./VirtualListHarness.test.svelte";

const rows = (n: number) => Array.from({ length: n }, (_, i) => ({ key: `k${i}`, text: `row ${i}` }));
const drawn = () => screen.queryAllByTestId("row").map((r) => r.dataset.key);

describe("VirtualList", () => {
  it("names its scroller as the caller asked: role, label, test id, row count; a log is polite", async () => {
    const { rerender } = render(Harness, { items: rows(5) });
    const list = screen.getByTestId("list");
    expect(list.getAttribute("role")).toBe("log");
    expect(list.getAttribute("aria-label")).toBe("Things");
    expect(list.getAttribute("aria-live")).toBe("polite");
    expect(list.dataset.rows).toBe("5");
    await rerender({ items: rows(5), role: "listbox" });
    expect(list.getAttribute("role")).toBe("listbox");
    expect(list.getAttribute("aria-live")).toBeNull();
  });

  it("draws only the rows near the top of thousands, each in a .vrow keyed by its key", async () => {
    render(Harness, { items: rows(5000), follow: false });
    await waitFor(() => expect(drawn().length).toBeGreaterThan(0));
    // 800 px of viewport and 300 px of overscan at 30 px a row.
    expect(drawn().length).toBeLessThan(60);
    expect(drawn()[0]).toBe("k0");
    const first = screen.getAllByTestId("row")[0].closest(".vrow") as HTMLElement;
    expect(first.dataset.vkey).toBe("k0");
    expect(first.style.visibility).toBe("");
  });

  it("marks the row it is told to", async () => {
    const { rerender } = render(Harness, { items: rows(10), marked: "k3" });
    const list = screen.getByTestId("list");
    await waitFor(() => expect(list.querySelector(".vrow.marked")?.getAttribute("data-vkey")).toBe("k3"));
    await rerender({ items: rows(10), marked: null });
    expect(list.querySelector(".vrow.marked")).toBeNull();
  });

  it("scrolls to a row by key, drawing it, and stops following the bottom", async () => {
    const follows: boolean[] = [];
    const { component } = render(Harness, { items: rows(5000), onfollow: (f: boolean) => follows.push(f) });
    flushSync();
    await tick();
    expect(component.scrollToKey("nope")).toBe(false);
    expect(component.scrollToKey("k3000")).toBe(true);
    const list = screen.getByTestId("list");
    expect(list.scrollTop).toBe(3000 * 30 - 24);
    await waitFor(() => expect(drawn()).toContain("k3000"));
    expect(drawn()).not.toContain("k0");
    expect(follows).toEqual([false]);
    component.scrollToBottom();
    expect(follows).toEqual([false, true]);
  });

  it("reveals a row with the least scrolling, and not at all when it is in view", async () => {
    const { component } = render(Harness, { items: rows(1000), follow: false });
    flushSync();
    await tick();
    const list = screen.getByTestId("list");
    expect(component.revealKey("missing")).toBe(false);
    expect(component.revealKey("k10")).toBe(true);
    expect(list.scrollTop).toBe(0);
    expect(component.revealKey("k999")).toBe(true);
    // Its bottom at the bottom of the (assumed 800 px) viewport.
    expect(list.scrollTop).toBe(1000 * 30 - 800);
    await waitFor(() => expect(drawn()).toContain("k999"));
    expect(component.revealKey("k0")).toBe(true);
    expect(list.scrollTop).toBe(0);
  });

  it("stops following when the user scrolls up, and follows again at the bottom", async () => {
    const follows: boolean[] = [];
    render(Harness, { items: rows(100), onfollow: (f: boolean) => follows.push(f) });
    const list = screen.getByTestId("list");
    // jsdom lays nothing out: give the scroller a height and content below it.
    Object.defineProperty(list, "scrollHeight", { value: 3000, configurable: true });
    Object.defineProperty(list, "clientHeight", { value: 400, configurable: true });
    list.scrollTop = 1000;
    await fireEvent.scroll(list);
    expect(follows).toEqual([]);
    list.scrollTop = 700;
    await fireEvent.scroll(list);
    expect(follows).toEqual([false]);
    list.scrollTop = 2600;
    await fireEvent.scroll(list);
    expect(follows).toEqual([false, true]);
  });

  it("a list that does not follow never reports following", async () => {
    const follows: boolean[] = [];
    render(Harness, { items: rows(100), follow: false, onfollow: (f: boolean) => follows.push(f) });
    const list = screen.getByTestId("list");
    list.scrollTop = 100;
    await fireEvent.scroll(list);
    expect(follows).toEqual([]);
  });
});
