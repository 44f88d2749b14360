// The usage chart's Chart.js configuration, apart from the component so its axes and
// tooltips can be checked without a canvas (jsdom has none). Two views of the same
// rows: cost stacked by model (cost, not tokens: a cheap model's tokens dwarf an
// expensive one's spend) and tokens stacked by kind.

import type { ChartConfiguration, Tick, TooltipItem } from "chart.js";
import type { UsageRow } from "../generated";
import { groupLabel, groupTitle, tokens, tokensTick, usd, usdTick } from "./format";

export type UsageChartMode = "cost" | "tokens";

/** Colours read from the theme's custom properties (see UsageChart.svelte). */
export interface UsageChartColours {
  /** Tick labels and the legend. */
  text: string;
  /** Grid lines and the axes' borders. */
  grid: string;
  /** One per dataset, cycled. */
  series: string[];
}

interface Series {
  label: string;
  data: number[];
}

/** The models with a cost in `rows`, sorted (a stable colour per model across days). */
export function pricedModels(rows: UsageRow[]): string[] {
  return [...new Set(rows.flatMap((r) => r.costByModel.map((c) => c.model)))].sort();
}

function series(rows: UsageRow[], mode: UsageChartMode): Series[] {
  if (mode === "cost") {
    return pricedModels(rows).map((m) => ({
      label: m,
      data: rows.map((r) => r.costByModel.find((c) => c.model === m)?.costUsd ?? 0),
    }));
  }
  const kinds: [string, (r: UsageRow) => number][] = [
    ["Input", (r) => r.inputTokens],
    ["Output", (r) => r.outputTokens],
    ["Cache read", (r) => r.cacheReadTokens],
    ["Cache write", (r) => r.cacheWriteTokens],
  ];
  return kinds.map(([label, of]) => ({ label, data: rows.map(of) })).filter((s) => s.data.some((v) => v !== 0));
}

/** The distance between an axis's first two ticks (Chart.js picks "nice" steps). */
export function stepOf(ticks: Tick[]): number {
  return ticks.length > 1 ? Math.abs(ticks[1].value - ticks[0].value) : 0;
}

/** The largest tick of an axis: its unit (k, M) is the one every tick is written in. */
export function topOf(ticks: Tick[]): number {
  return ticks.reduce((top, t) => Math.max(top, Math.abs(t.value)), 0);
}

type Formatters = { value: (n: number) => string; tick: (n: number, ticks: Tick[]) => string };

/** How `mode` writes one value: in a tooltip, and as one of an axis's ticks. */
export function formatters(mode: UsageChartMode): Formatters {
  return mode === "cost"
    ? { value: usd, tick: (n, ticks) => usdTick(n, stepOf(ticks)) }
    : { value: tokens, tick: (n, ticks) => tokensTick(n, stepOf(ticks), topOf(ticks)) };
}

/** Whether `mode` has anything to draw for `rows`. */
export function hasSeries(rows: UsageRow[], mode: UsageChartMode): boolean {
  return series(rows, mode).length > 0;
}

export function usageChartConfig(rows: UsageRow[], mode: UsageChartMode, colours: UsageChartColours): ChartConfiguration<"bar", number[], string> {
  const format = formatters(mode);
  const sets = series(rows, mode);
  const colour = (i: number) => colours.series[i % Math.max(1, colours.series.length)] ?? colours.text;
  const axis = { grid: { color: colours.grid }, border: { color: colours.grid }, ticks: { color: colours.text } };
  return {
    type: "bar",
    data: {
      labels: rows.map((r) => groupLabel(r.key)),
      datasets: sets.map((s, i) => ({ label: s.label, data: s.data, backgroundColor: colour(i), borderWidth: 0 })),
    },
    options: {
      animation: false,
      responsive: true,
      maintainAspectRatio: false,
      // A tooltip for the whole group (every model of the day), wherever the pointer is in it.
      interaction: { mode: "index", intersect: false },
      scales: {
        x: { stacked: true, ...axis, grid: { display: false }, ticks: { color: colours.text, maxRotation: 0, autoSkip: true } },
        y: {
          stacked: true,
          beginAtZero: true,
          ...axis,
          title: { display: true, text: mode === "cost" ? "US$ (API prices)" : "Tokens", color: colours.text },
          ticks: {
            color: colours.text,
            callback: (value, _index, ticks) => format.tick(Number(value), ticks),
          },
        },
      },
      plugins: {
        legend: { labels: { color: colours.text, boxWidth: 12 } },
        tooltip: {
          // A day's models with nothing that day are left out of its tooltip.
          filter: (item: TooltipItem<"bar">) => item.parsed.y !== 0,
          callbacks: {
            title: (items: TooltipItem<"bar">[]) => (items.length ? groupTitle(rows[items[0].dataIndex]?.key ?? "") : ""),
            label: (item: TooltipItem<"bar">) => `${item.dataset.label ?? ""}: ${format.value(item.parsed.y ?? 0)}`,
            footer: (items: TooltipItem<"bar">[]) => {
              const at = items[0]?.dataIndex;
              if (at === undefined) return "";
              const total = sets.reduce((sum, s) => sum + (s.data[at] ?? 0), 0);
              return sets.length > 1 ? `Total: ${format.value(total)}` : "";
            },
          },
        },
      },
    },
  };
}
