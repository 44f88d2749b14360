// The desktop app as a daily driver (issue 18), in its real WebView with the echo agent:
// dialogs answered from the keyboard, a queue you can edit (a removed prompt never runs),
// edit and retry, copy, find in a 10,000-call session, jump to the bottom, a sidebar of
// thousands with a workspace removed. scripts/e2e-app.sh seeds the big session and the
// small ones (WEFT_E2E_BIG_KEY, WEFT_E2E_BIG_DIR).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { join } from "node:path";
import {
  allByTestId,
  allTurnPrompts,
  byTestId,
  chooseAgent,
  closeApp,
  lastTurnText,
  launch,
  loopbackServer,
  phase,
  screenshot,
  send,
  setTheme,
  texts,
  until,
} from "./harness.mjs";

let browser;

async function newSession() {
  await (await byTestId(browser, "new-session")).click();
  await until(browser, async () => (await byTestId(browser, "empty-state")).isExisting(), "a new session");
}

const waitDone = (what, timeout) => until(browser, async () => (await phase(browser)) === "done", what, timeout);

const focusInDialog = () =>
  browser.execute(() => Boolean(document.activeElement?.closest('[data-testid="interaction-dialog"]')));

/** The turn whose prompt is `prompt` (the last such), as drawn now. */
async function turnIdOf(prompt) {
  return browser.execute((p) => {
    const turns = [...document.querySelectorAll('[data-testid="turn"]')].filter(
      (t) => t.querySelector('[data-testid="turn-prompt-text"]')?.textContent?.trim() === p,
    );
    return turns.at(-1)?.getAttribute("data-task-id") ?? null;
  }, prompt);
}

/** Sets the sidebar's search box with an input event (clearValue sends none). */
const typeSearch = (text) =>
  browser.execute((t) => {
    const input = document.querySelector('[data-testid="session-search"]');
    input.value = t;
    input.dispatchEvent(new Event("input", { bubbles: true }));
  }, text);

async function weftJson(args) {
  assert.ok(process.env.WEFT_BIN && process.env.WEFT_HOME_DIR, "WEFT_BIN and WEFT_HOME_DIR from scripts/e2e-app.sh");
  const { stdout } = await promisify(execFile)(process.env.WEFT_BIN, args, {
    env: { ...process.env, WEFT_HOME: process.env.WEFT_HOME_DIR },
    timeout: 60000,
  });
  return JSON.parse(stdout);
}

