// Drives the built desktop app in its real WebView: tauri-driver (started by
// scripts/e2e-app.sh, with WebKitWebDriver) under Xvfb, WebdriverIO as the client.
// Environment: WEFT_APP_BIN (the binary), WEFT_E2E_PORT (tauri-driver's port),
// WEFT_WORKSPACE_DIR (passed as --workspace), SCREENSHOT_DIR.
import assert from "node:assert/strict";
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { createServer } from "node:https";
import { dirname, join } from "node:path";
import { remote } from "webdriverio";

export const SCREENSHOT_DIR = process.env.SCREENSHOT_DIR ?? "artifacts/screenshots";
const TIMEOUT = Number(process.env.WEFT_E2E_TIMEOUT ?? 30000);

/** Starts the app on `workspace` (default: the run's workspace). */
export async function launch({ workspace = process.env.WEFT_WORKSPACE_DIR } = {}) {
  const application = process.env.WEFT_APP_BIN;
  if (!application) throw new Error("WEFT_APP_BIN is not set (run scripts/e2e-app.sh)");
  const args = workspace ? ["--workspace", workspace] : [];
  const browser = await remote({
    hostname: "127.0.0.1",
    port: Number(process.env.WEFT_E2E_PORT ?? 4444),
    logLevel: "warn",
    connectionRetryTimeout: 60000,
    capabilities: {
      browserName: "wry",
      // WebKitWebDriver speaks classic WebDriver only; WebdriverIO would ask for BiDi.
      "wdio:enforceWebDriverClassic": true,
      "tauri:options": { application, args },
    },
  });
  browser.setTimeout({ implicit: 0 });
  // A debug build's first start on a busy 2-core machine can take a while.
  await until(browser, async () => (await browser.$('[data-testid="app"]').getAttribute("data-ready")) === "true", "the app is ready", 90000);
  return browser;
}

/** Live processes of this run (their environment names its folder) whose name is `comm`. */
export function processesOfRun(comm) {
  const run = dirname(process.env.WEFT_WORKSPACE_DIR ?? "/nonexistent");
  return readdirSync("/proc")
    .filter((p) => /^\d+$/.test(p) && alive(p))
    .filter((p) => {
      try {
        return readFileSync(`/proc/${p}/comm`, "utf8").trim() === comm && readFileSync(`/proc/${p}/environ`, "utf8").includes(run);
      } catch {
        return false;
      }
    })
    .map(Number);
}

/** The process exists and is not a zombie. */
export function alive(pid) {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}

/**
 * Closes the window through the WebDriver session and waits until the app process has
 * exited (its kernel, `weft daemon`, goes on). Returns null, for `browser = await closeApp(browser)`.
 */
export async function closeApp(browser) {
  const apps = processesOfRun("weft-app");
  assert.ok(apps.length > 0, "the app process");
  await browser.deleteSession();
  const deadline = Date.now() + 20000;
  while (Date.now() < deadline && apps.some(alive)) await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(apps.filter(alive), [], "the app exited");
  return null;
}

/** Polls `check` until it is true, with a deadline (never a fixed sleep). */
export async function until(browser, check, what, timeout = TIMEOUT) {
  let last;
  try {
    await waitUntil(browser, check, what, timeout, (e) => (last = e));
  } catch (error) {
    await screenshot(browser, `timeout-${what.replace(/[^a-z0-9]+/gi, "-").slice(0, 60)}`).catch(() => {});
    throw new Error(`${error.message}${last ? ` (${last.message})` : ""}`);
  }
}

async function waitUntil(browser, check, what, timeout, onError) {
  await browser.waitUntil(
    async () => {
      try {
        return Boolean(await check());
      } catch (e) {
        onError(e);
        return false;
      }
    },
    { timeout, interval: 100, timeoutMsg: `timed out waiting for ${what}` },
  );
}

export const byTestId = (browser, id) => browser.$(`[data-testid="${id}"]`);
export const allByTestId = (browser, id) => browser.$$(`[data-testid="${id}"]`);

export async function texts(browser, id) {
  const els = await allByTestId(browser, id);
  const out = [];
  for (const el of els) out.push(await el.getText());
  return out;
}

