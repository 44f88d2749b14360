import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { ClientRequest, McpList, McpServerStatus } from "../../generated";
import type { Requester } from "../transport";
import McpPanel from "./McpPanel.svelte";

const servers: McpServerStatus[] = [
  { name: "rec", status: "connected", error: null },
  { name: "bad", status: "failed", error: "stderr:\nrecord_mcp: refusing to start (--fail)" },
];

const list: McpList = {
  servers: [
    { name: "rec", scope: "global", source: "/h/.weft/mcp.json", command: "python3", args: [], url: null, envNames: [], secrets: [], enabled: true },
  ],
  problems: ["/w/.weft/mcp.json: not a valid mcp.json; skipped"],
};

describe("McpPanel", () => {
  it("counts the servers and shows a failed one with its stderr", async () => {
    render(McpPanel, { servers, sessionKey: "claude:1" });
    const chip = screen.getByTestId("mcp-chip");
    expect(chip.textContent?.trim()).toBe("MCP 1/2 · 1 failed");
    await fireEvent.click(chip);
    const rows = screen.getAllByTestId("mcp-server");
    expect(rows.map((r) => r.getAttribute("data-status"))).toEqual(["connected", "failed"]);
    expect(screen.getByTestId("mcp-error").textContent).toContain("refusing to start (--fail)");
  });

  it("lists the servers configured in Weft and turns one off for the session", async () => {
    const calls: ClientRequest[] = [];
    const request = vi.fn(async (r: ClientRequest) => {
      calls.push(r);
      if (r.type === "setMcpEnabled") return { ...list, servers: [{ ...list.servers[0], enabled: false }] };
      return list;
    });
    render(McpPanel, { servers: [], sessionKey: "claude:1", workdir: "/w", request: request as unknown as Requester });
    await fireEvent.click(screen.getByTestId("mcp-chip"));
    const toggle = (await screen.findByTestId("mcp-toggle-rec")) as HTMLInputElement;
    expect(toggle.checked).toBe(true);
    expect(screen.getByText(/not a valid mcp.json/)).toBeTruthy();
    await fireEvent.click(toggle);
    expect(calls).toContainEqual({ type: "setMcpEnabled", sessionKey: "claude:1", servers: { rec: false } });
    expect(calls[0]).toEqual({ type: "listMcp", workdir: "/w", sessionKey: "claude:1" });
  });
});
