// Benchmark (skipped unless WEFT_E2E_DIFF_BENCH=1): a 20,000-line diff in the Review of
// the desktop window, in the app's own WebKitGTK WebView (issue 35; scripts/bench-diff.sh
// measures the same component in headless Chromium). A repository made here holds
// src/big.rs of 10,000 short lines; an echo turn, then every line rewritten on disk, then
// a second turn writing a note (its checkpoint before takes the rewrite in): the session's diff is one hunk
// of 10,000 removed and 10,000 added lines (short lines, so the hunk stays under the
// daemon's 256 KiB cap on hunks a diff carries). The Review draws it virtualized; the
// page then scrolls its scroller from top to end at 240 px a frame, unified and then side
// by side, and records every requestAnimationFrame interval. Prints one JSON line
// ("diff bench: …") with p50/p95/max and frames over 50 ms, and the load average; and the
// same for 600 frames of the window idle just before (what the machine gives anyway).
//   WEFT_E2E_DIFF_BENCH=1 WEFT_E2E_FILES=ui/e2e/diff-bench.e2e.test.mjs scripts/e2e-app.sh
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, chooseAgent, launch, phase, screenshot, send, until } from "./harness.mjs";

const LINES = Number(process.env.WEFT_DIFF_BENCH_LINES ?? 20000);
const STEP = Number(process.env.WEFT_DIFF_BENCH_STEP ?? 240);

const git = (dir, ...args) =>
  execFileSync("git", args, {
    cwd: dir,
    env: { ...process.env, GIT_AUTHOR_NAME: "e2e", GIT_AUTHOR_EMAIL: "e2e@example.com", GIT_COMMITTER_NAME: "e2e", GIT_COMMITTER_EMAIL: "e2e@example.com" },
  })
    .toString()
    .trim();

const body = (prefix) =>
  Array.from({ length: LINES / 2 }, (_, i) => `${prefix}${i}();`).join("\n") + "\n";

const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(((s.length - 1) * p) / 100))] ?? 0;
};
const summary = (frames) => ({
  frames: frames.length,
  p50: +pct(frames, 50).toFixed(1),
  p95: +pct(frames, 95).toFixed(1),
  max: +Math.max(...frames).toFixed(1),
  over50: frames.filter((f) => f > 50).length,
  // Where in the scroll they fell (frame numbers), to tell a first-draw cost from load.
  at: frames.flatMap((f, i) => (f > 50 ? [i] : [])).slice(0, 20),
});

// The main thread's busy time per frame, and for the frames over 50 ms, how much of
// each was work (the rest was waiting for the CPU).
const busySummary = (frames, busy) => ({
  p50: +pct(busy, 50).toFixed(1),
  p95: +pct(busy, 95).toFixed(1),
  max: +Math.max(...busy).toFixed(1),
  inLong: frames.flatMap((f, i) => (f > 50 && busy[i] !== undefined ? [+busy[i].toFixed(1)] : [])).slice(0, 20),
});

