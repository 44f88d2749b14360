import { describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { ClientRequest, SkillInfo } from "../../generated";
import type { Requester } from "../transport";
import SkillsPanel from "./SkillsPanel.svelte";

describe("SkillsPanel", () => {
  it("lists skills with description, source and conflicts, and turns one off", async () => {
    let skills: SkillInfo[] = [
      { name: "tidy", description: "Tidy the repo", path: "/h/.weft/skills/tidy", source: "global", enabled: true, conflicts: [] },
      { name: "mine", description: "Weft's", path: "/w/.weft/skills/mine", source: "workspace", enabled: true, conflicts: ["/h/.claude/skills/mine"] },
    ];
    const calls: ClientRequest[] = [];
    const request = vi.fn(async (r: ClientRequest) => {
      calls.push(r);
      if (r.type === "setSkillEnabled") {
        skills = skills.map((s) => (s.name === r.name ? { ...s, enabled: r.enabled } : s));
        return null;
      }
      return skills;
    });
    render(SkillsPanel, { workdir: "/w", request: request as unknown as Requester });
    await fireEvent.click(screen.getByTestId("skills-chip"));
    expect((await screen.findAllByTestId("skill")).length).toBe(2);
    expect(screen.getByText("Tidy the repo")).toBeTruthy();
    expect(screen.getByTestId("skill-conflict").textContent).toContain("/h/.claude/skills/mine");
    await fireEvent.click(screen.getByTestId("skill-toggle-tidy"));
    expect(calls).toContainEqual({ type: "setSkillEnabled", name: "tidy", enabled: false });
    expect(((await screen.findByTestId("skill-toggle-tidy")) as HTMLInputElement).checked).toBe(false);
  });
});
