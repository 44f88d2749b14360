// `@path` in the composer, in the real window with the echo agent: typing `@` and part
// of a file's name lists the workspace's files from the daemon (a nested file found, a
// gitignored one not offered), the pick puts `@relative/path` in the prompt, and the
// prompt reaches the agent with the mention as text (echo answers with what it got).
import assert from "node:assert/strict";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, chooseAgent, lastTurnText, launch, phase, screenshot, until } from "./harness.mjs";

const workspace = process.env.WEFT_WORKSPACE_DIR ?? "";

describe("Weft desktop app: @path mentions (echo agent)", { skip: workspace ? false : "no WEFT_WORKSPACE_DIR" }, () => {
  let browser;
  before(async () => {
    mkdirSync(join(workspace, "src", "mention_deep"), { recursive: true });
    writeFileSync(join(workspace, "src", "mention_deep", "quokka_notes.md"), "# quokkas\n");
    mkdirSync(join(workspace, "scratch"), { recursive: true });
    writeFileSync(join(workspace, "scratch", "quokka_ignored.md"), "ignored\n");
    writeFileSync(join(workspace, ".gitignore"), "scratch/\n");
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("completes @ and part of a file name from the workspace and sends the mention", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "echo");
    const input = await byTestId(browser, "composer-input");
    await input.waitForDisplayed({ timeout: 20000 });
    await input.click();
    await input.setValue("summarise @quok");
    const menu = await byTestId(browser, "file-menu");
    await menu.waitForDisplayed({ timeout: 20000 });
    const option = (path) => browser.$(`[data-testid="file-menu"] [data-path="${path}"]`);
    await until(browser, async () => (await option("src/mention_deep/quokka_notes.md")).isExisting(), "the nested file to be offered");
    assert.equal(await (await option("scratch/quokka_ignored.md")).isExisting(), false, "a gitignored file is not offered");
    await screenshot(browser, "30-file-menu-light");
    await browser.keys("Enter");
    const mention = "summarise @src/mention_deep/quokka_notes.md ";
    await until(browser, async () => (await input.getValue()) === mention, "the pick to put @path in the prompt");
    await until(browser, async () => !(await (await byTestId(browser, "file-menu")).isExisting()), "the menu to close after the pick");
    await input.addValue("please");
    await browser.keys("Enter");
    await until(browser, async () => (await input.getValue()) === "", "the composer to clear after sending");
    await until(browser, async () => (await phase(browser)) === "done", "the echo turn to finish");
    const prompts = await browser.$$('[data-testid="turn-prompt-text"]');
    assert.equal(await prompts.at(-1).getText(), "summarise @src/mention_deep/quokka_notes.md please");
    assert.match(await lastTurnText(browser), /@src\/mention_deep\/quokka_notes\.md/, "the agent got the mention");
  });
});