describe("Weft desktop app: a 20,000-line diff in the Review (benchmark)", { skip: process.env.WEFT_E2E_DIFF_BENCH ? false : "set WEFT_E2E_DIFF_BENCH=1" }, () => {
  let browser;
  const repo = join(dirname(process.env.WEFT_WORKSPACE_DIR ?? "/tmp/weft-e2e/workspace"), "diff-bench-repo");
  before(async () => {
    mkdirSync(join(repo, "src"), { recursive: true });
    writeFileSync(join(repo, "src/big.rs"), body("a"));
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", ".");
    git(repo, "commit", "-q", "-m", "first");
    browser = await launch({ workspace: repo });
    await browser.setTimeout({ script: 300000 });
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("scrolls the Review's 20,000-line diff, unified and side by side, and records its frames", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "echo");
    await send(browser, "hello");
    await until(browser, async () => (await phase(browser)) === "done", "the first turn", 90000);
    writeFileSync(join(repo, "src/big.rs"), body("b"));
    assert.equal(readFileSync(join(repo, "src/big.rs"), "utf8").split("\n").length, LINES / 2 + 1);
    // The Review lists sessions whose turns changed files: this one writes a note (asking
    // first), and its checkpoint before takes the rewrite in.
    await send(browser, "write-file note.txt noted");
    await until(
      browser,
      async () => {
        const allow = await browser.$('[data-testid="allow-once"]');
        if (await allow.isExisting()) await allow.click();
        return (await phase(browser)) === "done";
      },
      "the second turn",
      90000,
    );
    const key = decodeURIComponent((await browser.execute(() => location.hash)).replace(/^#\/s\//, ""));

    await (await byTestId(browser, "rail-review")).click();
    const card = await browser.$(`[data-testid="review-item"][data-session-key="${key}"]`);
    await until(browser, () => card.isExisting(), "the session's review card", 60000);
    await (await card.$("button.disclose")).click();
    const scroller = await card.$('[data-testid="vdiff-scroller"]');
    await until(browser, () => scroller.isExisting(), "the virtualized diff in the review", 60000);

    const result = await browser.executeAsync(
      (k, step, done) => {
        const frame = () => new Promise((r) => requestAnimationFrame(r));
        const card = document.querySelector(`[data-testid="review-item"][data-session-key="${k}"]`);
        const find = () => card.querySelector('[data-testid="vdiff-scroller"]');
        // Per frame, the main thread's work for it: from the scroll event (virtua's
        // handler and Svelte's update run on it) to a message posted from the frame's
        // requestAnimationFrame callback (delivered once that frame's style, layout and
        // paint are done). A long interval with a short busy time is the CPU taken away.
        async function scrollAll(el) {
          const frames = [];
          const busy = [];
          let scrolled = null;
          const onScroll = () => {
            if (scrolled === null) scrolled = performance.now();
          };
          el.addEventListener("scroll", onScroll, { capture: true, passive: true });
          const channel = new MessageChannel();
          let pending = null;
          channel.port1.onmessage = () => {
            if (pending !== null) busy.push(performance.now() - pending);
            pending = null;
          };
          let last = await frame();
          while (el.scrollTop + el.clientHeight < el.scrollHeight - 1) {
            el.scrollTop += step;
            const now = await frame();
            frames.push(now - last);
            last = now;
            pending = scrolled;
            scrolled = null;
            if (pending === null) busy.push(0);
            else channel.port2.postMessage(0);
          }
          el.removeEventListener("scroll", onScroll, { capture: true });
          await frame();
          return { frames, busy };
        }
        (async () => {
          await frame();
          await frame();
          const el = find();
          const out = { rowsInDom: card.querySelectorAll('[data-testid="vdiff-line"]').length, scrollHeight: el.scrollHeight };
          // The same window doing nothing for as many frames: what the machine and the
          // WebView give without the diff's work (the yardstick for the scrolling's).
          out.idle = [];
          let last = await frame();
          for (let i = 0; i < 600; i++) {
            const now = await frame();
            out.idle.push(now - last);
            last = now;
          }
          ({ frames: out.unified, busy: out.unifiedBusy } = await scrollAll(el));
          const t = performance.now();
          card.querySelector('[data-testid="vdiff-layout"]').click();
          await frame();
          await frame();
          out.switchToSplitMs = performance.now() - t;
          const split = find();
          split.scrollTop = 0;
          await frame();
          ({ frames: out.split, busy: out.splitBusy } = await scrollAll(split));
          done(out);
        })().catch((e) => done({ error: String(e) }));
      },
      key,
      STEP,
    );
    assert.equal(result.error, undefined, result.error);
    assert.ok(result.unified.length > 100 && result.split.length > 100, "the diff scrolled over many frames");
    assert.ok(result.rowsInDom > 0 && result.rowsInDom < 500, `only a window of rows is drawn (${result.rowsInDom})`);
    const out = {
      lines: LINES,
      rowsInDom: result.rowsInDom,
      switchToSplitMs: +result.switchToSplitMs.toFixed(1),
      idle: summary(result.idle),
      unified: summary(result.unified),
      unifiedBusy: busySummary(result.unified, result.unifiedBusy),
      split: summary(result.split),
      splitBusy: busySummary(result.split, result.splitBusy),
      load: readFileSync("/proc/loadavg", "utf8").trim(),
    };
    console.log(`diff bench: ${JSON.stringify(out)}`);
    await screenshot(browser, "review-20000-line-diff-light");
  });
});
