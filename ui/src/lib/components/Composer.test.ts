import { describe, expect, it } from "vitest";
import { render, screen, waitFor } from "@testing-library/svelte";
import App from "../../App.svelte";
import { AppStore } from "../app.svelte";
import { FakeTransport } from "../fake-transport";

// xterm.js asks for a 2D canvas once; jsdom has none.
HTMLCanvasElement.prototype.getContext = (() => null) as typeof HTMLCanvasElement.prototype.getContext;

async function started(t: FakeTransport) {
  const app = new AppStore(t);
  render(App, { app });
  await waitFor(() => expect(screen.getByTestId("app").dataset.ready).toBe("true"));
  await app.agentsReady;
  return app;
}

describe("Composer: the agent picker of an open session", () => {
  it("shows the agent the session moved to, and offers that agent's models", async () => {
    const t = new FakeTransport();
    const key = t.addSession("echo");
    const app = await started(t);
    app.selectSession(key);
    const picker = () => screen.getByTestId("agent-picker") as HTMLSelectElement;
    await waitFor(() => expect(picker().value).toBe("echo"));
    await waitFor(() => expect(app.models.map((m) => m.id)).toEqual(["echo-1", "echo-2"]));

    // `switchAgent` as the kernel reports it: the record names the new agent at once.
    t.emit(key, { recordedAgent: "claude" });
    await waitFor(() => expect(picker().value).toBe("claude"));
    await waitFor(() => expect(app.agent).toBe("claude"));
    expect(app.models).toEqual([]);

    // Its first turn ran there: the turn's own agent, nothing pending.
    t.emit(key, { agent: "claude", recordedAgent: null, phase: "done" });
    await waitFor(() => expect(picker().value).toBe("claude"));
    expect(picker().disabled).toBe(true);
  });

  it("shows the old agent again when the new one failed to start", async () => {
    const t = new FakeTransport();
    const key = t.addSession("echo");
    const app = await started(t);
    app.selectSession(key);
    const picker = () => screen.getByTestId("agent-picker") as HTMLSelectElement;
    await waitFor(() => expect(picker().value).toBe("echo"));
    // The failed turn shows the agent that did not start; the record is back on echo.
    t.emit(key, { agent: "claude", recordedAgent: "echo", phase: "done", error: "claude did not start" });
    await waitFor(() => expect(screen.getByTestId("session-next-agent")).toBeTruthy());
    expect(picker().value).toBe("echo");
    expect(app.agent).toBe("echo");
  });
});
