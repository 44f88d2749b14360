// The app shell in the real window: every place by its address (kept by a reload and by
// back), the palette, the help sheet, the sidebar tree from the keyboard, the session
// header at 1024, 1280 and 1920 px with nothing overlapping, keyboard-only use, both
// themes, and axe-core's WCAG 2 A/AA rules on every view (no serious or critical
// violation). Screenshots of every view in both themes go to SCREENSHOT_DIR.
import assert from "node:assert/strict";
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { after, before, describe, it } from "node:test";
import { allByTestId, byTestId, chooseAgent, launch, phase, screenshot, send, setTheme, until } from "./harness.mjs";

const require = createRequire(import.meta.url);
const AXE = readFileSync(require.resolve("axe-core/axe.min.js"), "utf8");

/** Each place's address and the view it shows. */
const VIEWS = [
  ["#/new", "empty-state"],
  ["#/inbox", "inbox-view"],
  ["#/library", "library-view"],
  ["#/review", "review-view"],
  ["#/usage", "usage-view"],
  ["#/settings/accounts", "accounts-view"],
  ["#/settings/agents", "agents-view"],
  ["#/settings/mcp", "mcp-settings"],
  ["#/settings/skills", "skills-settings"],
  ["#/settings/chat", "chat-settings"],
  ["#/settings/hosts", "hosts-settings"],
  ["#/settings/appearance", "appearance-settings"],
];

let browser;

async function go(hash, testid) {
  await browser.execute((h) => (window.location.hash = h), hash);
  await until(browser, async () => (await byTestId(browser, testid)).isDisplayed(), `${hash} to show ${testid}`);
}

/** axe-core's WCAG 2 A and AA rules on the page as it is: the serious and critical violations. */
async function axe() {
  const defined = await browser.execute(() => typeof window.axe !== "undefined");
  // Run as the driver's own script (not through the page's CSP).
  if (!defined) await browser.execute(`${AXE}; return true;`);
  const found = await browser.executeAsync((done) => {
    window.axe
      .run(document, { runOnly: { type: "tag", values: ["wcag2a", "wcag2aa", "wcag21a", "wcag21aa"] }, resultTypes: ["violations"] })
      .then((r) => done(r.violations.filter((v) => v.impact === "serious" || v.impact === "critical").map((v) => ({ id: v.id, impact: v.impact, nodes: v.nodes.slice(0, 3).map((n) => `${n.target.join(" ")} ${JSON.stringify(n.any?.[0]?.data ?? "")}`) }))))
      .catch((e) => done([{ id: "axe-error", impact: "critical", nodes: [String(e)] }]));
  });
  return found;
}

