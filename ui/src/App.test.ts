import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import App from "./App.svelte";
import { AppStore } from "./lib/app.svelte";
import { FakeTransport } from "./lib/fake-transport";
import type { FrameHandler, TerminalClient } from "./lib/terminal/client";

// xterm.js asks for a 2D canvas once (colour parsing, guarded); jsdom has none and
// would log that it is not implemented.
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;

/** A terminal client that records its calls; an attach gets the screen frame at once. */
function terminals(screenText = "echo> ") {
  const calls: string[] = [];
  const client: TerminalClient = {
    open: async (args) => {
      calls.push(`open ${args.sessionKey}`);
      return { sessionKey: args.sessionKey ?? "echo:new" };
    },
    attach: async (key: string, onFrame: FrameHandler) => {
      calls.push(`attach ${key}`);
      onFrame({ kind: "screen", offset: 0, data: new TextEncoder().encode(screenText) });
    },
    detach: async (key) => void calls.push(`detach ${key}`),
    write: async (key, data) => void calls.push(`write ${key} ${data}`),
    resize: async (key, cols, rows) => void calls.push(`resize ${key} ${cols}x${rows}`),
    close: async (key) => void calls.push(`close ${key}`),
  };
  return { client, calls };
}

async function started(transport: FakeTransport, client: TerminalClient) {
  const app = new AppStore(transport, client);
  render(App, { app });
  await waitFor(() => expect(screen.getByTestId("app").dataset.ready).toBe("true"));
  return app;
}

describe("App: a session whose terminal is open elsewhere", () => {
  it("offers to show it, attaches the pane to it (no second open) at the pane's size, and closing ends it", async () => {
    const t = new FakeTransport();
    const key = t.addSession();
    // Opened by another window, by `weft tui`, or before this window was.
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "", terminal: true });
    const { client, calls } = terminals();
    const app = await started(t, client);
    app.selectSession(key);
    const show = await screen.findByTestId("terminal-attach");
    expect(show.getAttribute("aria-label")).toBe("Show the agent's terminal");
    expect(screen.getByTestId("terminal-elsewhere").textContent).toMatch(/prompts wait until it closes/);
    expect(screen.queryByTestId("terminal-open")).toBeNull();
    // Its turn ends by closing the terminal, not by Stop.
    expect(screen.queryByTestId("stop")).toBeNull();

    await fireEvent.click(show);
    await screen.findByTestId("terminal-pane");
    await waitFor(() => expect(calls).toContain(`attach ${key}`));
    expect(calls.some((c) => c.startsWith("open"))).toBe(false);
    await waitFor(() => expect(calls.some((c) => c.startsWith(`resize ${key} `))).toBe(true));
    const pane = screen.getByTestId("terminal-pane") as HTMLElement & { bufferText(): string };
    await waitFor(() => expect(pane.bufferText()).toContain("echo>"));
    expect(screen.queryByTestId("terminal-attach")).toBeNull();
    expect(screen.queryByTestId("terminal-elsewhere")).toBeNull();

    await fireEvent.click(screen.getByTestId("terminal-close"));
    await waitFor(() => expect(calls).toContain(`close ${key}`));
    expect(screen.queryByTestId("terminal-pane")).toBeNull();
    t.emit(key, { phase: "done", terminal: false });
    const open = await screen.findByTestId("terminal-open");
    expect((open as HTMLButtonElement).disabled).toBe(false);
  });

  it("opens a terminal in an idle session, and offers none while a structured turn runs", async () => {
    const t = new FakeTransport();
    const key = t.addSession();
    const { client, calls } = terminals();
    const app = await started(t, client);
    app.selectSession(key);
    const open = await screen.findByTestId("terminal-open");
    t.emit(key, { phase: "streaming", taskId: "a", prompt: "hi" });
    await waitFor(() => expect((open as HTMLButtonElement).disabled).toBe(true));
    t.emit(key, { phase: "done" });
    await waitFor(() => expect((open as HTMLButtonElement).disabled).toBe(false));
    await fireEvent.click(open);
    await screen.findByTestId("terminal-pane");
    await waitFor(() => expect(calls).toContain(`open ${key}`));
    expect(calls.some((c) => c.startsWith("attach"))).toBe(false);
  });
});
