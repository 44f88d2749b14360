// A session popped out into a window of its own (issue 34): the page asks the shell to
// open its address (open_window, what the transport's openWindow invokes), a second
// window appears showing that session, and it is a client of the daemon like the first:
// a turn sent from the main window streams into it. Closing it leaves the main one be.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { byTestId, chooseAgent, lastTurnText, launch, phase, screenshot, send, until } from "./harness.mjs";

let browser;

/** What the transport's openWindow sends: the shell's command, from the page. */
const openWindow = (hash) =>
  browser.execute(
    (h) =>
      window.__TAURI_INTERNALS__.invoke("open_window", { hash: h }).then(
        () => "ok",
        (e) => `refused: ${e?.code ?? ""} ${e?.message ?? e}`,
      ),
    hash,
  );

describe("pop-out windows", () => {
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession();
  });

  it("opens a session in a window of its own that follows its turns", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "echo");
    await send(browser, "before the pop-out");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: before the pop-out"), "the reply in the main window");
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish");
    const key = await (await browser.$('[data-testid="session-item"][data-selected="true"]')).getAttribute("data-session-key");
    assert.ok(key?.startsWith("echo:"), `selected session ${key}`);
    const main = await browser.getWindowHandle();
    assert.deepEqual(await browser.getWindowHandles(), [main]);

    const hash = `#/s/${encodeURIComponent(key)}`;
    assert.equal(await openWindow(hash), "ok");
    await until(browser, async () => (await browser.getWindowHandles()).length === 2, "a second window");
    const popout = (await browser.getWindowHandles()).find((h) => h !== main);
    await browser.switchToWindow(popout);
    await until(browser, async () => (await (await byTestId(browser, "app")).getAttribute("data-ready")) === "true", "the pop-out to be ready", 90000);
    assert.equal(await browser.execute(() => window.location.hash), hash);
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: before the pop-out"), "the session's transcript in the pop-out");
    await screenshot(browser, "windows-popout");

    // The same address again brings that window forward; no third one.
    await browser.switchToWindow(main);
    assert.equal(await openWindow(hash), "ok");
    assert.equal((await browser.getWindowHandles()).length, 2);
    // Only the app's own addresses, checked by the shell.
    for (const bad of ["https://evil.example/", "#/s/a b", `#/${"x".repeat(2000)}`]) {
      assert.match(await openWindow(bad), /^refused: badRequest/, bad);
    }
    assert.equal((await browser.getWindowHandles()).length, 2);

    // A turn sent from the main window streams into the pop-out: both get the patches.
    await send(browser, "after the pop-out");
    await browser.switchToWindow(popout);
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: after the pop-out"), "the new turn in the pop-out");
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish in the pop-out");
    // And the main window still gets them too.
    await browser.switchToWindow(main);
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: after the pop-out"), "the new turn in the main window");

    // Closing the pop-out leaves the app and the main window as they were.
    await browser.switchToWindow(popout);
    await browser.closeWindow();
    await until(browser, async () => (await browser.getWindowHandles()).length === 1, "the pop-out to close");
    await browser.switchToWindow(main);
    await send(browser, "after closing the pop-out");
    await until(browser, async () => (await lastTurnText(browser)).includes("Echo: after closing the pop-out"), "a turn in the main window after the pop-out closed");
  });
});