/**
 * Picks `id` in the agent picker of a new session. A new session starts with the agent
 * last used in its workspace, so a suite that needs one says so.
 */
export async function chooseAgent(browser, id) {
  const picker = await byTestId(browser, "agent-picker");
  await until(browser, async () => (await browser.$(`[data-testid="agent-picker"] option[data-agent="${id}"]`)).isEnabled(), `${id} to be listed as installed`);
  if ((await picker.getValue()) !== id) await picker.selectByAttribute("data-agent", id);
  await until(browser, async () => (await picker.getValue()) === id, `the ${id} agent to be chosen`);
}

/** Types into the composer and presses Enter. */
export async function send(browser, text) {
  const input = await byTestId(browser, "composer-input");
  await input.waitForDisplayed({ timeout: TIMEOUT });
  await input.click();
  await input.setValue(text);
  await until(browser, async () => (await input.getValue()) === text, `the composer to hold "${text}"`);
  await browser.keys("Enter");
  await until(browser, async () => (await input.getValue()) === "", "the composer to clear after sending");
}

/**
 * Sends `prompt` to the session `key` the way the composer does, through the shell's
 * `weft_request`, while the window shows whatever it shows (the composer would need
 * the session in view).
 */
export async function promptSession(browser, key, prompt) {
  await browser.execute(
    (sessionKey, text) =>
      window.__TAURI_INTERNALS__.invoke("weft_request", {
        request: { type: "prompt", prompt: text, sessionKey, agent: null, workdir: null, model: null, effort: null, attachments: [], account: null, pack: null, worktree: null },
      }),
    key,
    prompt,
  );
}

/** The run's desktop notification server (dunst, started by scripts/e2e-app.sh). */
export const notifying = Boolean(process.env.WEFT_E2E_NOTIFY_BUS);

function dunstctl(...args) {
  return execFileSync("dunstctl", args, { env: { ...process.env, DBUS_SESSION_BUS_ADDRESS: process.env.WEFT_E2E_NOTIFY_BUS } }).toString();
}

/** The notifications closed or clicked so far, newest first. */
function notificationHistory() {
  return JSON.parse(dunstctl("history")).data[0].map((n) => ({ summary: n.summary.data, body: n.body.data, appname: n.appname.data }));
}

/**
 * Has the session `key` ask (`prompt`) while the window shows the Library, waits for
 * the desktop notification and clicks it (dunst's default action, what a click on it
 * does; the run's dunst shows only questions: scripts/e2e-app.sh), and waits for the
 * click to open the session. Returns the notification, found in the history by its
 * `summary` among those raised since.
 */
export async function askWhileAway(browser, key, prompt, summary) {
  dunstctl("close-all");
  const seen = notificationHistory().length;
  await browser.execute(() => (window.location.hash = "#/library"));
  await until(browser, async () => (await browser.$('[data-testid="library-view"]')).isDisplayed(), "the library shown");
  await promptSession(browser, key, prompt);
  await until(browser, async () => dunstctl("count", "displayed").trim() !== "0", `"${summary}" notified`, 60000);
  dunstctl("action", "0");
  // Weft does not close a notification once clicked (the desktop does, on a click):
  // closed, it is in the history to read.
  dunstctl("close-all");
  let notice;
  await until(browser, async () => {
    const all = notificationHistory();
    notice = all.slice(0, all.length - seen).find((n) => n.summary === summary);
    return notice !== undefined;
  }, `"${summary}" clicked`);
  await until(browser, async () => (await browser.execute(() => location.hash)) === `#/s/${encodeURIComponent(key)}`, "the notification's click opening the session");
  return notice;
}

export async function lastTurnText(browser) {
  const all = await texts(browser, "turn-text");
  return all.at(-1) ?? "";
}

export async function phase(browser) {
  return (await byTestId(browser, "session-phase")).getText();
}

