import { describe, expect, it } from "vitest";
import type { Tick, TooltipItem } from "chart.js";
import type { UsageRow } from "../generated";
import { hasSeries, stepOf, usageChartConfig } from "./usage-chart";

const row = (key: string, u: Partial<UsageRow> = {}): UsageRow => ({
  key, calls: 1, inputTokens: 0, outputTokens: 0, cacheReadTokens: 0, cacheWriteTokens: 0, costUsd: null,
  unpricedModels: [], costByModel: [], cacheHitRate: null, ...u,
});
const colours = { text: "#111", grid: "#ddd", series: ["#a00", "#0a0"] };
const ticks = (...values: number[]): Tick[] => values.map((value) => ({ value }));

// Chart.js calls the tick callback with the scale as `this`; ours does not use it.
type TickCallback = (value: number, index: number, ticks: Tick[]) => string;
type TooltipCallback = (items: TooltipItem<"bar">[]) => string;
const item = (dataIndex: number, label: string, y: number) => ({ dataIndex, dataset: { label }, parsed: { y } }) as unknown as TooltipItem<"bar">;

describe("usageChartConfig", () => {
  const rows = [
    row("2025-01-14", { costUsd: 0.00007, costByModel: [{ model: "haiku", costUsd: 0.00007 }], inputTokens: 1200, outputTokens: 300 }),
    row("2025-01-15", { costUsd: 2.5, costByModel: [{ model: "opus", costUsd: 2.4 }, { model: "haiku", costUsd: 0.1 }], inputTokens: 1_250_000, cacheReadTokens: 90_000 }),
  ];

  it("writes the cost axis as money, tiny amounts included (not 7.00000E-5)", () => {
    const config = usageChartConfig(rows, "cost", colours);
    const callback = config.options?.scales?.y?.ticks?.callback as unknown as TickCallback;
    const axis = ticks(0, 0.00002, 0.00004, 0.00006, 0.00008);
    expect(axis.map((t, i) => callback(t.value, i, axis))).toEqual(["$0", "$0.00002", "$0.00004", "$0.00006", "$0.00008"]);
    const dollars = ticks(0, 0.5, 1, 1.5);
    expect(dollars.map((t, i) => callback(t.value, i, dollars))).toEqual(["$0", "$0.50", "$1.00", "$1.50"]);
  });

  it("writes the token axis with k/M", () => {
    const config = usageChartConfig(rows, "tokens", colours);
    const callback = config.options?.scales?.y?.ticks?.callback as unknown as TickCallback;
    const axis = ticks(0, 250_000, 500_000, 750_000, 1_000_000, 1_250_000);
    expect(axis.map((t, i) => callback(t.value, i, axis))).toEqual(["0", "0.25M", "0.5M", "0.75M", "1M", "1.25M"]);
  });

  it("labels days as dates, stacks one dataset per model in theme colours", () => {
    const config = usageChartConfig(rows, "cost", colours);
    expect(config.data.labels).toEqual(["Jan 14", "Jan 15"]);
    expect(config.data.datasets.map((d) => [d.label, d.data, d.backgroundColor])).toEqual([
      ["haiku", [0.00007, 0.1], "#a00"],
      ["opus", [0, 2.4], "#0a0"],
    ]);
    expect(config.options?.scales?.y?.ticks?.color).toBe("#111");
    expect(config.options?.plugins?.legend?.labels?.color).toBe("#111");
  });

  it("formats tooltips the way the axis does, with the day's total", () => {
    const tooltip = usageChartConfig(rows, "cost", colours).options?.plugins?.tooltip;
    const callbacks = tooltip?.callbacks as unknown as { title: TooltipCallback; label: (i: TooltipItem<"bar">) => string; footer: TooltipCallback };
    expect(callbacks.title([item(1, "opus", 2.4)])).toBe("Wed, Jan 15, 2025");
    expect(callbacks.label(item(0, "haiku", 0.00007))).toBe("haiku: $0.00007");
    expect(callbacks.footer([item(1, "opus", 2.4)])).toBe("Total: $2.50");
    const filter = tooltip?.filter as unknown as (i: TooltipItem<"bar">) => boolean;
    expect(filter(item(0, "opus", 0))).toBe(false);
    const tokens = usageChartConfig(rows, "tokens", colours).options?.plugins?.tooltip?.callbacks as unknown as { label: (i: TooltipItem<"bar">) => string };
    expect(tokens.label(item(1, "Input", 1_250_000))).toBe("Input: 1.3M");
  });

  it("draws tokens by kind, leaving out kinds never used", () => {
    const config = usageChartConfig(rows, "tokens", colours);
    expect(config.data.datasets.map((d) => d.label)).toEqual(["Input", "Output", "Cache read"]);
  });

  it("has nothing to draw for cost when no model has a price", () => {
    const unpriced = [row("2025-01-14", { unpricedModels: ["local"], inputTokens: 10 })];
    expect(hasSeries(unpriced, "cost")).toBe(false);
    expect(hasSeries(unpriced, "tokens")).toBe(true);
    expect(stepOf(ticks(5))).toBe(0);
  });
});
