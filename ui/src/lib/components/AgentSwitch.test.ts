import { describe, expect, it } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { AgentInfo, ClientRequest } from "../../generated";
import { emptySnapshot } from "../patch";
import type { Requester } from "../transport";
import AgentSwitch from "./AgentSwitch.svelte";

const agent = (id: string, installed = true): AgentInfo =>
  ({ id, name: id[0].toUpperCase() + id.slice(1), installed, version: null, capabilities: {}, problem: null }) as unknown as AgentInfo;
const agents = [agent("claude"), agent("codex"), agent("gemini", false)];

describe("AgentSwitch", () => {
  it("shows the agent that runs the turn and offers the other installed agents", async () => {
    const sent: ClientRequest[] = [];
    render(AgentSwitch, {
      sessionKey: "k1",
      current: { ...emptySnapshot("claude"), phase: "done" },
      agents,
      request: (async (r: ClientRequest) => {
        sent.push(r);
        return null;
      }) as Requester,
    });
    expect(screen.getByTestId("session-agent").textContent).toBe("Claude");
    const select = screen.getByTestId("agent-switch-select") as HTMLSelectElement;
    expect([...select.options].map((o) => o.value)).toEqual(["", "codex"]);
    await fireEvent.change(select, { target: { value: "codex" } });
    expect(sent).toEqual([{ type: "switchAgent", sessionKey: "k1", agent: "codex" }]);
  });

  it("names the agent the next turn runs on while a switch is pending", () => {
    render(AgentSwitch, { sessionKey: "k1", current: { ...emptySnapshot("claude"), recordedAgent: "codex" }, agents, request: null });
    expect(screen.getByTestId("session-agent").textContent).toBe("Claude");
    expect(screen.getByTestId("session-next-agent").textContent).toContain("Codex");
  });

  it("lists every agent the session ran on once it has had more than one", () => {
    render(AgentSwitch, { sessionKey: "k1", current: emptySnapshot("codex"), agents, request: null, ranOn: ["claude", "codex"] });
    const name = screen.getByTestId("session-agent");
    expect(name.dataset.ranOn).toBe("claude,codex");
    expect(name.title).toContain("ran on claude, codex");
  });

  it("shows why a switch during a turn was refused", async () => {
    render(AgentSwitch, {
      sessionKey: "k1",
      current: { ...emptySnapshot("claude"), phase: "streaming" },
      agents,
      request: (async () => {
        throw new Error("a turn is running or queued in this session: it can move from claude to codex only between turns");
      }) as Requester,
    });
    const select = screen.getByTestId("agent-switch-select") as HTMLSelectElement;
    expect(select.title).toContain("between turns");
    await fireEvent.change(select, { target: { value: "codex" } });
    expect((await screen.findByTestId("agent-switch-error")).textContent).toContain("only between turns");
  });
});
