// The Agents view and a login from the Accounts view, both in Weft's terminal pane.
//
// Agents: the sandbox the daemon found for Weft's own agent, and every agent the kernel
// knows with where its binary was found (the real
// claude at WEFT_CLAUDE_BIN) or where it looked, and an Install that runs npm in the
// daemon's terminal, as `weft agents install gemini` does — with the npm stand-in scripts/e2e-app.sh
// puts at WEFT_NPM_BIN (no registry here), which lays out what npm would: the pane shows
// its progress and the row then shows the binary in $WEFT_HOME/agents with its version.
//
// Login: a claude `login` account added in the Accounts view, then "Log in": the pane
// runs the real `claude auth login` (as `weft accounts login ID` does) with the account's
// own CLAUDE_CONFIG_DIR, up to where it needs the internet (its sign-in URL and code
// prompt). Closing the pane reads the account again and tests it: logged out, since
// nobody signed in. Skipped without the claude CLI (CI has it).
import assert from "node:assert/strict";
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, launch, screenshot, until } from "./harness.mjs";

const home = process.env.WEFT_HOME_DIR;
let browser;

const bufferText = () =>
  browser.execute(() => {
    const pane = document.querySelector('[data-testid="terminal-pane"]');
    return pane && typeof pane.bufferText === "function" ? pane.bufferText() : "";
  });
const rowOf = (selector) => browser.$(selector);

describe("Weft desktop app: agents and logins", () => {
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
    // What the stand-in installed goes, so later suites see the machine's agents only.
    if (home) rmSync(join(home, "agents"), { recursive: true, force: true });
  });

  it("lists the agents with where each was found, and installs one in the terminal pane", { skip: process.env.WEFT_E2E_NPM ? false : "no npm stand-in (run scripts/e2e-app.sh)" }, async () => {
    await (await byTestId(browser, "rail-settings")).click();
    await (await byTestId(browser, "settings-tab-agents")).click();
    await (await byTestId(browser, "agents-view")).waitForDisplayed({ timeout: 30000 });
    await until(browser, async () => (await rowOf('[data-testid="agent-row"][data-agent="echo"]')).isExisting(), "the echo agent listed");
    // The daemon's own probe of the sandbox Weft's agent runs commands in (CI has bubblewrap).
    const sandbox = await byTestId(browser, "sandbox-status");
    await until(browser, async () => /^(bwrap|landlock|unavailable)$/.test((await sandbox.getAttribute("data-mechanism")) ?? ""), "the sandbox's mechanism");
    assert.match(await (await byTestId(browser, "sandbox-details")).getText(), /bwrap|landlock|no sandbox/i);
    if (process.env.WEFT_E2E_CLAUDE === "1") {
      const claude = await rowOf('[data-testid="agent-row"][data-agent="claude"]');
      await until(browser, async () => (await claude.getAttribute("data-found")) === "true", "claude found");
      assert.match(await (await claude.$('[data-testid="agent-path"]')).getText(), /claude/);
      assert.match(await (await claude.$('[data-testid="agent-version"]')).getText(), /\d+\.\d+/);
    }
    const gemini = await rowOf('[data-testid="agent-row"][data-agent="gemini"]');
    await until(browser, async () => (await gemini.$('[data-testid="agent-install"]')).isExisting(), "gemini's Install button");
    await (await gemini.$('[data-testid="agent-install"]')).click();
    await until(browser, async () => (await byTestId(browser, "agent-install-pane")).isExisting(), "the install's terminal pane");
    await until(browser, async () => /installing @google\/gemini-cli@0\.61\.0 into/.test(await bufferText()), "weft agents install's progress in the pane");
    const installed = join(home, "agents/node_modules/.bin/gemini");
    await until(browser, async () => (await bufferText()).includes(installed), "the installed binary printed");
    await until(browser, async () => (await (await byTestId(browser, "terminal-pane")).getAttribute("data-exited")) === "true", "the install to end");
    assert.match(await (await byTestId(browser, "terminal-note")).getText(), /Exited with code 0/);
    // Found first in $WEFT_HOME/agents, before PATH (where the machine may have its own).
    await until(
      browser,
      async () => (await (await gemini.$('[data-testid="agent-path"]')).getText()) === `${installed} (installed by Weft)`,
      "gemini found where it was installed",
    );
    assert.match(await (await gemini.$('[data-testid="agent-version"]')).getText(), /0\.61\.0 \(the tested version\)/);
    assert.ok(existsSync(installed));
    await screenshot(browser, "33-agents-view-light");
    await (await byTestId(browser, "terminal-close")).click();
    await until(browser, async () => !(await (await byTestId(browser, "agent-install-pane")).isExisting()), "the pane to close");
    await (await byTestId(browser, "rail-session")).click();
  });

  it("logs a claude login account in through the terminal pane, then shows its state", { skip: process.env.WEFT_E2E_CLAUDE === "1" ? false : "no claude CLI" }, async () => {
    await (await byTestId(browser, "rail-settings")).click();
    await (await byTestId(browser, "accounts-view")).waitForDisplayed({ timeout: 30000 });
    await (await byTestId(browser, "account-agent")).selectByAttribute("value", "claude");
    await (await byTestId(browser, "account-kind")).selectByAttribute("value", "login");
    await (await byTestId(browser, "account-label-input")).setValue("e2e login");
    await (await byTestId(browser, "account-add-submit")).click();
    await until(browser, async () => (await (await byTestId(browser, "account-added")).getText()).includes("e2e login"), "the login account added");
    const id = (await (await byTestId(browser, "account-added")).getText()).match(/\((acct-[^)]+)\)/)?.[1];
    assert.ok(id, "the new account's id");
    const row = await rowOf(`[data-testid="account-row"][data-account="${id}"]`);
    await (await row.$('[data-testid="account-login"]')).click();
    await until(browser, async () => (await byTestId(browser, "account-login-pane")).isExisting(), "the login's terminal pane");
    // The pane names the account and its home, then claude's own login runs there.
    await until(browser, async () => new RegExp(`logging in claude account \`${id}\` \\(e2e login\\) in /`).test((await bufferText()).replace(/\n/g, "")), "weft accounts login's line");
    await until(browser, async () => /Paste code here|oauth\/authorize/.test((await bufferText()).replace(/\n/g, "")), "claude's own sign-in prompt", 60000);
    await screenshot(browser, "34-account-login-light");
    await (await byTestId(browser, "terminal-close")).click();
    await until(browser, async () => !(await (await byTestId(browser, "account-login-pane")).isExisting()), "the pane to close");
    // The login ended unfinished: the account is tested again and says so.
    await until(browser, async () => (await row.$('[data-testid="account-test-result"]')).isExisting(), "the account's state after the login");
    assert.match(await (await row.$('[data-testid="account-test-result"]')).getText(), /^(loggedOut|expired)/);
    await (await byTestId(browser, "rail-session")).click();
  });
});
