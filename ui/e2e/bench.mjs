// Desktop app figures for BENCHMARKS.md, driven like the e2e suite (run by
// scripts/bench-app.sh, which starts Xvfb and tauri-driver and seeds the big session).
// Prints one JSON object.
//   launch: WebDriver new-session request → the window's data-ready-at mark (ms)
//   pss:    PSS summed over the app process and its children (WebKit), after settling
//   frames: requestAnimationFrame deltas while a reply streams into the big session
import { execSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { remote } from "webdriverio";

const PORT = Number(process.env.WEFT_E2E_PORT ?? 4444);
const SETTLE_MS = Number(process.env.WEFT_BENCH_SETTLE_MS ?? 20000);
const RUNS = Number(process.env.WEFT_BENCH_LAUNCHES ?? 3);
const CALLS = Number(process.env.WEFT_BENCH_CALLS ?? 10000);

async function open(application, args = []) {
  const t0 = Date.now();
  const browser = await remote({
    hostname: "127.0.0.1",
    port: PORT,
    logLevel: "warn",
    connectionRetryTimeout: 60000,
    capabilities: {
      browserName: "wry",
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application, args },
    },
  });
  await browser.waitUntil(async () => Boolean(await browser.execute(() => document.documentElement.dataset.readyAt)), {
    timeout: 30000,
    interval: 20,
  });
  const readyAt = Number(await browser.execute(() => document.documentElement.dataset.readyAt));
  return { browser, launchMs: readyAt - t0 };
}

function children(pid) {
  const out = [];
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      if (ppid === pid) out.push(Number(entry));
    } catch {
      /* gone */
    }
  }
  return out;
}

function pssKb(pid) {
  try {
    const m = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8").match(/^Pss:\s+(\d+) kB/m);
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

function name(pid) {
  try {
    return readFileSync(`/proc/${pid}/comm`, "utf8").trim();
  } catch {
    return "?";
  }
}

/** PSS (MB) of the newest process running `binary`, and of its descendants, by name. */
function pssTree(binary) {
  const pid = Number(execSync(`pgrep -n -f '^${binary}'`).toString().trim());
  const byName = {};
  const walk = (p) => {
    const n = name(p);
    byName[n] = (byName[n] ?? 0) + pssKb(p);
    for (const c of children(p)) walk(c);
  };
  walk(pid);
  // The app's kernel service runs in its own process (`weft daemon`), started by the
  // first window and kept by later ones: it is part of what the app costs.
  if (binary !== bare) {
    try {
      const daemon = Number(execSync(`pgrep -n -f '[w]eft daemon run'`).toString().trim());
      if (daemon && !byName["weft"]) byName["weft daemon"] = pssKb(daemon);
    } catch {
      // No daemon: nothing to add.
    }
  }
  const mb = Object.fromEntries(Object.entries(byName).map(([k, v]) => [k, Math.round(v / 1024)]));
  const total = Math.round(Object.values(byName).reduce((a, b) => a + b, 0) / 1024);
  return { total, ...mb };
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

/** requestAnimationFrame deltas (ms) over `ms` of doing nothing. */
async function idleFrames(browser, ms) {
  await startFrames(browser);
  await sleep(ms);
  return frameStats(await stopFrames(browser));
}

async function startFrames(browser) {
  await browser.execute(() => {
    const w = window;
    // A new generation ends any earlier loop at its next frame.
    const gen = (w.__frameGen = (w.__frameGen ?? 0) + 1);
    w.__frames = [];
    w.__longFrames = [];
    const t0 = performance.now();
    let last = t0;
    // What the session showed when a frame ran long (phase label, rows in the list).
    const state = () => {
      const phase = document.querySelector('[data-testid="session-phase"]')?.textContent ?? "";
      const rows = document.querySelector('[data-testid="transcript"]')?.getAttribute("data-rows") ?? "";
      return `${phase} rows=${rows}`;
    };
    const loop = (t) => {
      if (w.__frameGen !== gen) return;
      w.__frames.push(t - last);
      if (t - last > 50) w.__longFrames.push({ atMs: Math.round(t - t0), ms: Math.round(t - last), state: state() });
      last = t;
      requestAnimationFrame(loop);
    };
    requestAnimationFrame(loop);
  });
}

function stopFrames(browser) {
  return browser.execute(() => {
    window.__frameGen += 1;
    return window.__frames;
  });
}

/** Frames over 50 ms in the last measurement: when (ms from its start), how long, and the state then. */
function longFrames(browser) {
  return browser.execute(() => window.__longFrames ?? []);
}

function frameStats(frames) {
  const sorted = frames.slice(1).sort((a, b) => a - b);
  const pct = (p) => sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))];
  const r = (x) => Math.round(x * 10) / 10;
  return {
    frames: sorted.length,
    meanMs: r(sorted.reduce((a, b) => a + b, 0) / sorted.length),
    p50Ms: r(pct(50)),
    p95Ms: r(pct(95)),
    p99Ms: r(pct(99)),
    maxMs: r(sorted.at(-1)),
    over50ms: sorted.filter((f) => f > 50).length,
  };
}

