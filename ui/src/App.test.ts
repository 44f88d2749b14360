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

describe("App: an untrusted workspace", () => {
  it("asks when the workspace opens; Not now leaves it Restricted, and the indicator asks again", async () => {
    const t = new FakeTransport();
    t.grantsOf("/work/demo", [{ file: ".weft/mcp.json", kind: "mcpServer", detail: "x: npx x-mcp" }]);
    const app = await started(t, terminals().client);
    const dialog = await screen.findByTestId("trust-dialog");
    expect(dialog.dataset.workdir).toBe("/work/demo");
    await fireEvent.click(screen.getByTestId("trust-decline"));
    const indicator = await screen.findByTestId("workspace-restricted");
    expect(screen.queryByTestId("trust-dialog")).toBeNull();
    expect(t.trust.get("/work/demo")?.declined).toBe(true);
    await fireEvent.click(indicator);
    await fireEvent.click(await screen.findByTestId("trust-accept"));
    await waitFor(() => expect(screen.queryByTestId("workspace-restricted")).toBeNull());
    expect(app.trust.restricted("/work/demo")).toBe(false);
  });
});

describe("App: the trust dialog over a waiting permission", () => {
  it("takes Esc itself: the folder is declined, the permission still waits, the turn runs on", async () => {
    const t = new FakeTransport();
    t.grantsOf("/work/demo", [{ file: ".weft/hooks.json", kind: "hook", detail: "Stop: runs `x`" }]);
    const key = t.addSession();
    t.emit(key, {
      phase: "streaming",
      taskId: "a",
      prompt: "p",
      interactions: [
        {
          promptId: "p1",
          kind: "permission",
          title: "Allow Bash?",
          detail: null,
          toolName: "Bash",
          toolInput: { command: "ls" },
          questions: [{ id: "d", text: "Allow?", type: "select", choices: [{ label: "Allow once", value: "allow" }, { label: "Deny", value: "deny" }] }],
        },
      ],
    });
    const app = await started(t, terminals().client);
    app.selectSession(key);
    await screen.findByTestId("interaction-dialog");
    await screen.findByTestId("trust-dialog");
    await fireEvent.keyDown(window, { key: "Escape" });
    await waitFor(() => expect(screen.queryByTestId("trust-dialog")).toBeNull());
    expect(t.calls.filter((c) => c.verb === "declineWorkspaceTrust")).toHaveLength(1);
    expect(t.calls.filter((c) => c.verb === "interact" || c.verb === "stop")).toEqual([]);
    expect(screen.getByTestId("interaction-dialog")).toBeTruthy();
  });
});
