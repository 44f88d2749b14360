import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { fireEvent, render, screen } from "@testing-library/svelte";
import type { UsageRow } from "../../generated";
import UsageBlocks from "./UsageBlocks.svelte";
import UsageChart from "./UsageChart.svelte";

const row = (key: string, u: Partial<UsageRow> = {}): UsageRow => ({
  key, calls: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null,
  unpricedModels: [], costByModel: [], cacheHitRate: null, ...u,
});

// jsdom has no canvas: the chart is not drawn, the rest of the component is.
let getContext: typeof HTMLCanvasElement.prototype.getContext;
beforeEach(() => {
  getContext = HTMLCanvasElement.prototype.getContext;
  HTMLCanvasElement.prototype.getContext = vi.fn(() => null) as unknown as typeof getContext;
});
afterEach(() => {
  HTMLCanvasElement.prototype.getContext = getContext;
});

describe("UsageChart", () => {
  it("says what would be drawn and how to get it when there is no usage", () => {
    render(UsageChart, { rows: [] });
    expect(screen.getByTestId("usage-chart-empty").textContent).toMatch(/No usage yet — .* after an agent's first turn/);
    expect(screen.getByTestId("usage-chart").dataset.drawn).toBe("false");
  });

  it("shows tokens when no model has a price, says why, and lists the unpriced models", () => {
    render(UsageChart, { rows: [row("2025-01-14", { unpricedModels: ["local-model"], inputTokens: 50 })] });
    expect(screen.getByTestId("usage-chart-no-cost").textContent).toContain("none of these models has a known price");
    expect(screen.getByTestId("usage-unpriced").textContent).toContain("local-model");
    expect(screen.queryByTestId("usage-chart-empty")).toBeNull();
    expect(screen.getByRole("img", { name: "Tokens by kind" })).toBeTruthy();
    expect(screen.getByTestId("usage-chart").dataset.mode).toBe("tokens");
    expect(screen.getByTestId("usage-chart-mode-tokens").getAttribute("aria-pressed")).toBe("true");
    expect((screen.getByTestId("usage-chart-mode-cost") as HTMLButtonElement).disabled).toBe(true);
  });

  it("switches between cost by model and tokens by kind", async () => {
    render(UsageChart, { rows: [row("2025-01-14", { costUsd: 0.01, costByModel: [{ model: "opus", costUsd: 0.01 }], inputTokens: 50 })] });
    expect(screen.getByRole("img", { name: "Cost by model" })).toBeTruthy();
    await fireEvent.click(screen.getByTestId("usage-chart-mode-tokens"));
    expect(screen.getByRole("img", { name: "Tokens by kind" })).toBeTruthy();
    expect(screen.getByTestId("usage-chart-mode-cost").getAttribute("aria-pressed")).toBe("false");
  });
});

describe("UsageBlocks", () => {
  it("says when blocks appear when there are none", () => {
    render(UsageBlocks, { rows: [] });
    expect(screen.getByTestId("usage-block-none").textContent).toContain("Claude's next call starts one");
    expect(screen.getByTestId("usage-blocks-empty").textContent).toContain("appear after a Claude turn");
  });

  it("writes a small block's cost as money, not $0.00", () => {
    const start = Date.UTC(2025, 0, 15, 10);
    const block = { start, end: start + 5 * 3_600_000, firstAt: start, lastAt: start + 60_000, active: false, tokensPerMinute: 12.4, costPerHour: 0.0003, projectedTokens: null, projectedCostUsd: null };
    render(UsageBlocks, { rows: [row("b", { costUsd: 0.00007, inputTokens: 12_000, block })], now: start + 3_600_000 });
    const cells = [...screen.getByTestId("usage-block-row").querySelectorAll("td")].map((td) => td.textContent);
    expect(cells).toEqual(["2025-01-15 10:00", "1", "12k", "$0.00007", "12"]);
  });
});