async function launches(binary, args) {
  const times = [];
  for (let i = 0; i < RUNS; i++) {
    const { browser, launchMs } = await open(binary, args);
    times.push(launchMs);
    await browser.deleteSession();
    // Let the previous instance and what it spawned (agents asked for their versions) end.
    await sleep(3000);
  }
  return { runs: times, median: median(times) };
}

const app = process.env.WEFT_APP_BIN;
const bare = process.env.WEFT_BARE_BIN;
const workspace = process.env.WEFT_WORKSPACE_DIR;
const bigKey = process.env.WEFT_BIG_SESSION;
const result = {};

result.bareLaunch = await launches(bare, []);
result.appLaunch = await launches(app, ["--workspace", workspace]);

{
  const { browser } = await open(bare, []);
  await sleep(SETTLE_MS);
  result.bareIdlePss = pssTree(bare);
  result.bareIdleFrames = await idleFrames(browser, 10000);
  await browser.deleteSession();
}

{
  // The same bare window drawing as the app does without a GPU (no compositing).
  const { browser } = await open(bare, ["--no-compositing"]);
  await sleep(SETTLE_MS);
  result.bareNoCompositingIdlePss = pssTree(bare);
  await browser.deleteSession();
}

{
  const { browser } = await open(app, ["--workspace", workspace]);
  await sleep(SETTLE_MS);
  result.appIdlePss = pssTree(app);

  const t0 = Date.now();
  const item = await browser.$(`[data-testid="session-item"][data-session-key="${bigKey}"] button`);
  await item.waitForExist({ timeout: 30000 });
  await item.click();
  await browser.waitUntil(
    async () => Number(await (await browser.$('[data-testid="transcript"]')).getAttribute("data-rows")) > CALLS,
    { timeout: 60000, interval: 50 },
  );
  await browser.waitUntil(async () => (await browser.$$('[data-testid="tool-row"]')).length > 0, { timeout: 30000 });
  result.bigSessionOpenMs = Date.now() - t0;
  result.bigSessionRows = Number(await (await browser.$('[data-testid="transcript"]')).getAttribute("data-rows"));
  result.bigSessionDomToolRows = (await browser.$$('[data-testid="tool-row"]')).length;
  await sleep(SETTLE_MS);
  result.bigSessionPss = pssTree(app);

  result.bigSessionIdleFrames = await idleFrames(browser, 10000);
  // Frame times while a reply streams into the big session.
  await startFrames(browser);
  const input = await browser.$('[data-testid="composer-input"]');
  await input.click();
  await input.setValue("slow stream into the big session");
  await browser.keys("Enter");
  await browser.waitUntil(async () => (await (await browser.$('[data-testid="session-phase"]')).getText()) === "streaming", {
    timeout: 30000,
    interval: 50,
  });
  const streamStart = Date.now();
  await browser.waitUntil(async () => (await (await browser.$('[data-testid="session-phase"]')).getText()) === "done", {
    timeout: 120000,
    interval: 200,
  });
  const streamSeconds = Math.round((Date.now() - streamStart) / 100) / 10;
  result.streaming = { seconds: streamSeconds, ...frameStats(await stopFrames(browser)) };
  result.streamingLongFrames = await longFrames(browser);
  await sleep(SETTLE_MS);
  result.afterStreamPss = pssTree(app);
  await browser.deleteSession();
}

console.log(JSON.stringify(result, null, 2));
