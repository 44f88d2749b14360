// Slash commands and attachments in the composer, through the real `claude` CLI and the
// scripted Anthropic server scripts/e2e-app.sh starts: `/` offers the commands the CLI
// reported with their descriptions, `/compact` typed goes to the CLI as typed (its own
// answer comes back), an unknown command gets the CLI's "Unknown command", and an image
// attached in the composer reaches the model as an image (the server answers a request
// carrying an image block with "I see an image."). Skipped without the CLI or server.
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, lastTurnText, launch, phase, screenshot, send, until } from "./harness.mjs";

const ready = Boolean(process.env.WEFT_E2E_ANTHROPIC_URL && process.env.WEFT_E2E_CLAUDE === "1");
// A 1x1 PNG.
const PNG = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";

describe("Weft desktop app: slash commands and attachments (real claude CLI)", { skip: ready ? false : "no claude CLI or scripted server" }, () => {
  let browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("offers the CLI's commands on /, sends /compact verbatim and shows the CLI's answer to an unknown one", async () => {
    await (await byTestId(browser, "new-session")).click();
    const picker = await byTestId(browser, "agent-picker");
    await until(browser, async () => (await browser.$('[data-testid="agent-picker"] option[data-agent="claude"]')).isEnabled(), "claude to be listed as installed");
    await picker.selectByAttribute("data-agent", "claude");
    await until(browser, async () => (await picker.getValue()) === "claude", "claude picked");
    await send(browser, "slash e2e hello");
    await until(browser, async () => (await lastTurnText(browser)).includes("Hello from the script."), "claude's reply", 90000);
    await until(browser, async () => (await phase(browser)) === "done", "the first turn to finish", 90000);

    const input = await byTestId(browser, "composer-input");
    await input.click();
    await input.setValue("/comp");
    const menu = await byTestId(browser, "slash-menu");
    await menu.waitForDisplayed({ timeout: 20000 });
    const option = await browser.$('[data-testid="slash-menu"] [data-command="compact"]');
    assert.ok(await option.isExisting(), "/compact is offered");
    assert.ok((await option.getText()).length > "/compact".length, "with its description");
    await screenshot(browser, "20-slash-menu-light");
    await browser.keys("Tab");
    await until(browser, async () => (await input.getValue()) === "/compact ", "Tab to complete /compact");

    await send(browser, "/compact");
    await until(
      browser,
      async () => /Not enough messages to compact|compact/i.test(await lastTurnText(browser)),
      "the CLI's own answer to /compact",
      90000,
    );
    await until(browser, async () => (await phase(browser)) === "done", "the /compact turn to finish", 90000);
    const prompts = await browser.$$('[data-testid="turn-prompt-text"]');
    assert.equal(await prompts.at(-1).getText(), "/compact", "the prompt was sent as typed");

    await send(browser, "/no-such-command now");
    await until(
      browser,
      async () => (await lastTurnText(browser)).includes("Unknown command: /no-such-command"),
      "the CLI's Unknown command answer",
      90000,
    );
    await until(browser, async () => (await phase(browser)) === "done", "the unknown command's turn to finish", 90000);
  });

  it("sends an image attached in the composer to the model as an image", async () => {
    const file = join(process.env.WEFT_WORKSPACE_DIR ?? "/tmp", "dot.png");
    writeFileSync(file, Buffer.from(PNG, "base64"));
    const picker = await byTestId(browser, "attach-input");
    // The file input is hidden behind the Attach… button; WebDriver types the path into it.
    await browser.execute(() => {
      const el = document.querySelector('[data-testid="attach-input"]');
      if (el) el.hidden = false;
    });
    await picker.setValue(file);
    const chip = await byTestId(browser, "attachment");
    await chip.waitForDisplayed({ timeout: 20000 });
    await send(browser, "what is in the picture?");
    await until(browser, async () => (await lastTurnText(browser)).includes("I see an image."), "the model to get the image", 90000);
    const listed = await browser.$$('[data-testid="turn-attachments"]');
    assert.ok(listed.length > 0 && (await listed.at(-1).getText()).includes("dot.png"), "the transcript lists the attachment");
    await screenshot(browser, "21-attachment-turn-light");
  });
});
