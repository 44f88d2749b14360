// The UI on a phone, over TLS off loopback, end to end: headless Chromium at a phone's
// viewport (touch, mobile) opens the pairing link `weft serve --print-token` printed
// for a non-loopback address, the daemon's self-signed certificate accepted by its key
// fingerprint alone (Chromium's --ignore-certificate-errors-spki-list, the browser's
// form of pinning), and works with the echo agent: the sessions list, a session, a
// permission answered by a tap, the reply, the inbox. Run by scripts/e2e-phone.sh
// (inside a network namespace with no route out), which sets WEFT_PAIR_URL,
// WEFT_FINGERPRINT, WEFT_WORKSPACE_DIR and SCREENSHOT_DIR.
import assert from "node:assert/strict";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { chromium } from "playwright-core";

const PAIR_URL = process.env.WEFT_PAIR_URL;
const FINGERPRINT = process.env.WEFT_FINGERPRINT ?? "";
const WORKSPACE = process.env.WEFT_WORKSPACE_DIR ?? "";
const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? "artifacts/screenshots";
const CHROMIUM = process.env.WEFT_CHROMIUM ?? "/usr/bin/chromium";
const TIMEOUT = Number(process.env.WEFT_E2E_TIMEOUT ?? 30000);
/** A phone: 390×844 CSS pixels at 3×, touch, a mobile browser. */
const PHONE = { viewport: { width: 390, height: 844 }, deviceScaleFactor: 3, isMobile: true, hasTouch: true };

let browser;
let page;
const pageErrors = [];

async function screenshot(name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOT_DIR, `phone-${name}.png`) });
}

/** Polls `check` until it is true, with a deadline; a screenshot when it times out. */
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
      // What the page went through, so a failure says why (a blank page once, in CI).
      const seen = pageErrors.length ? `; the page saw: ${pageErrors.join(" | ")}` : "; no page errors or failed requests";
      throw new Error(`timed out waiting for ${what}${last ? ` (${last.message})` : ""}${seen}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

const byTestId = (id) => page.getByTestId(id);

describe("Weft on a phone (TLS off loopback, pinned by fingerprint)", { skip: PAIR_URL ? false : "run by scripts/e2e-phone.sh" }, () => {
  before(async () => {
    assert.match(PAIR_URL, /^https:\/\/10\./, "a non-loopback https address");
    assert.equal(FINGERPRINT.length, 44, `a fingerprint: ${FINGERPRINT}`);
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: [`--ignore-certificate-errors-spki-list=${FINGERPRINT}`],
    });
    const context = await browser.newContext(PHONE);
    page = await context.newPage();
    page.on("pageerror", (e) => pageErrors.push(`pageerror: ${e.message}`));
    page.on("console", (m) => {
      if (m.type() === "error") pageErrors.push(`console: ${m.text()}`);
    });
    page.on("requestfailed", (r) => pageErrors.push(`requestfailed: ${r.url()} ${r.failure()?.errorText ?? ""}`));
    page.on("response", (r) => {
      if (r.status() >= 400) pageErrors.push(`response ${r.status()}: ${r.url()}`);
    });
  });
  after(async () => {
    await browser?.close();
  });

  it("refuses the self-signed certificate without its fingerprint", async () => {
    const plain = await chromium.launch({ executablePath: CHROMIUM, headless: true });
    try {
      const other = await plain.newPage();
      await assert.rejects(other.goto(PAIR_URL.split("#")[0], { timeout: TIMEOUT }), /ERR_CERT/);
    } finally {
      await plain.close();
    }
  });

  it("pairs from the link: connected, the sessions list first, the server's fingerprint shown", async () => {
    await page.goto(`${PAIR_URL}&workspace=${encodeURIComponent(WORKSPACE)}`);
    await until(async () => (await byTestId("app").getAttribute("data-ready")) === "true", "the page to be ready", 60000);
    assert.equal(await byTestId("connection-banner").count(), 0, "connected");
    assert.ok(!page.url().includes("token"), `the address bar still holds the token: ${page.url()}`);
    assert.ok(await byTestId("sidebar").isVisible(), "the sessions list fills the screen");
    assert.ok(!(await page.locator("main.main").isVisible()), "no session beside the list on a phone");
    await until(async () => (await byTestId("tls-fingerprint-value").textContent()) === FINGERPRINT, "the fingerprint on the page");
    // The same as the pairing link's: no warning.
    assert.equal(await byTestId("tls-fingerprint").getAttribute("role"), "status");
    // One column: nothing wider than the screen.
    const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `the page is ${overflow} px wider than the phone`);
    // Installable: a manifest of the right type, with its icons.
    const manifest = await page.evaluate(async () => {
      const href = document.querySelector('link[rel="manifest"]')?.getAttribute("href");
      const answer = await fetch(href);
      return { type: answer.headers.get("content-type"), body: await answer.json() };
    });
    assert.match(manifest.type ?? "", /application\/manifest\+json/);
    assert.equal(manifest.body.display, "standalone");
    assert.ok(manifest.body.icons.some((i) => i.sizes === "512x512"), "a 512 px icon");
    await screenshot("01-paired");
  });

  it("opens a new session, answers its permission by a tap and sees the reply", async () => {
    await byTestId("new-session").tap();
    const input = byTestId("composer-input");
    await input.waitFor({ state: "visible", timeout: TIMEOUT });
    assert.ok(!(await byTestId("sidebar").isVisible()), "the list gave way to the session");
    await input.tap();
    await input.fill("permission please");
    await input.press("Enter");
    const dialog = byTestId("interaction-dialog");
    await dialog.waitFor({ state: "visible", timeout: TIMEOUT });
    assert.equal(await dialog.getAttribute("data-kind"), "permission");
    const allow = byTestId("allow-once");
    const box = await allow.boundingBox();
    assert.ok(box && box.height >= 44 && box.width >= 300, `a thumb-sized answer: ${JSON.stringify(box)}`);
    await screenshot("02-permission");
    await allow.tap();
    await dialog.waitFor({ state: "detached", timeout: TIMEOUT });
    await until(async () => ((await byTestId("turn-text").allTextContents()).at(-1) ?? "").includes("I wrote the note."), "the reply");
    await until(async () => (await byTestId("session-phase").textContent()) === "done", "the turn to finish");
    assert.ok(existsSync(join(WORKSPACE, ".weft", "echo-note.md")), "the note written");
    await screenshot("03-reply");
  });

  it("goes back to the list (the session in it) and to the inbox", async () => {
    await byTestId("phone-sessions").tap();
    await until(async () => await byTestId("sidebar").isVisible(), "the list again");
    assert.ok((await byTestId("session-item").count()) >= 1, "the session listed");
    await byTestId("rail-inbox").tap();
    await until(async () => (await byTestId("app").getAttribute("data-place")) === "inbox", "the inbox");
    assert.ok(await page.locator("main.main").isVisible(), "the inbox fills the screen");
    await screenshot("04-inbox");
    // The page's own errors (failed requests are kept for a timeout's message).
    assert.deepEqual(pageErrors.filter((e) => /^(pageerror|console)/.test(e) && !/WebSocket/.test(e)), [], "errors in the page");
  });
});
