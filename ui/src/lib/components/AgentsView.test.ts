import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { AgentInfo, AgentInstall, ClientRequest } from "../../generated";
import { AgentsStore, sandboxText, versionText } from "../agents.svelte";
import type { TerminalClient } from "../terminal/client";
import type { Requester } from "../transport";
import AgentsView from "./AgentsView.svelte";

const info = (a: Partial<AgentInfo>): AgentInfo => ({
  id: "echo", name: "Echo", installed: true, version: "1", problem: null,
  capabilities: { steer: true, interact: true, resume: true, tui: true },
  facts: { accounts: false, accountKinds: [], packs: [], undo: false, attachments: false, forkAtTurn: false }, ...a,
});
const install = (i: Partial<AgentInstall>): AgentInstall => ({
  name: "claude", agent: "claude", package: "@anthropic-ai/claude-code", testedVersion: "2.1.197", path: null,
  version: null, managed: false, problem: null, installDir: "/w/agents", ...i,
});

describe("AgentsView", () => {
  it("lists every agent with where it was found or looked, its version against the tested one, and installs", async () => {
    const sent: ClientRequest[] = [];
    const request = async (r: ClientRequest): Promise<unknown> => {
      sent.push(r);
      switch (r.type) {
        case "listAgentInfo":
          return [
            info({}),
            info({ id: "claude", name: "Claude Code", version: "2.1.100" }),
            info({ id: "codex", name: "Codex", installed: false, version: null, problem: "the codex CLI: `codex` was not found (looked at $WEFT_CODEX_BIN, …); install it with npm" }),
          ];
        case "listAgentInstalls":
          return [
            install({ path: "/usr/local/bin/claude", version: "2.1.100" }),
            install({ name: "codex", agent: "codex", package: "@openai/codex", testedVersion: "0.171.0", problem: "`codex` was not found (looked at $WEFT_CODEX_BIN, …)" }),
            install({ name: "claude-agent-acp", agent: "claude-acp", package: "@agentclientprotocol/claude-agent-acp", testedVersion: "0.49.0", problem: "not found" }),
          ];
        case "installAgent":
          return { sessionKey: `install:${r.name}` };
        case "listTools":
          if (r.agent === "claude") throw { code: "agentUnavailable", message: "Claude Code lists its tools when a turn starts" };
          return [{ name: "bash", description: "Run a command" }, { name: "mcp__fx__echo", description: "Echo", server: "fx" }];
        case "daemonStatus":
          return { sandbox: { mechanism: "bwrap", details: "/usr/bin/bwrap (bubblewrap 0.8.0): mount, PID and network namespaces" } };
        default:
          throw { code: "badRequest", message: `unexpected ${r.type}` };
      }
    };
    const terminals = { close: async () => {}, attach: async () => {}, detach: async () => {}, write: async () => {}, resize: async () => {} } as unknown as TerminalClient;
    render(AgentsView, { agents: new AgentsStore(request as Requester, terminals), workdir: "/w/proj" });
    await waitFor(() => expect(screen.getAllByTestId("agent-row")).toHaveLength(4));
    const row = (id: string) => document.querySelector(`[data-testid="agent-row"][data-agent="${id}"]`)!;
    expect(row("claude").querySelector('[data-testid="agent-path"]')?.textContent).toContain("/usr/local/bin/claude");
    expect(row("claude").querySelector('[data-testid="agent-version"]')?.textContent).toBe("2.1.100 (Weft is tested with 2.1.197)");
    expect(row("codex").getAttribute("data-found")).toBe("false");
    expect(row("codex").querySelector('[data-testid="agent-problem"]')?.textContent).toContain("looked at");
    // The probe's sentence and the install check's say the same: the fuller one shows, once.
    expect(row("codex").querySelectorAll(".agent-problem")).toHaveLength(1);
    expect(row("codex").querySelector('[data-testid="agent-problem"]')?.textContent).toContain("install it with npm");
    expect(row("claude-acp").textContent).toContain("claude-agent-acp");
    expect(row("echo").querySelector('[data-testid="agent-install"]')).toBeNull();
    await fireEvent.click(row("codex").querySelector('[data-testid="agent-install"]')!);
    expect(sent.find((r) => r.type === "installAgent")).toMatchObject({ name: "codex", version: null });
    await waitFor(() => expect(screen.getByTestId("agent-install-pane").getAttribute("data-name")).toBe("codex"));
    expect(screen.getByTestId("sandbox-status").getAttribute("data-mechanism")).toBe("bwrap");
    expect(screen.getByTestId("sandbox-status").textContent).toContain("bubblewrap sandbox");
    expect(screen.getByTestId("sandbox-details").textContent).toContain("/usr/bin/bwrap");
    expect(screen.queryByTestId("agents-error")).toBeNull();
    // An agent's own tools in the open workspace, or why it cannot list them yet.
    await fireEvent.click(row("echo").querySelector('[data-testid="agent-tools-button"]')!);
    expect(sent.find((r) => r.type === "listTools")).toMatchObject({ agent: "echo", workdir: "/w/proj" });
    await waitFor(() => expect(row("echo").querySelectorAll('[data-testid="agent-tools"] li')).toHaveLength(2));
    expect(row("echo").querySelector('[data-tool="mcp__fx__echo"]')?.textContent).toContain("[fx]");
    await fireEvent.click(row("claude").querySelector('[data-testid="agent-tools-button"]')!);
    await waitFor(() => expect(row("claude").querySelector('[data-testid="agent-tools-problem"]')?.textContent).toContain("when a turn starts"));
    expect(screen.queryByTestId("agents-error")).toBeNull();
  });

  it("says plainly when no sandbox works here, and that commands then ask", () => {
    expect(sandboxText({ mechanism: "unavailable", details: "no sandbox (bubblewrap: not installed)" })).toMatch(/asks before every command/);
    expect(sandboxText({ mechanism: "landlock", details: "" })).toContain("Landlock + seccomp");
    expect(sandboxText(null)).toContain("checking");
  });

  it("says when the found version is the tested one", () => {
    const row = { id: "codex", name: "codex", info: null, install: install({ version: "0.171.0", testedVersion: "0.171.0" }) };
    expect(versionText(row)).toBe("0.171.0 (the tested version)");
  });
});
