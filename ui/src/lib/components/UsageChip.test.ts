import { describe, expect, it } from "vitest";
import { render, screen } from "@testing-library/svelte";
import type { Usage } from "../../generated";
import UsageChip from "./UsageChip.svelte";

const usage = (u: Partial<Usage>): Usage =>
  ({
    inputTokens: null, outputTokens: null, cachedInputTokens: null, costUsd: null, contextPercent: null,
    contextUsedTokens: null, contextWindowTokens: null, providerName: null, ...u,
  }) as Usage;

describe("UsageChip", () => {
  it("says context and tokens in a few characters; the details sit behind it", () => {
    render(UsageChip, { usage: usage({ inputTokens: 150_000, outputTokens: 40_000, contextPercent: 75, costUsd: 0.4321 }) });
    expect(screen.getByTestId("usage-chip-button").textContent?.trim()).toBe("75% context · 190k tokens · $0.43");
    expect(screen.getByTestId("usage-details").textContent).toContain("in 150k");
    expect(screen.getByTestId("usage-details").getAttribute("role")).toBe("tooltip");
  });

  it("shows what there is", () => {
    render(UsageChip, { usage: usage({ inputTokens: 1_200_000 }) });
    expect(screen.getByTestId("usage-chip-button").textContent?.trim()).toBe("1.2M tokens");
  });
});
