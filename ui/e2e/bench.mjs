// Desktop app figures for BENCHMARKS.md, driven like the e2e suite (run by
// scripts/bench-app.sh, which starts Xvfb and tauri-driver and seeds the big session).
// Prints one JSON object.
//   launch: WebDriver new-session request → the window's data-ready-at mark (ms)
//   pss:    PSS summed over the app process and its children (WebKit) and the daemon,
//           after settling (ussTotal, rssTotal: their private and resident memory)
//   frames: requestAnimationFrame deltas while a reply streams into the big session
//   viewSwitch / sessionSwitch (issue 34): with the big session open, location.hash set
//           (or a sidebar row clicked) in the page → the first requestAnimationFrame
//           callback after the view's element (the transcript with its rows) exists,
//           timed in the page with performance.now(); per target, p50 and max of ROUNDS
//   many:   the same and PSS in a second home with 2,000 more sessions in the sidebar,
//           and frames while the sidebar's list is scrolled to its end
//   bundle: gzip (level 9) size of ui/dist's JS and CSS, what the first load fetches apart
import { execSync } from "node:child_process";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { remote } from "webdriverio";

const PORT = Number(process.env.WEFT_E2E_PORT ?? 4444);
const SETTLE_MS = Number(process.env.WEFT_BENCH_SETTLE_MS ?? 20000);
const RUNS = Number(process.env.WEFT_BENCH_LAUNCHES ?? 3);
const CALLS = Number(process.env.WEFT_BENCH_CALLS ?? 10000);
const ROUNDS = Number(process.env.WEFT_BENCH_SWITCH_ROUNDS ?? 7);

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
  // Where the launch went: until the page's navigation began (the process, WebKit, the
  // window), then in the page (ms from that start) the marks main.ts and the app set.
  const page = await browser.execute(() => {
    const at = (name) => performance.getEntriesByName(name)[0]?.startTime ?? null;
    return {
      timeOrigin: performance.timeOrigin,
      script: at("weft:script"),
      mounted: at("weft:mounted"),
      connected: at("weft:connected"),
      ready: at("weft:ready"),
    };
  });
  const phases = {
    windowMs: Math.round(page.timeOrigin - t0),
    scriptMs: round(page.script),
    mountedMs: round(page.mounted),
    connectedMs: round(page.connected),
    readyMs: round(page.ready),
  };
  // The in-page measurements below wait on frames, some for up to a minute.
  await browser.setTimeout({ script: 120000 });
  return { browser, launchMs: readyAt - t0, phases };
}

const round = (ms) => (ms === null ? null : Math.round(ms));

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

