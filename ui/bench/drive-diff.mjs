// Drives ui/bench/diff.html in headless Chromium (scripts/bench-diff.sh).
import { createServer } from "vite";
import { chromium } from "playwright-core";

const CHROMIUM = process.env.WEFT_CHROMIUM ?? "/usr/bin/chromium";
const lines = Number(process.env.LINES ?? 20000);
const runs = Number(process.env.RUNS ?? 3);

const server = await createServer({ server: { port: 0, strictPort: false }, logLevel: "error" });
await server.listen();
const url = server.resolvedUrls?.local?.[0];
if (!url) throw new Error("vite gave no address");
const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(((s.length - 1) * p) / 100))] ?? 0;
};
const round = (o) => (o ? Object.fromEntries(Object.entries(o).map(([k, v]) => [k, +v.toFixed(1)])) : null);
const summary = (frames) => ({
  frames: frames.length,
  p50: +pct(frames, 50).toFixed(1),
  p95: +pct(frames, 95).toFixed(1),
  max: +Math.max(...frames).toFixed(1),
  over50: frames.filter((f) => f > 50).length,
});
try {
  for (let run = 0; run < runs; run++) {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${url}bench/diff.html?lines=${lines}`);
    await page.waitForFunction(() => window.__bench, null, { timeout: 600_000 });
    const r = await page.evaluate(() => window.__bench);
    const out = {
      run,
      lines: r.lines,
      virtual: r.virtual,
      rowsInDom: r.rowsInDom,
      mountToFirstFrameMs: +r.mountToFirstFrameMs.toFixed(1),
      switchToSplitMs: r.switchToSplitMs === undefined ? null : +r.switchToSplitMs.toFixed(1),
      unified: r.unifiedFrames ? { ...summary(r.unifiedFrames), loaf: round(r.unifiedLong) } : null,
      split: r.splitFrames ? { ...summary(r.splitFrames), loaf: round(r.splitLong) } : null,
      load: (await import("node:fs")).readFileSync("/proc/loadavg", "utf8").trim(),
    };
    console.log(JSON.stringify(out));
    await page.close();
  }
} finally {
  await browser.close();
  await server.close();
}