describe("Weft desktop app: the shell", () => {
  before(async () => {
    browser = await launch();
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "echo");
    // A workspace with several sessions: the sidebar's tree has something to fold.
    for (const words of ["shell one", "shell two", "shell three"]) {
      await (await byTestId(browser, "new-session")).click();
      await send(browser, words);
      await until(browser, async () => (await phase(browser)) === "done", `the turn "${words}"`);
    }
  });
  after(async () => {
    if (browser) await browser.deleteSession();
  });

  it("shows every view at its address, keeps it across a reload, and back returns", async () => {
    for (const [hash, testid] of VIEWS) await go(hash, testid);
    await go("#/usage", "usage-view");
    await go("#/settings/hosts", "hosts-settings");
    await browser.refresh();
    await until(browser, async () => (await browser.$('[data-testid="app"]').getAttribute("data-ready")) === "true", "the reloaded window");
    await until(browser, async () => (await byTestId(browser, "hosts-settings")).isDisplayed(), "the same place after a reload");
    await browser.execute(() => window.history.back());
    await until(
      browser,
      async () => (await byTestId(browser, "usage-view")).isDisplayed(),
      `the place before, on back (at ${await browser.execute(() => `${window.location.hash}, ${window.history.length} entries`)})`,
    );
    assert.equal(await browser.execute(() => window.location.hash), "#/usage");
  });

  it("meets WCAG 2 A/AA (axe-core) on every view in both themes, with screenshots", async () => {
    const failures = [];
    for (const theme of ["light", "dark"]) {
      await setTheme(browser, theme);
      for (const [hash, testid] of VIEWS) {
        await go(hash, testid);
        const name = hash.replace(/^#\//, "").replace(/\//g, "-") || "new";
        await screenshot(browser, `shell-${name}-${theme}`);
        for (const v of await axe()) failures.push(`${theme} ${hash}: ${v.impact} ${v.id} at ${v.nodes.join(", ")}`);
      }
      // A session with its transcript, too.
      await (await browser.$('[data-testid="session-item"] button')).click();
      await until(browser, async () => (await byTestId(browser, "session-header")).isDisplayed(), "a session's header");
      await screenshot(browser, `shell-session-${theme}`);
      for (const v of await axe()) failures.push(`${theme} session: ${v.impact} ${v.id} at ${v.nodes.join(", ")}`);
    }
    await setTheme(browser, "light");
    assert.deepEqual(failures, []);
  });

  it("runs an action from the palette: Ctrl+K, a few letters, Enter", async () => {
    await go("#/new", "empty-state");
    await browser.keys(["Control", "k"]);
    const input = await byTestId(browser, "palette-input");
    await input.waitForDisplayed({ timeout: 10000 });
    await input.setValue("revi");
    await until(
      browser,
      async () => (await browser.$('[data-testid="palette-item"][data-selected]').getAttribute("data-action-id")) === "go-review",
      "Go to Review first",
    );
    await screenshot(browser, "shell-palette");
    await browser.keys("Enter");
    await until(browser, async () => (await byTestId(browser, "review-view")).isDisplayed(), "the review view");
    assert.equal(await browser.execute(() => window.location.hash), "#/review");
    // `?` lists every shortcut.
    await browser.execute(() => document.activeElement?.blur());
    await browser.keys("?");
    await until(browser, async () => (await byTestId(browser, "help-sheet")).isDisplayed(), "the help sheet");
    assert.match(await (await byTestId(browser, "help-sheet")).getText(), /Ctrl\+K/);
    await browser.keys("Escape");
    await until(browser, async () => !(await (await byTestId(browser, "help-sheet")).isExisting()), "the sheet to close");
  });

  it("is usable from the keyboard alone: places by Alt+digit and Tab, the tree by arrows", async () => {
    await browser.keys(["Alt", "2"]);
    await until(browser, async () => (await byTestId(browser, "inbox-view")).isDisplayed(), "Alt+2: the inbox");
    // Tab moves along the rail's places.
    await browser.execute(() => document.querySelector('[data-testid="rail-session"]')?.focus());
    await browser.keys("Tab");
    await browser.keys("Tab");
    assert.equal(await browser.execute(() => document.activeElement?.dataset.testid), "rail-library");
    await browser.keys("Enter");
    await until(browser, async () => (await byTestId(browser, "library-view")).isDisplayed(), "Enter on Library");
    // The tree: focus a workspace head, fold it with ←, unfold with →, go down into its sessions.
    const workdir = process.env.WEFT_WORKSPACE_DIR;
    const head = await browser.$(`[data-testid="workspace"][data-workdir="${workdir}"] .ws-head`);
    await browser.execute((el) => el.focus(), head);
    await browser.keys("ArrowLeft");
    await until(browser, async () => (await browser.$(`[data-testid="workspace"][data-workdir="${workdir}"]`).getAttribute("data-folded")) === "true", "the workspace folded");
    assert.equal(await browser.$(`[data-testid="session-item"][data-workdir="${workdir}"]`).isExisting(), false);
    await browser.keys("ArrowRight");
    await until(browser, async () => (await allByTestId(browser, "session-item")).length >= 3, "its sessions again");
    await browser.keys("ArrowDown");
    const focused = await browser.execute(() => document.activeElement?.closest("[data-testid]")?.dataset.testid);
    assert.equal(focused, "session-item");
    await browser.keys("Enter");
    await until(browser, async () => (await byTestId(browser, "session-header")).isDisplayed(), "Enter opens the session");
  });

  it("keeps the session header on one line with nothing overlapping at 1024, 1280 and 1920 px", async () => {
    await (await browser.$('[data-testid="session-item"] button')).click();
    await until(browser, async () => (await byTestId(browser, "session-header")).isDisplayed(), "a session's header");
    for (const width of [1024, 1280, 1920]) {
      await browser.setWindowSize(width, 800);
      await until(browser, async () => (await browser.execute(() => window.innerWidth)) === width, `the window at ${width} px`);
      const check = await browser.execute(() => {
        const bar = document.querySelector('[data-testid="session-header"]');
        if (!bar) return { ok: false, why: "no header" };
        const b = bar.getBoundingClientRect();
        // Every visible leaf-level child of the title and the tools: none overlaps another.
        const parts = [...bar.querySelectorAll(".title > *, .tools > *")]
          .map((el) => ({ el: el.className || el.tagName, r: el.getBoundingClientRect() }))
          .filter((p) => p.r.width > 0 && p.r.right <= b.right + 0.5 && p.r.left < b.right);
        const bad = [];
        for (let i = 0; i < parts.length; i++)
          for (let j = i + 1; j < parts.length; j++) {
            const a = parts[i].r;
            const c = parts[j].r;
            if (a.left < c.right - 0.5 && c.left < a.right - 0.5 && a.top < c.bottom && c.top < a.bottom) bad.push(`${parts[i].el} × ${parts[j].el}`);
          }
        const clipped = [...bar.querySelectorAll(".tools > *")].some((el) => el.getBoundingClientRect().right > b.right + 0.5);
        // The title is cut only once everything that gives way before it has (folder,
        // model, auto-switch, agent's name: squeeze level 4), or past its room (160 px).
        const title = bar.querySelector(".title");
        const text = bar.querySelector(".title-text");
        const range = document.createRange();
        range.selectNodeContents(text);
        const natural = range.getBoundingClientRect().width;
        const squeeze = Number(title.dataset.squeeze ?? 0);
        const titleCut = text.clientWidth + 1 < Math.min(natural, 160) && squeeze < 4;
        return {
          ok: bad.length === 0 && !clipped && b.height <= 56 && !titleCut,
          why: JSON.stringify({ bad, clipped, height: b.height, n: parts.length, squeeze, title: [text.clientWidth, text.scrollWidth, natural] }),
        };
      });
      assert.ok(check.ok, `header at ${width}px: ${check.why}`);
      await screenshot(browser, `shell-header-${width}`);
    }
    await browser.setWindowSize(1280, 800);
  });
});