/** From smaps_rollup (kB): PSS, RSS and USS (private pages only, which other processes mapping the same libraries do not change). */
function rollupKb(pid) {
  try {
    const text = readFileSync(`/proc/${pid}/smaps_rollup`, "utf8");
    const kb = (field) => Number(text.match(new RegExp(`^${field}:\\s+(\\d+) kB`, "m"))?.[1] ?? 0);
    return { pss: kb("Pss"), rss: kb("Rss"), uss: kb("Private_Clean") + kb("Private_Dirty") };
  } catch {
    return { pss: 0, rss: 0, uss: 0 };
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
  const all = { rss: 0, uss: 0 };
  const add = (n, p) => {
    const r = rollupKb(p);
    byName[n] = (byName[n] ?? 0) + r.pss;
    all.rss += r.rss;
    all.uss += r.uss;
  };
  const walk = (p) => {
    add(name(p), p);
    for (const c of children(p)) walk(c);
  };
  walk(pid);
  // The app's kernel service runs in its own process (`weft daemon`), started by the
  // first window and kept by later ones: it is part of what the app costs. (A window
  // that started it has it as a child, named `weft`, until it exits.)
  if (binary !== bare) {
    try {
      const daemon = Number(execSync(`pgrep -n -f '[w]eft daemon run'`).toString().trim());
      if (daemon && !byName["weft"]) add("weft daemon", daemon);
    } catch {
      // No daemon: nothing to add.
    }
  }
  const mb = Object.fromEntries(Object.entries(byName).map(([k, v]) => [k, Math.round(v / 1024)]));
  const total = Math.round(Object.values(byName).reduce((a, b) => a + b, 0) / 1024);
  return { total, ...mb, ussTotal: Math.round(all.uss / 1024), rssTotal: Math.round(all.rss / 1024) };
}

/** The machine's load average (1 min) now: other engineers build and test on it too. */
const load1 = () => Number(readFileSync("/proc/loadavg", "utf8").split(" ")[0]);

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

/**
 * Times one switch in the page: `action` (`{ hash }`: set location.hash; `{ click }`: click
 * the button the selector finds), then until `target` is ready (`{ selector }` exists and,
 * with `rows`, has that data-rows and a row drawn), checked at every DOM mutation and every
 * frame, and until the first requestAnimationFrame callback after that, both with
 * performance.now() from just before the action. No WebDriver round trip is inside.
 */
function timeSwitch(browser, action, target) {
  return browser.executeAsync(
    (action, target, done) => {
      const ready = () => {
        const el = document.querySelector(target.selector);
        if (!el) return false;
        if (target.rows === undefined) return true;
        return Number(el.getAttribute("data-rows")) === target.rows && el.querySelector(".vrow") !== null;
      };
      if (ready()) return done({ error: `${target.selector} was there before the switch` });
      const button = action.click ? document.querySelector(action.click) : null;
      if (action.click && !button) return done({ error: `no ${action.click}` });
      let readyAt = null;
      const mo = new MutationObserver(() => {
        if (readyAt === null && ready()) readyAt = performance.now();
      });
      mo.observe(document.body, { childList: true, subtree: true, attributes: true, attributeFilter: ["data-rows"] });
      const t0 = performance.now();
      const frame = () => {
        const now = performance.now();
        if (readyAt === null && ready()) readyAt = now;
        if (readyAt !== null || now - t0 > 20000) {
          mo.disconnect();
          return done(readyAt === null ? { error: "timed out" } : { existsMs: readyAt - t0, frameMs: now - t0 });
        }
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
      if (button) button.click();
      else window.location.hash = action.hash;
    },
    action,
    target,
  );
}

/** In the page: until `n` frames in a row each came within 25 ms (at most 10 s), after a short pause. */
function quiet(browser, n = 6) {
  return browser.executeAsync((n, done) => {
    const t0 = performance.now();
    setTimeout(() => {
      let last = performance.now();
      let calm = 0;
      const frame = () => {
        const now = performance.now();
        calm = now - last < 25 ? calm + 1 : 0;
        last = now;
        if (calm >= n || now - t0 > 10000) return done(calm >= n);
        requestAnimationFrame(frame);
      };
      requestAnimationFrame(frame);
    }, 300);
  }, n);
}

const round1 = (x) => Math.round(x * 10) / 10;

/** Per step name: every round's frameMs, and p50 / max / the first round's, and existsMs's p50. */
function switchStats(samples) {
  const out = {};
  for (const [name, list] of Object.entries(samples)) {
    const errors = list.filter((r) => r.error).map((r) => r.error);
    const ok = list.filter((r) => !r.error);
    const frame = ok.map((r) => r.frameMs);
    out[name] = ok.length
      ? {
          p50Ms: round1(median(frame)),
          maxMs: round1(Math.max(...frame)),
          firstMs: round1(frame[0]),
          existsP50Ms: round1(median(ok.map((r) => r.existsMs))),
          runsMs: frame.map(round1),
          ...(errors.length ? { errors } : {}),
        }
      : { errors };
  }
  return out;
}

/**
 * With the big session shown: every place by its address and back to the session,
 * ROUNDS times. `bigRows` is the big transcript's row count when settled.
 */
async function viewSwitches(browser, bigKey, bigRows) {
  const steps = [
    ["inbox", { hash: "#/inbox" }, { selector: '[data-testid="inbox-view"]' }],
    ["library", { hash: "#/library" }, { selector: '[data-testid="library-view"]' }],
    ["review", { hash: "#/review" }, { selector: '[data-testid="review-view"]' }],
    ["usage", { hash: "#/usage" }, { selector: '[data-testid="usage-view"]' }],
    ["settings/accounts", { hash: "#/settings/accounts" }, { selector: '[data-testid="accounts-view"]' }],
    ["settings/appearance", { hash: "#/settings/appearance" }, { selector: '[data-testid="appearance-settings"]' }],
    ["session (10k calls)", { hash: `#/s/${encodeURIComponent(bigKey)}` }, { selector: '[data-testid="transcript"]', rows: bigRows }],
  ];
  const samples = Object.fromEntries(steps.map(([name]) => [name, []]));
  for (let round = 0; round < ROUNDS; round++) {
    for (const [name, action, target] of steps) {
      await quiet(browser);
      samples[name].push(await timeSwitch(browser, action, target));
    }
  }
  return switchStats(samples);
}

/** The sidebar row of `key` in the DOM (the list is virtual): scrolled to from the top if need be. */
function revealRow(browser, key) {
  return browser.executeAsync((key, done) => {
    const list = document.querySelector('[data-testid="session-list"]');
    const sel = `[data-testid="session-item"][data-session-key="${key}"]`;
    if (document.querySelector(sel)) return done(true);
    list.scrollTop = 0;
    const t0 = performance.now();
    const frame = () => {
      if (document.querySelector(sel)) return done(true);
      if (list.scrollTop + list.clientHeight >= list.scrollHeight - 1 || performance.now() - t0 > 20000) return done(false);
      list.scrollTop += 200;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }, key);
}

const rowButton = (key) => `[data-testid="session-item"][data-session-key="${key}"] button`;

/** The transcript's row count once `key` is shown (selected by its address) and settled. */
async function settledRows(browser, key) {
  await browser.execute((h) => (window.location.hash = h), `#/s/${encodeURIComponent(key)}`);
  let rows = -1;
  await browser.waitUntil(
    async () => {
      const now = await browser.execute(() => {
        const t = document.querySelector('[data-testid="transcript"]');
        return t && t.querySelector(".vrow") ? Number(t.getAttribute("data-rows")) : -1;
      });
      const same = now > 0 && now === rows;
      rows = now;
      return same;
    },
    { timeout: 60000, interval: 500 },
  );
  await quiet(browser);
  return rows;
}

/**
 * From a small session to the big one and back by their sidebar rows, ROUNDS times each;
 * leaves the big one shown. `smallKey` null: the first other session row in the DOM.
 */
async function sessionSwitches(browser, bigKey, smallKey = null) {
  await revealRow(browser, bigKey);
  const small =
    smallKey ??
    (await browser.execute(
      (big) => [...document.querySelectorAll('[data-testid="session-item"]')].map((e) => e.dataset.sessionKey).find((k) => k !== big),
      bigKey,
    ));
  const smallRows = await settledRows(browser, small);
  const bigRows = await settledRows(browser, bigKey);
  const samples = { "small → 10k calls": [], "10k calls → small": [] };
  for (let round = 0; round < ROUNDS; round++) {
    await revealRow(browser, small);
    await quiet(browser);
    samples["10k calls → small"].push(await timeSwitch(browser, { click: rowButton(small) }, { selector: '[data-testid="transcript"]', rows: smallRows }));
    await revealRow(browser, bigKey);
    await quiet(browser);
    samples["small → 10k calls"].push(await timeSwitch(browser, { click: rowButton(bigKey) }, { selector: '[data-testid="transcript"]', rows: bigRows }));
  }
  return { smallRows, bigRows, ...switchStats(samples) };
}

/** rAF deltas while the sidebar's list is scrolled `step` px a frame from its top to its end. */
async function scrollSidebar(browser, step = 240) {
  const r = await browser.executeAsync((step, done) => {
    const list = document.querySelector('[data-testid="session-list"]');
    list.scrollTop = 0;
    const frames = [];
    const t0 = performance.now();
    let last = t0;
    let atEnd = 0;
    const frame = () => {
      const now = performance.now();
      frames.push(now - last);
      last = now;
      // At the end for a few frames running: virtua's measured heights can move it.
      atEnd = list.scrollTop + list.clientHeight >= list.scrollHeight - 1 ? atEnd + 1 : 0;
      if (atEnd >= 5 || now - t0 > 60000) {
        return done({ frames, px: Math.round(list.scrollTop), rows: Number(list.getAttribute("data-rows")), ms: Math.round(now - t0) });
      }
      list.scrollTop += step;
      requestAnimationFrame(frame);
    };
    requestAnimationFrame(frame);
  }, step);
  return { pxPerFrame: step, px: r.px, rows: r.rows, ms: r.ms, ...frameStats(r.frames) };
}

async function launches(binary, args) {
  const times = [];
  const phases = [];
  for (let i = 0; i < RUNS; i++) {
    const { browser, launchMs, phases: p } = await open(binary, args);
    times.push(launchMs);
    phases.push(p);
    await browser.deleteSession();
    // Let the previous instance and what it spawned (agents asked for their versions) end.
    await sleep(3000);
  }
  return { runs: times, median: median(times), phases };
}

/** The built UI's JS and CSS, gzip level 9 (node's zlib): all of it, what the first page load fetches, the rest. */
function bundleSizes(dist) {
  const assets = join(dist, "assets");
  const files = readdirSync(assets).filter((f) => /\.(js|css)$/.test(f));
  const bytes = Object.fromEntries(files.map((f) => [f, readFileSync(join(assets, f))]));
  const raw = Object.fromEntries(files.map((f) => [f, bytes[f].length]));
  const gz = Object.fromEntries(files.map((f) => [f, gzipSync(bytes[f], { level: 9 }).length]));
  // The first load: what index.html names (the entry script, its modulepreloads, the
  // stylesheet) and, following the chunks' static imports (`import{…}from"./x.js"`,
  // `import"./x.js"`, not `import("./x.js")`), everything the entry needs before it runs.
  const html = readFileSync(join(dist, "index.html"), "utf8");
  const initial = new Set();
  const visit = (f) => {
    if (initial.has(f) || !bytes[f]) return;
    initial.add(f);
    if (!f.endsWith(".js")) return;
    for (const m of bytes[f].toString("utf8").matchAll(/\b(?:import|export)\s*(?:[\w$*{}\s,]*?from\s*)?"\.\/([^"]+)"/g)) visit(m[1]);
  };
  for (const m of html.matchAll(/(?:src|href)="\/assets\/([^"]+)"/g)) visit(m[1]);
  const sum = (list, map) => list.reduce((a, f) => a + map[f], 0);
  const of = (pred) => files.filter(pred);
  const js = (f) => f.endsWith(".js");
  const css = (f) => f.endsWith(".css");
  // Chunk names without Vite's content hash.
  const short = (f) => f.replace(/-[\w-]{8}(\.(?:js|css))$/, "$1");
  return {
    all: { gzipBytes: { js: sum(of(js), gz), css: sum(of(css), gz) }, rawBytes: { js: sum(of(js), raw), css: sum(of(css), raw) } },
    firstLoad: {
      chunks: [...initial].map(short),
      gzipBytes: { js: sum(of((f) => js(f) && initial.has(f)), gz), css: sum(of((f) => css(f) && initial.has(f)), gz) },
      rawBytes: { js: sum(of((f) => js(f) && initial.has(f)), raw), css: sum(of((f) => css(f) && initial.has(f)), raw) },
    },
    chunks: Object.fromEntries(files.map((f) => [short(f), { gzip: gz[f], raw: raw[f], firstLoad: initial.has(f) }])),
  };
}

const app = process.env.WEFT_APP_BIN;
const bare = process.env.WEFT_BARE_BIN;
const workspace = process.env.WEFT_WORKSPACE_DIR;
const bigKey = process.env.WEFT_BIG_SESSION;
const manyApp = process.env.WEFT_MANY_APP_BIN;
const manyWorkspace = process.env.WEFT_MANY_WORKSPACE_DIR;
const manyBigKey = process.env.WEFT_MANY_BIG_SESSION;
const MANY = Number(process.env.WEFT_BENCH_MANY_SESSIONS ?? 0);
const result = {};

result.loadAvg = { start: load1() };
result.bundle = bundleSizes(process.env.WEFT_UI_DIST ?? new URL("../dist", import.meta.url).pathname);

result.bareLaunch = await launches(bare, []);
result.appLaunch = await launches(app, ["--workspace", workspace]);
if (process.env.WEFT_BENCH_ONLY_LAUNCH) {
  console.log(JSON.stringify(result, null, 2));
  process.exit(0);
}

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

  // Issue 34: with the big session open as seeded (its 10,000 calls the last turn),
  // every place and back, then from a small session to it and back.
  const bigRows = await settledRows(browser, bigKey);
  result.loadAvg.switches = load1();
  result.viewSwitch = await viewSwitches(browser, bigKey, bigRows);
  result.sessionSwitch = await sessionSwitches(browser, bigKey);
  result.afterSwitchesPss = pssTree(app);

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

if (MANY > 0 && manyApp && manyBigKey) {
  // The same with MANY more sessions in the sidebar, in a home of their own (the app is
  // launched through a wrapper that sets WEFT_HOME and execs it). The first home's
  // daemon would idle beside this one's: stopped.
  try {
    execSync(`"${process.env.WEFT_BIN}" daemon stop`, { stdio: "ignore" });
  } catch {
    // Already gone.
  }
  const many = { sessions: MANY };
  const { browser, launchMs } = await open(manyApp, ["--workspace", manyWorkspace]);
  many.launchMs = launchMs;
  await sleep(SETTLE_MS);
  many.idle = await browser.execute(() => ({
    hash: window.location.hash,
    sidebarRows: Number(document.querySelector('[data-testid="session-list"]')?.getAttribute("data-rows")),
    sessionItemsInDom: document.querySelectorAll('[data-testid="session-item"]').length,
    domNodes: document.getElementsByTagName("*").length,
  }));
  many.idlePss = pssTree(app);
  many.sidebarScroll = await scrollSidebar(browser);
  const bigRows = await settledRows(browser, manyBigKey);
  await sleep(SETTLE_MS);
  many.bigSessionPss = pssTree(app);
  result.loadAvg.manySwitches = load1();
  many.viewSwitch = await viewSwitches(browser, manyBigKey, bigRows);
  many.sessionSwitch = await sessionSwitches(browser, manyBigKey);
  many.afterSwitchesPss = pssTree(app);
  await browser.deleteSession();
  result.many = many;
}

result.loadAvg.end = load1();
console.log(JSON.stringify(result, null, 2));
