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

describe("Composer: run in parallel", () => {
  it("sends one prompt to each agent picked, each in a worktree of the fan-out, and opens their comparison", async () => {
    localStorage.clear();
    const t = new FakeTransport();
    const app = await started(t);
    app.newSession("/work/demo");
    (await screen.findByTestId("run-parallel-toggle")).click();
    const boxes = await screen.findAllByTestId("parallel-agent");
    expect(boxes.map((b) => (b as HTMLInputElement).value)).toEqual(["echo", "native"]);
    expect((boxes[0] as HTMLInputElement).checked).toBe(true);
    const run = screen.getByTestId("run-parallel") as HTMLButtonElement;
    expect(run.disabled).toBe(true);
    (boxes[1] as HTMLInputElement).click();
    const input = screen.getByTestId("composer-input") as HTMLTextAreaElement;
    input.value = "make the parser faster";
    input.dispatchEvent(new Event("input"));
    await waitFor(() => expect(run.disabled).toBe(false));
    run.click();
    await waitFor(() => expect(app.place).toMatchObject({ view: "review", fanout: expect.stringMatching(/^[0-9a-f]{6}$/) }));
    const group = (app.place as { fanout: string }).fanout;
    const prompts = t.calls.filter((c) => c.verb === "prompt").map((c) => c.args[0] as { agent: string; prompt: string; worktree: { name: string } });
    expect(prompts.map((p) => [p.agent, p.prompt, p.worktree.name])).toEqual([
      ["echo", "make the parser faster", `fan-${group}-1-echo`],
      ["native", "make the parser faster", `fan-${group}-2-native`],
    ]);
    // The comparison lists both runs, each with its branch.
    const runs = await screen.findAllByTestId("fanout-run");
    expect(runs.map((r) => r.dataset.agent)).toEqual(["echo", "native"]);
    expect(runs[0].textContent).toContain(`weft/fan-${group}-1-echo`);
    expect(screen.getByTestId("fanout-compare").dataset.group).toBe(group);
    // Keep one (its merge), archive the other.
    (runs[1].querySelector("[data-testid=fanout-keep]") as HTMLButtonElement).click();
    await waitFor(() => expect(screen.getByTestId("merge-panel").dataset.sessionKey).toBe(runs[1].dataset.sessionKey));
    (runs[0].querySelector("[data-testid=fanout-archive]") as HTMLButtonElement).click();
    await waitFor(() => expect(t.calls.some((c) => c.verb === "manageSession" && c.args[0] === runs[0].dataset.sessionKey)).toBe(true));
  });
});

describe("Composer on a phone", () => {
  it("labels the on-screen keyboard's Enter key Send, as Enter sends", async () => {
    const t = new FakeTransport();
    const key = t.addSession("echo");
    const app = await started(t);
    app.selectSession(key);
    const input = await screen.findByTestId("composer-input");
    expect(input.getAttribute("enterkeyhint")).toBe("send");
  });
});
