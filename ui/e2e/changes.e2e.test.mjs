// Normalized file changes and a change of agent, in the desktop window, against the
// scripted Anthropic server scripts/e2e-app.sh starts (src-tauri/examples/scripted_anthropic.rs):
// Weft's own agent writes a file and the turn's "files changed" row lists it with its
// diff (drawn from the call's `changes`); then the idle session is switched to the real
// Claude from the header, and Claude's first request carries the handover with the
// earlier turn's words (the server answers that request only). Skipped without the server.
import assert from "node:assert/strict";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, chooseAgent, lastTurnText, launch, phase, screenshot, send, texts, until } from "./harness.mjs";

const ready = Boolean(process.env.WEFT_E2E_ANTHROPIC_URL);

describe("Weft desktop app: file changes and switching agent", { skip: ready ? false : "no scripted Anthropic server" }, () => {
  let browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("lists the files a turn changed with their diffs, then moves the session to Claude with a handover", async () => {
    await (await byTestId(browser, "new-session")).click();
    await chooseAgent(browser, "native");
    await send(browser, "native: write the notes");
    // Writing asks first (a mutating tool); allow it once if the dialog comes.
    await until(
      browser,
      async () => {
        const allow = await browser.$('[data-testid="allow-once"]');
        if (await allow.isExisting()) await allow.click();
        return (await lastTurnText(browser)).includes("Wrote the notes.");
      },
      "the native agent's write and its reply",
      90000,
    );
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish", 90000);
    const file = join(process.env.WEFT_WORKSPACE_DIR ?? "/nonexistent", "e2e-notes.md");
    assert.ok(existsSync(file) && readFileSync(file, "utf8").includes("written in the e2e"), "the file was written");

    const files = await byTestId(browser, "files-changed");
    await files.waitForExist({ timeout: 10000 });
    assert.match(await files.getText(), /1 file changed/);
    const row = await browser.$('[data-testid="files-changed-file"][data-path="e2e-notes.md"]');
    assert.equal(await row.getAttribute("data-kind"), "add");
    await (await row.$("button")).click();
    const diff = await row.$('[data-testid="tool-diff"]');
    await diff.waitForExist({ timeout: 10000 });
    const added = await diff.$$(".d2h-ins .d2h-code-line-ctn");
    const lines = [];
    for (const l of added) lines.push(await l.getText());
    assert.deepEqual(lines, ["# Notes", "written in the e2e"], "the added lines, from the call's changes");
    await screenshot(browser, "changes-files-changed-light");

    // The idle session moves to Claude from the header; the next turn runs there.
    const select = await byTestId(browser, "agent-switch-select");
    await select.selectByAttribute("value", "claude");
    await until(browser, async () => (await (await byTestId(browser, "session-next-agent")).isExisting()), "the pending switch to show");
    assert.match(await (await byTestId(browser, "session-next-agent")).getText(), /Claude/);
    await send(browser, "what did we do so far?");
    await until(
      browser,
      async () => (await lastTurnText(browser)).includes("Claude took over: the handover names the notes."),
      "Claude's answer to the request that carried the handover",
      120000,
    );
    await until(browser, async () => (await phase(browser)) === "done", "Claude's turn to finish", 90000);
    assert.deepEqual((await texts(browser, "turn-agent")).slice(-2), ["native", "claude"], "each turn names its agent");
    const agentName = await byTestId(browser, "session-agent");
    assert.match(await agentName.getText(), /Claude/);
    assert.equal(await agentName.getAttribute("data-ran-on"), "native,claude", "the session ran on both");
    assert.equal(await (await browser.$('[data-testid="session-next-agent"]')).isExisting(), false, "nothing pending");
    await screenshot(browser, "changes-switched-to-claude-light");
  });
});
