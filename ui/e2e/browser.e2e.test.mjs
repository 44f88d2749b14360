// The UI in a browser against the daemon's WebSocket, end to end: headless Chromium
// (Debian's, driven by playwright-core) opens the page `weft serve` printed, with the
// token in its fragment, and works with the echo agent: a permission answered, a
// reload, the agent's terminal, the daemon stopping. Run by scripts/e2e-browser.sh,
// which sets WEFT_UI_URL, WEFT_WORKSPACE_DIR, WEFT_BIN, WEFT_HOME and SCREENSHOT_DIR.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { chromium } from "playwright-core";

const UI_URL = process.env.WEFT_UI_URL;
const WORKSPACE = process.env.WEFT_WORKSPACE_DIR ?? "";
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? "artifacts/screenshots";
const CHROMIUM = process.env.WEFT_CHROMIUM ?? "/usr/bin/chromium";
const TIMEOUT = Number(process.env.WEFT_E2E_TIMEOUT ?? 30000);

let browser;
let page;
/** Errors the page threw or logged; none is expected. */
const pageErrors = [];

async function screenshot(name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `browser-${name}.png`) });
}

/** Polls `check` until it is true, with a deadline (never a fixed sleep); a screenshot when it times out. */
async function until(check, what, timeout = TIMEOUT) {
  const deadline = Date.now() + timeout;
  let last;
  for (;;) {
    try {
      if (await check()) return;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline) {
      await screenshot(`timeout-${what.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}`).catch(() => {});
      throw new Error(`timed out waiting for ${what}${last ? ` (${last.message})` : ""}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const byTestId = (id) => page.getByTestId(id);
const lastTurnText = async () => ((await byTestId("turn-text").allTextContents()).at(-1) ?? "");
const phase = () => byTestId("session-phase").textContent();

async function ready() {
  await until(async () => (await byTestId("app").getAttribute("data-ready")) === "true", "the page to be ready", 60000);
}

async function send(text) {
  const input = byTestId("composer-input");
  await input.fill(text);
  await input.press("Enter");
  await until(async () => (await input.inputValue()) === "", "the composer to clear after sending");
}

describe("Weft in a browser (echo agent over the daemon's WebSocket)", { skip: UI_URL ? false : "run by scripts/e2e-browser.sh" }, () => {
  before(async () => {
    browser = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
    });
  });
  after(async () => {
    await browser?.close();
  });

  it("connects with the token from the address, then takes the token out of the address bar", async () => {
    assert.match(UI_URL, /#token=/);
    await page.goto(UI_URL);
    await ready();
    assert.equal(await byTestId("error-banner").count(), 0, "no error banner");
    assert.equal(await byTestId("connection-banner").count(), 0, "connected");
    assert.ok(!page.url().includes("token"), `the address bar still holds the token: ${page.url()}`);
    // No folder dialog and no log file in a browser.
    assert.equal(await byTestId("open-log").count(), 0);
    await until(async () => (await byTestId("agent-picker").inputValue()) === "echo", "the echo agent to be chosen");
    await screenshot("01-start");
  });

  it("opens a workspace typed into the path field", async () => {
    await byTestId("open-workspace").click();
    const field = byTestId("workspace-path");
    await field.waitFor({ state: "visible", timeout: TIMEOUT });
    await field.fill(WORKSPACE);
    await screenshot("02-workspace-path");
    await field.press("Enter");
    await field.waitFor({ state: "detached", timeout: TIMEOUT });
    await until(async () => (await byTestId("session-title").textContent()).includes(`New session in ${WORKSPACE}`), "the new-session title");
    const group = page.locator(`[data-testid="workspace"][data-workdir="${WORKSPACE}"]`);
    assert.equal(await group.count(), 1, "the workspace in the sidebar");
  });

  it("prompts echo, answers its permission dialog and sees the reply", async () => {
    await send("permission please");
    const dialog = byTestId("interaction-dialog");
    await dialog.waitFor({ state: "visible", timeout: TIMEOUT });
    assert.equal(await dialog.getAttribute("data-kind"), "permission");
    assert.equal(await byTestId("permission-tool").textContent(), "write_note");
    assert.match(await byTestId("permission-input").textContent(), /echo-note\.md/);
    await until(async () => (await page.locator('[data-testid="session-item"] [data-testid="needs-answer"]').count()) === 1, "the waiting badge");
    await screenshot("03-permission");
    await byTestId("allow-once").click();
    await dialog.waitFor({ state: "detached", timeout: TIMEOUT });
    await until(async () => (await lastTurnText()).includes("I wrote the note."), "the allowed write");
    await until(async () => (await phase()) === "done", "the turn to finish");
    assert.ok(existsSync(join(WORKSPACE, ".weft", "echo-note.md")), "the note written in the typed workspace");
    assert.equal(await byTestId("needs-answer").count(), 0, "no badge once answered");
    await screenshot("04-reply");
  });

  it("after a reload connects again (the token kept for the tab) and shows the turn from history", async () => {
    const key = await page.locator('[data-testid="session-item"][data-selected="true"]').getAttribute("data-session-key");
    assert.ok(key?.startsWith("echo:"), `selected session ${key}`);
    await page.reload();
    await ready();
    assert.equal(await byTestId("connection-banner").count(), 0, "connected after the reload");
    const item = page.locator(`[data-testid="session-item"][data-session-key="${key}"] button`);
    await item.waitFor({ timeout: TIMEOUT });
    await item.click();
    await until(async () => (await lastTurnText()).includes("I wrote the note."), "the turn from history");
    assert.deepEqual(await byTestId("turn-prompt-text").allTextContents().then((t) => t.map((s) => s.trim())), ["permission please"]);
  });

  it("runs the agent's terminal over the same WebSocket: types, re-attaches without duplicates, closes", async () => {
    const bufferText = () => page.evaluate(() => document.querySelector('[data-testid="terminal-pane"]')?.bufferText?.() ?? "");
    const count = (text, needle) => text.split(needle).length - 1;
    const type = async (line) => {
      await page.locator('[data-testid="terminal-pane"] .xterm-helper-textarea').focus();
      await page.keyboard.type(line);
      await page.keyboard.press("Enter");
    };
    const key = await page.locator('[data-testid="session-item"][data-selected="true"]').getAttribute("data-session-key");
    await byTestId("terminal-open").click();
    await until(async () => (await bufferText()).includes("echo>"), "the echo prompt in xterm");
    await type("hi from the browser");
    await until(async () => (await bufferText()).includes("Echo: hi from the browser"), "the echoed line");
    await screenshot("05-terminal");
    // Another session shown and back: the pane detaches, then re-attaches from the screen.
    await byTestId("new-session").click();
    await byTestId("terminal-pane").waitFor({ state: "detached", timeout: TIMEOUT });
    await page.locator(`[data-testid="session-item"][data-session-key="${key}"] button`).click();
    await until(async () => (await bufferText()).includes("Echo: hi from the browser"), "the restored screen");
    await type("second line");
    await until(async () => (await bufferText()).includes("Echo: second line"), "live output after the re-attach");
    const text = await bufferText();
    assert.equal(count(text, "Echo: hi from the browser"), 1, `no duplicated output:\n${text}`);
    assert.equal(count(text, "Echo: second line"), 1, `no duplicated output:\n${text}`);
    await byTestId("terminal-close").click();
    await byTestId("terminal-pane").waitFor({ state: "detached", timeout: TIMEOUT });
    await until(async () => (await byTestId("terminal-open").count()) === 1, "the Terminal button again");
    assert.equal(await byTestId("error-banner").count(), 0, "no error banner");
  });

  it("lists the user's own Claude session in the Library, finds it by a word of a reply, opens its turns, draws usage", async () => {
    await byTestId("rail-library").click();
    const row = page.locator('[data-testid="library-row"][data-session="claude:2beba834-ea9e-4d74-9e9f-b4a9f23cf57b"]');
    // The list is drawn again as the first index reports progress: read the row in the
    // same check that finds it, not after (it may have been replaced in between).
    await until(
      async () => (await row.count()) === 1 && (await row.getAttribute("data-origin", { timeout: 1000 })) === "native",
      "the native session in the library",
    );
    await byTestId("library-search").fill("hi-from-tool");
    await until(async () => (await byTestId("library-hit").count()) >= 1, "a search hit");
    assert.match(await byTestId("library-hits").textContent(), /«hi-from-tool»/);
    await page.locator('[data-testid="library-hit"][data-session="claude:2beba834-ea9e-4d74-9e9f-b4a9f23cf57b"]').click();
    await until(async () => (await byTestId("library-turn").count()) === 3, "the transcript's three turns");
    assert.match(await byTestId("library-transcript").textContent(), /USE_TOOL turn two/);
    await byTestId("rail-usage").click();
    await until(async () => (await byTestId("usage-chart").getAttribute("data-drawn")) === "true", "the usage chart");
    await until(async () => (await byTestId("usage-row").count()) >= 1, "a usage row");
    await screenshot("library");
    await byTestId("rail-session").click();
  });

  it("says so when the daemon stops, with the reason the daemon gave", async () => {
    const bin = process.env.WEFT_BIN;
    assert.ok(bin, "WEFT_BIN is set");
    await promisify(execFile)(bin, ["daemon", "stop"], { env: process.env, timeout: 60000 });
    await until(async () => (await byTestId("connection-banner").count()) === 1, "the connection banner");
    // The daemon says why before its socket closes, and the banner keeps that reason
    // (not the bare close) while the page tries to reconnect.
    await until(
      async () => (await byTestId("connection-banner").textContent()).includes("stopped by `weft daemon stop` or the app's Quit"),
      "the banner to give the daemon's reason",
    );
    assert.match(await byTestId("connection-banner").textContent(), /^\s*Not connected to Weft: stopped by `weft daemon stop` or the app's Quit\./);
    assert.equal(await byTestId("error-banner").count(), 0, "one banner for the lost link, not one per verb lost with it");
    await screenshot("06-daemon-stopped");
    assert.deepEqual(pageErrors.filter((e) => !/WebSocket/.test(e)), [], "errors in the page");
  });
});
