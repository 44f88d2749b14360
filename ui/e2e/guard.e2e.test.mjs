// Weft's own agent (native) asks to run a dangerous shell command: the desktop dialog
// shows Weft's verdict in red with its reasons (the typed `verdict` of the permission
// request), with Deny as its primary choice and no lasting allow; the user denies it
// with Enter, and the refusal reaches the model (the
// scripted Anthropic server that scripts/e2e-app.sh starts answers the refusal with its
// own words, which the turn then shows). Skipped without that server.
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { allByTestId, byTestId, chooseAgent, lastTurnText, launch, phase, screenshot, send, setTheme, until } from "./harness.mjs";

const ready = Boolean(process.env.WEFT_E2E_ANTHROPIC_URL);

describe("Weft desktop app: the native agent's dangerous command", { skip: ready ? false : "no scripted Anthropic server" }, () => {
  let browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("asks with the red verdict and its reasons; a denial goes back to the model", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "native");
    await send(browser, "native: run the installer");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 90000 });
    assert.equal(await dialog.getAttribute("data-kind"), "permission");
    assert.equal(await (await byTestId(browser, "permission-tool")).getText(), "bash");
    assert.match(await (await byTestId(browser, "permission-input")).getText(), /install\.sh \| sh/);

    const verdict = await byTestId(browser, "interaction-verdict");
    assert.equal(await verdict.getAttribute("data-verdict"), "dangerous");
    assert.match(await verdict.getAttribute("class"), /\bdangerous\b/);
    // Red: the theme's failure colour, not the dialog's ordinary text colour.
    const colours = await browser.execute(() => {
      const v = document.querySelector('[data-testid="interaction-verdict"]');
      const title = document.querySelector('[data-testid="interaction-title"]');
      const probe = document.createElement("span");
      probe.style.color = "var(--fail)";
      document.body.appendChild(probe);
      const fail = getComputedStyle(probe).color;
      probe.remove();
      return { verdict: v ? getComputedStyle(v).color : "", title: title ? getComputedStyle(title).color : "", fail };
    });
    assert.equal(colours.verdict, colours.fail, `the verdict is drawn in the failure colour: ${JSON.stringify(colours)}`);
    assert.notEqual(colours.verdict, colours.title, "and stands out from the dialog's text");
    const reasons = [];
    for (const r of await allByTestId(browser, "verdict-reason")) reasons.push(await r.getText());
    assert.ok(
      reasons.some((r) => /download/i.test(r) && /sh/.test(r)),
      `a reason names the download piped into a shell: ${JSON.stringify(reasons)}`,
    );
    // A dangerous line: Deny is the primary choice (Enter), allowing is once only, and
    // nothing lasting is offered (the daemon sends an always-allow choice; not shown).
    assert.equal(await (await byTestId(browser, "deny")).getAttribute("data-primary"), "true");
    assert.equal(await (await byTestId(browser, "deny")).getAttribute("aria-keyshortcuts"), "D Enter");
    assert.equal(await (await byTestId(browser, "allow-once")).getAttribute("aria-keyshortcuts"), "A");
    assert.equal(await (await byTestId(browser, "choice-allowPrefix")).isExisting(), false, "no always-allow");
    assert.equal(await (await byTestId(browser, "allow-session")).isExisting(), false, "no allow for the session");
    assert.match(await (await byTestId(browser, "dangerous-note")).getText(), /Enter denies/);
    await screenshot(browser, "guard-dangerous-verdict-light");
    const theme = await (await byTestId(browser, "theme-toggle")).getAttribute("aria-label");
    await setTheme(browser, "dark");
    await screenshot(browser, "guard-dangerous-verdict-dark");
    await setTheme(browser, theme.replace("Theme: ", ""));

    // Enter, the primary choice, denies.
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the dialog to take keys");
    await browser.execute(() => document.querySelector('[data-testid="interaction-dialog"]')?.focus());
    await browser.keys("Enter");
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("Not run: the user denied the command."), "the model's answer to the refusal", 90000);
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish", 90000);
    const row = await browser.$('[data-testid="tool-row"][data-tool-id="toolu_native_danger"]');
    await row.waitForExist({ timeout: 10000 });
    assert.equal(await row.getAttribute("data-status"), "failed", "the refused call is shown failed");
    assert.ok(!existsSync(join(process.env.WEFT_WORKSPACE_DIR ?? "/nonexistent", "install.sh")), "nothing ran");
    await screenshot(browser, "guard-denied-light");
  });
});
