import { describe, expect, it } from "vitest";
import { fireEvent, render, screen, waitFor } from "@testing-library/svelte";
import type { AgentSetupImport, ClientRequest } from "../../generated";
import { AppStore } from "../app.svelte";
import type { Transport } from "../transport";
import Welcome from "./Welcome.svelte";

const report = (dryRun: boolean): AgentSetupImport => ({
  dryRun,
  mcpFile: "/h/.weft/mcp.json",
  servers: [
    { name: "github", agent: "claude", source: "/h/.claude.json", command: "gh-mcp", args: [], url: null, envNames: ["GITHUB_TOKEN"], secrets: ["github-GITHUB_TOKEN"], outcome: "added", note: null },
    { name: "fs", agent: "codex", source: "/h/.codex/config.toml", command: "fs-mcp", args: [], url: null, envNames: [], secrets: [], outcome: "exists", note: null },
  ],
  skills: [{ name: "review", agent: "claude", source: "/h/.claude/skills/review", description: "", outcome: "added", note: null }],
  problems: [],
});

describe("Welcome", () => {
  it("finds what the agents already have set up, brings it in on request, and says which secrets to set", async () => {
    const sent: ClientRequest[] = [];
    const transport = {
      request: async (r: ClientRequest) => {
        sent.push(r);
        if (r.type === "importAgentSetup") return report(r.dryRun);
        throw { code: "badRequest", message: r.type };
      },
    } as unknown as Transport;
    const app = new AppStore(transport);
    render(Welcome, { app, onsettings: () => {} });
    const step = await screen.findByTestId("welcome-import");
    await waitFor(() => expect(step.textContent).toContain("1 MCP server (github)"));
    expect(step.textContent).toContain("1 skill (review)");
    expect(sent.filter((r) => r.type === "importAgentSetup").map((r) => (r as { dryRun: boolean }).dryRun)).toEqual([true]);
    await fireEvent.click(screen.getByTestId("welcome-import-run"));
    await waitFor(() => expect(screen.getByTestId("welcome-imported").textContent).toContain("github, review"));
    expect(sent.filter((r) => r.type === "importAgentSetup").map((r) => (r as { dryRun: boolean }).dryRun)).toEqual([true, false]);
    expect(step.textContent).toContain("github needs github-GITHUB_TOKEN");
  });
});