describe("Weft desktop app as a daily driver (echo agent)", () => {
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession();
  });

  it("answers dialogs from the keyboard: focus on open, Tab kept inside, d denies, Enter allows, 3 picks the third choice", async () => {
    await newSession();
    // Another suite of the run may have used another agent in this workspace last.
    await chooseAgent(browser, "echo");
    await send(browser, "permission please");
    let dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    await until(browser, focusInDialog, "the dialog to take focus");
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the dialog to take keys");
    assert.match(await (await byTestId(browser, "allow-once")).getText(), /A/);
    assert.match(await (await byTestId(browser, "deny")).getText(), /D/);
    for (let i = 0; i < 7; i++) await browser.keys("Tab");
    assert.ok(await focusInDialog(), "Tab keeps focus inside the dialog");
    await screenshot(browser, "10-permission-keys-light");
    // Back on the dialog itself, so Enter below is the primary choice, not a button's.
    await browser.execute(() => document.querySelector('[data-testid="interaction-dialog"]')?.focus());
    await browser.keys("d");
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("You denied the note"), "the denied write");
    await waitDone("the denied turn to finish");

    await send(browser, "permission again");
    dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    await until(browser, focusInDialog, "the dialog to take focus");
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the dialog to take keys");
    await browser.keys("Enter");
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("I wrote the note."), "the allowed write");
    await waitDone("the allowed turn to finish");

    await send(browser, "a question for you");
    dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    await until(browser, focusInDialog, "the question to take focus");
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the question to take keys");
    await browser.keys("3");
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("You picked blue."), "the third choice");
    await waitDone("the question turn to finish");
  });

  it("removes and reorders queued prompts; the removed one never runs (the kernel's queue, seen by the CLI too)", async () => {
    await newSession();
    const slow = "slow walk through the long quiet valley past the river and the old mill";
    await send(browser, slow);
    await until(browser, async () => (await phase(browser)) === "streaming", "the slow turn to stream");
    await (await byTestId(browser, "mode-queue")).click();
    for (const p of ["queued one", "queued two", "queued three"]) await send(browser, p);
    await until(browser, async () => (await texts(browser, "queued-prompt")).length === 3, "three waiting prompts");
    const key = await (await browser.$('[data-testid="session-item"][data-selected="true"]')).getAttribute("data-session-key");
    const removeOf = (text) => browser.$(`//li[@data-testid="queued-item"][.//span[@data-testid="queued-prompt" and text()="${text}"]]//button[@data-testid="queued-remove"]`);
    const upOf = (text) => browser.$(`//li[@data-testid="queued-item"][.//span[@data-testid="queued-prompt" and text()="${text}"]]//button[@data-testid="queued-up"]`);
    await (await removeOf("queued two")).click();
    await until(browser, async () => (await texts(browser, "queued-prompt")).join("|") === "queued one|queued three", "queued two removed");
    await (await upOf("queued three")).click();
    await until(browser, async () => (await texts(browser, "queued-prompt")).join("|") === "queued three|queued one", "queued three moved up");
    await screenshot(browser, "11-queue-edited-light");
    await (await byTestId(browser, "stop")).click();
    await until(
      browser,
      async () => (await phase(browser)) === "done" && (await lastTurnText(browser)).includes("Echo: queued one"),
      "the queued turns to run",
      60000,
    );
    assert.deepEqual(await allTurnPrompts(browser), [slow, "queued three", "queued one"]);
    const history = await weftJson(["history", key, "--json"]);
    assert.deepEqual(
      history.map((t) => t.prompt),
      [slow, "queued three", "queued one"],
      "the kernel's history has no turn of the removed prompt",
    );
  });

  it("retries a failed turn as a new turn", async () => {
    await send(browser, "crash please");
    await waitDone("the crashing turn to end");
    await until(browser, async () => (await turnIdOf("crash please")) !== null, "the crashed turn drawn");
    const failed = await turnIdOf("crash please");
    const retry = await browser.$(`[data-testid="turn-retry"][data-task-id="${failed}"]`);
    await retry.waitForDisplayed({ timeout: 10000 });
    await retry.click();
    await until(
      browser,
      async () => (await allTurnPrompts(browser)).filter((p) => p === "crash please").length === 2,
      "the retry as a second turn",
    );
    await waitDone("the retried turn to end");
  });

  it("edits a prompt and sends it as a new turn; the old one stays; ↑ recalls the last", async () => {
    await send(browser, "edit me");
    await waitDone("the turn to edit");
    await until(browser, async () => (await turnIdOf("edit me")) !== null, "the turn drawn");
    const id = await turnIdOf("edit me");
    await (await browser.$(`[data-testid="turn-edit"][data-task-id="${id}"]`)).click();
    const input = await byTestId(browser, "composer-input");
    await until(browser, async () => (await input.getValue()) === "edit me", "the prompt in the composer");
    await input.addValue(" again");
    await browser.keys("Enter");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: edit me again"), "the edited prompt's turn");
    await waitDone("the edited turn to end");
    const prompts = await allTurnPrompts(browser);
    assert.deepEqual(prompts.slice(-2), ["edit me", "edit me again"]);
    await input.click();
    await browser.keys("ArrowUp");
    await until(browser, async () => (await input.getValue()) === "edit me again", "↑ to recall the last prompt");
    await input.clearValue();
    await browser.execute((el) => {
      el.value = "";
      el.dispatchEvent(new Event("input", { bubbles: true }));
    }, input);
  });

  it("copies a reply", async () => {
    const copy = (await allByTestId(browser, "copy-reply")).at(-1);
    assert.ok(copy, "a copy button on the reply");
    await copy.click();
    await until(browser, async () => (await copy.getAttribute("data-copied")) === "true", "the copy to succeed");
    const pasted = await browser.executeAsync((done) => {
      if (!navigator.clipboard?.readText) return done(null);
      navigator.clipboard.readText().then(done, () => done(null));
    });
    if (pasted !== null) assert.match(pasted, /Echo: edit me again/);
  });

  it("opens a link through the opener plugin and an artifact in the editor; a remote image loads only when clicked", async () => {
    const opened = process.env.WEFT_E2E_OPENED;
    assert.ok(opened, "WEFT_E2E_OPENED from scripts/e2e-app.sh");
    const url = "https://example.com/weft-e2e?from=app&n=1";
    const images = await loopbackServer();
    const pic = `https://${images.origin}/p.png`;
    await send(browser, `see ${url} and ![pic](${pic})`);
    await waitDone("the turn with a link");
    const link = await browser.$(`[data-testid="turn-text"] a[href="${url}"]`);
    await link.waitForDisplayed({ timeout: 10000 });
    await link.click();
    await until(browser, () => existsSync(opened) && readFileSync(opened, "utf8").split("\n").includes(`url ${url}`), "the desktop's URL handler to get the link");
    // The window itself did not navigate away.
    assert.ok(await (await byTestId(browser, "app")).isExisting());

    const img = (await allByTestId(browser, "remote-image")).at(-1);
    assert.equal(await img.getAttribute("src"), null, "a remote image is not loaded");
    assert.equal(await img.getAttribute("data-remote-src"), pic);
    assert.deepEqual(images.seen.requests, [], "nor asked for");
    const load = (await allByTestId(browser, "load-image")).at(-1);
    await load.click();
    // Through the shell (the window's CSP loads no remote image itself), as data.
    await until(browser, async () => /^data:image\/png;base64,/.test((await img.getAttribute("src")) ?? ""), "the image to load when asked");
    assert.deepEqual(images.seen.requests, ["/p.png"]);
    await images.close();

    const artifact = (await allByTestId(browser, "artifact")).at(-1);
    const href = await artifact.getAttribute("href");
    assert.match(href, /^file:\/\//);
    await artifact.click();
    const path = decodeURIComponent(new URL(href).pathname);
    await until(browser, () => readFileSync(opened, "utf8").split("\n").includes(`file ${path}`), "the editor to get the artifact's path");
    await screenshot(browser, "13-links-light");
  });

  it("finds a word in turn 1 of a 10,000-call session (Ctrl+F) and scrolls to it", async () => {
    const key = process.env.WEFT_E2E_BIG_KEY;
    assert.ok(key, "WEFT_E2E_BIG_KEY from scripts/e2e-app.sh");
    // The sidebar draws only the rows near its viewport, and how many rows the other
    // suites' workspaces put above the seeded folder varies: find the session by its
    // title, as a user would, then show every session again.
    const search = await byTestId(browser, "session-search");
    await search.setValue("10000 tool calls");
    const item = await browser.$(`[data-testid="session-item"][data-session-key="${key}"] button`);
    await item.waitForExist({ timeout: 30000 });
    await item.click();
    await typeSearch("");
    await until(browser, async () => (await lastTurnText(browser)).includes("Ran 10000 tool calls."), "the big session open", 60000);
    await send(browser, "a second turn");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: a second turn"), "turn 2", 60000);
    await waitDone("turn 2 to end", 60000);
    assert.equal(await browser.$('[data-testid="tool-row"][data-tool-id="call-4321"]').isExisting(), false, "not drawn before find");
    await browser.keys(["Control", "f"]);
    const find = await byTestId(browser, "find-input");
    await find.waitForDisplayed({ timeout: 10000 });
    await find.setValue("file_4321.rs");
    await until(browser, async () => (await (await byTestId(browser, "find-count")).getText()) === "1 of 1", "one hit");
    await until(
      browser,
      () =>
        browser.execute(() => {
          const row = document.querySelector('[data-testid="tool-row"][data-tool-id="call-4321"]');
          const list = document.querySelector('[data-testid="transcript"]');
          if (!row || !list) return false;
          const r = row.getBoundingClientRect();
          const l = list.getBoundingClientRect();
          return r.top >= l.top && r.bottom <= l.bottom && Boolean(row.closest(".vrow.marked"));
        }),
      "the hit in turn 1 scrolled into view and marked",
    );
    await screenshot(browser, "12-find-in-session-light");
    await browser.keys("Escape");
    await until(browser, async () => !(await (await byTestId(browser, "find-bar")).isExisting()), "find closed");
  });

  it("offers jump-to-bottom while a turn streams and you scrolled up", async () => {
    await send(browser, "slow and steady through the long session, word after word");
    await until(browser, async () => (await phase(browser)) === "streaming", "the slow turn to stream");
    const list = await byTestId(browser, "transcript");
    await browser.execute((el) => el.scrollTo(0, el.scrollTop - 2000), list);
    const jump = await byTestId(browser, "jump-to-bottom");
    await jump.waitForDisplayed({ timeout: 10000 });
    assert.match(await jump.getAttribute("class"), /live/);
    await jump.click();
    await until(
      browser,
      () => browser.execute((el) => el.scrollHeight - el.scrollTop - el.clientHeight < 60, list),
      "the transcript at the bottom",
    );
    await until(browser, async () => !(await jump.isExisting()), "the jump button gone while following");
    await (await byTestId(browser, "stop")).click();
    await waitDone("the slow turn to stop");
  });

  it("lists thousands of sessions drawing only a few rows, and removes a workspace from the sidebar", async () => {
    const list = await byTestId(browser, "session-list");
    const rows = Number(await list.getAttribute("data-rows"));
    assert.ok(rows > 2000, `sidebar rows: ${rows}`);
    const drawn = (await allByTestId(browser, "session-item")).length;
    assert.ok(drawn > 0 && drawn < 200, `drawn session rows: ${drawn}`);
    const dir = process.env.WEFT_E2E_BIG_DIR;
    await (await byTestId(browser, "new-session")).click();
    const remove = await browser.$(`[data-testid="workspace"][data-workdir="${dir}"] [data-testid="workspace-remove"]`);
    await remove.waitForExist({ timeout: 10000 });
    await remove.click();
    await until(browser, async () => !(await browser.$(`[data-testid="workspace"][data-workdir="${dir}"]`).isExisting()), "the workspace gone");
    await until(browser, async () => Number(await list.getAttribute("data-rows")) < 100, "its sessions gone from the list");
  });

  it("keeps the header on one line at 1280–1920 px, usage in a chip with details on hover", async () => {
    await newSession();
    await send(browser, "please read the whole repository and explain every module in detail with examples, then propose refactors for each one");
    await waitDone("the long-titled turn");
    for (const width of [1280, 1600, 1920]) {
      await browser.setWindowSize(width, 800);
      await until(browser, async () => (await browser.execute(() => window.innerWidth)) === width, `the window at ${width} px`);
      const fit = await browser.execute(() => {
        const bar = document.querySelector(".topbar");
        const phase = document.querySelector('[data-testid="session-phase"]');
        const chip = document.querySelector('[data-testid="usage-chip"]');
        if (!bar || !phase || !chip) return { ok: false, why: "missing" };
        const b = bar.getBoundingClientRect();
        const p = phase.getBoundingClientRect();
        const c = chip.getBoundingClientRect();
        return {
          ok: b.height <= 56 && p.right <= c.left && p.width > 0 && c.right <= b.right && p.top >= b.top && p.bottom <= b.bottom,
          why: JSON.stringify({ bar: b.height, phase: [p.left, p.right], chip: [c.left, c.right], barRight: b.right }),
        };
      });
      assert.ok(fit.ok, `header at ${width}px: ${fit.why}`);
      assert.equal(await phase(browser), "done");
    }
    await browser.setWindowSize(1280, 800);
    await (await byTestId(browser, "usage-chip-button")).moveTo();
    await until(browser, () => browser.$('[data-testid="usage-details"]').isDisplayed(), "the usage details on hover");
    await screenshot(browser, "14-header-usage-chip-light");
  });

  it("remembers the last choices per workspace, the window size, the sidebar width and the theme across windows", async () => {
    await newSession();
    const effort = await byTestId(browser, "effort-picker");
    await until(browser, () => browser.$('[data-testid="effort-picker"] option[value="high"]').isExisting(), "the echo agent's efforts");
    await effort.selectByVisibleText("high");
    await send(browser, "remember my effort");
    await waitDone("the turn with effort high");
    const edge = await byTestId(browser, "sidebar-edge");
    await edge.click();
    for (let i = 0; i < 3; i++) await browser.keys("ArrowRight");
    const width = Number(await edge.getAttribute("aria-valuenow"));
    assert.equal(width, 270 + 48);
    await setTheme(browser, "dark");
    await browser.setWindowSize(1100, 720);
    const size = await browser.execute(() => [window.innerWidth, window.innerHeight]);
    const kept = join(process.env.WEFT_HOME_DIR ?? "", "window.json");
    // The shell keeps the window's own size (the page is that less the menu bar).
    await until(
      browser,
      () => existsSync(kept) && JSON.parse(readFileSync(kept, "utf8")).width === 1100,
      "the window size kept",
    );

    browser = await closeApp(browser);
    browser = await launch();
    assert.deepEqual(await browser.execute(() => [window.innerWidth, window.innerHeight]), size, "the window size");
    assert.equal(Number(await (await byTestId(browser, "sidebar-edge")).getAttribute("aria-valuenow")), width, "the sidebar width");
    assert.equal(await browser.execute(() => document.documentElement.dataset.theme), "dark", "the theme");
    await (await byTestId(browser, "new-session")).click();
    await until(browser, async () => (await (await byTestId(browser, "effort-picker")).getValue()) === "high", "the remembered effort");
    assert.equal(await (await byTestId(browser, "agent-picker")).getValue(), "echo");
    await screenshot(browser, "15-remembered-dark");
    await setTheme(browser, "system");
    await browser.setWindowSize(1280, 800);
    await until(browser, () => existsSync(kept) && JSON.parse(readFileSync(kept, "utf8")).width === 1280, "the default size kept again");
  });
});
