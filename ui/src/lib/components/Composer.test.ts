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

describe("Composer: a new session in a worktree", () => {
  it("offers a new worktree for a new session, sends it, keeps the choice for the workspace, and offers none inside a worktree", async () => {
    localStorage.clear();
    const t = new FakeTransport();
    const app = await started(t);
    app.newSession("/work/demo");
    const box = () => screen.queryByTestId("new-in-worktree") as HTMLInputElement | null;
    await waitFor(() => expect(box()).not.toBeNull());
    expect(box()?.checked).toBe(false);
    box()?.click();
    expect(app.newInWorktree).toBe(true);
    expect(await app.send("two agents, one repository")).toBe(true);
    expect(t.calls.find((c) => c.verb === "prompt")?.args[0]).toMatchObject({ worktree: { name: "auto" } });
    // An open session has its folder: nothing to offer.
    await waitFor(() => expect(box()).toBeNull());
    app.newSession("/work/demo");
    await waitFor(() => expect(box()?.checked).toBe(true));
    // A new session inside the worktree runs there; it is no repository to branch from.
    await app.worktrees.refresh(app.sessions, true);
    app.newSession(t.worktrees[0].path);
    await waitFor(() => expect(screen.getByTestId("composer").textContent).toContain(`new session in ${t.worktrees[0].path}`));
    expect(box()).toBeNull();
  });
});