export async function screenshot(browser, name) {
  mkdirSync(SCREENSHOT_DIR, { recursive: true });
  // WebKitWebDriver takes the screenshot at the page's next paint. Drawing without
  // compositing (the app's choice on a machine without a GPU), an idle page does not
  // paint again and the request hangs: keep one invisible pixel changing meanwhile.
  await browser.execute(() => {
    const dot = document.createElement("div");
    dot.setAttribute("aria-hidden", "true");
    dot.style.cssText = "position:fixed;right:0;bottom:0;width:1px;height:1px;pointer-events:none;opacity:0.01";
    document.body.append(dot);
    let on = true;
    const tick = () => {
      if (!on) return;
      dot.style.opacity = dot.style.opacity === "0.01" ? "0.02" : "0.01";
      requestAnimationFrame(tick);
    };
    requestAnimationFrame(tick);
    window.__stopPaintDot = () => {
      on = false;
      dot.remove();
    };
  });
  try {
    await browser.saveScreenshot(join(SCREENSHOT_DIR, `${name}.png`));
  } finally {
    await browser.execute(() => window.__stopPaintDot?.());
  }
}

export async function setTheme(browser, theme) {
  const toggle = await byTestId(browser, "theme-toggle");
  const label = () => toggle.getAttribute("aria-label");
  for (let i = 0; i < 3 && (await label()) !== `Theme: ${theme}`; i++) {
    const before = await label();
    // Clicked by script: a modal dialog's backdrop may cover it (screenshots of dialogs).
    await browser.execute((el) => el.click(), toggle);
    await until(browser, async () => (await label()) !== before, "the theme to change");
  }
  assert.equal(await label(), `Theme: ${theme}`);
  // Let the new colours paint before a screenshot.
  await browser.execute(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
}

/**
 * Every turn's prompt in the selected session, in order. The transcript is virtualized
 * (only rows near the viewport exist), so this scrolls it from top to bottom.
 */
export async function allTurnPrompts(browser) {
  // The transcript is virtualized: scroll through it and collect every turn with its
  // position in the content, then order by position (rows still on screen from before
  // a scroll may be seen first, so the order seen is not the order shown).
  const seen = new Map();
  const list = await byTestId(browser, "transcript");
  const height = await browser.execute((el) => el.scrollHeight, list);
  for (let y = 0; ; y += 300) {
    await browser.execute((el, top) => el.scrollTo(0, top), list, y);
    await browser.execute(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    const rows = await browser.execute((el) => {
      const base = el.getBoundingClientRect().top - el.scrollTop;
      return [...el.querySelectorAll('[data-testid="turn"]')].map((turn) => ({
        id: turn.getAttribute("data-task-id"),
        top: turn.getBoundingClientRect().top - base,
        text: turn.querySelector('[data-testid="turn-prompt-text"]')?.textContent?.trim() ?? "",
      }));
    }, list);
    for (const row of rows) if (!seen.has(row.id)) seen.set(row.id, row);
    if (y >= height) break;
  }
  await browser.execute((el) => el.scrollTo(0, el.scrollHeight), list);
  return [...seen.values()].sort((a, b) => a.top - b.top).map((row) => row.text);
}

/** A 1×1 PNG. */
export const PNG = Buffer.from(
  "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8BQDwAEhQGAhKmMIQAAAABJRU5ErkJggg==",
  "base64",
);

/**
 * An https server on loopback with the run's certificate (scripts/e2e-app.sh makes the
 * app trust its authority) that serves PNG for every path and counts every TCP
 * connection, whether it then speaks TLS, plain HTTP or nothing: `connections` is what
 * reached it, `requests` the paths it was asked for. `close()` stops it.
 */
export async function loopbackServer() {
  const cert = process.env.WEFT_E2E_TLS_CERT;
  const key = process.env.WEFT_E2E_TLS_KEY;
  if (!cert || !key) throw new Error("WEFT_E2E_TLS_CERT and WEFT_E2E_TLS_KEY from scripts/e2e-app.sh");
  const seen = { connections: 0, requests: [] };
  const server = createServer({ cert: readFileSync(cert), key: readFileSync(key) }, (req, res) => {
    seen.requests.push(req.url);
    res.writeHead(200, { "content-type": "image/png", "content-length": PNG.length });
    res.end(PNG);
  });
  server.on("connection", () => (seen.connections += 1));
  // A plain-HTTP or broken handshake still counts (above); it must not crash the test.
  server.on("tlsClientError", () => {});
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address();
  return {
    seen,
    origin: `127.0.0.1:${port}`,
    close: () =>
      new Promise((resolve) => {
        server.close(resolve);
        server.closeAllConnections();
      }),
  };
}
