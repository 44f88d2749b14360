// The review's diff view with a 20,000-line diff, measured in a real browser engine
// (scripts/bench-diff.sh drives it in headless Chromium): the time from mounting to
// the first frame with the diff drawn, then every frame while the diff scrolls from top
// to end at 240 px a frame, unified and then side by side. The results land in
// `window.__bench` for the driver to read.
import { mount, tick, unmount } from "svelte";
import DiffView from "../src/lib/components/DiffView.svelte";
import type { FileChange } from "../src/generated";

const params = new URLSearchParams(location.search);
const lines = Number(params.get("lines") ?? 20000);
const step = Number(params.get("step") ?? 240);

function rustLine(i: number): string {
  return `    let value_${i} = compute(${i}, "text ${i}") + other::call(&state, ${i % 97});`;
}

function bigDiff(n: number): FileChange {
  const half = n / 2;
  const body: string[] = [];
  // Hunks of 40 removed + 40 added with context, as a rewrite of a long file looks.
  for (let at = 0, o = 1; at < half; at += 40, o += 43) {
    body.push(`@@ -${o},43 +${o},43 @@`);
    body.push(` fn part_${at}() {`);
    for (let i = at; i < at + 40; i++) body.push(`-${rustLine(i)}`);
    for (let i = at; i < at + 40; i++) body.push(`+${rustLine(i + 1)}`);
    body.push(" }");
    body.push("");
  }
  const diff = `--- a/src/big.rs\n+++ b/src/big.rs\n${body.filter((l) => l !== "").join("\n")}\n`;
  return { path: "src/big.rs", kind: "modify", diff };
}

const frame = () => new Promise<number>((r) => requestAnimationFrame(r));

/** Long animation frames (Chromium's LoAF: over 50 ms) seen while `during` runs: how many, and how much of them was script. */
async function longFrames<T>(during: () => Promise<T>): Promise<{ value: T; long: number; scriptMs: number; renderMs: number }> {
  const entries: PerformanceEntry[] = [];
  let observer: PerformanceObserver | null = null;
  try {
    observer = new PerformanceObserver((list) => entries.push(...list.getEntries()));
    observer.observe({ type: "long-animation-frame", buffered: false });
  } catch {
    observer = null;
  }
  const value = await during();
  await frame();
  observer?.disconnect();
  let scriptMs = 0;
  let renderMs = 0;
  for (const e of entries as (PerformanceEntry & { renderStart: number; scripts: { duration: number }[] })[]) {
    scriptMs += e.scripts.reduce((n, s) => n + s.duration, 0);
    if (e.renderStart > 0) renderMs += e.startTime + e.duration - e.renderStart;
  }
  return { value, long: entries.length, scriptMs, renderMs };
}

async function scrollAll(scroller: HTMLElement): Promise<number[]> {
  const frames: number[] = [];
  let last = await frame();
  while (scroller.scrollTop + scroller.clientHeight < scroller.scrollHeight - 1) {
    scroller.scrollTop += step;
    const now = await frame();
    frames.push(now - last);
    last = now;
  }
  return frames;
}

async function run() {
  const target = document.getElementById("app")!;
  const change = bigDiff(lines);
  const diffLines = change.diff.split("\n").length;
  const result: Record<string, unknown> = { lines: diffLines };
  await frame();
  const t0 = performance.now();
  const app = mount(DiffView, { target, props: { changes: [change] } });
  await tick();
  await frame();
  result.mountToFirstFrameMs = performance.now() - t0;
  const scroller = target.querySelector<HTMLElement>("[data-testid=vdiff-scroller]");
  result.virtual = !!scroller;
  result.rowsInDom = target.querySelectorAll("[data-testid=vdiff-line], tr").length;
  if (scroller) {
    // Let virtua measure the viewport first.
    await frame();
    const unified = await longFrames(() => scrollAll(scroller));
    result.unifiedFrames = unified.value;
    result.unifiedLong = { long: unified.long, scriptMs: unified.scriptMs, renderMs: unified.renderMs };
    const t1 = performance.now();
    target.querySelector<HTMLButtonElement>("[data-testid=vdiff-layout]")!.click();
    await tick();
    await frame();
    result.switchToSplitMs = performance.now() - t1;
    scroller.scrollTop = 0;
    await frame();
    const split = await longFrames(() => scrollAll(scroller));
    result.splitFrames = split.value;
    result.splitLong = { long: split.long, scriptMs: split.scriptMs, renderMs: split.renderMs };
  }
  unmount(app);
  (window as unknown as { __bench: unknown }).__bench = result;
}

void run();
