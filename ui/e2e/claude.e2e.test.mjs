// One turn through the real `claude` CLI, against the scripted Anthropic server that
// scripts/e2e-app.sh starts (WEFT_E2E_ANTHROPIC_URL), including a permission dialog.
// Skipped when the CLI or the server is not there (CI installs both).
import assert from "node:assert/strict";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { byTestId, lastTurnText, launch, phase, screenshot, send, until } from "./harness.mjs";

const ready = Boolean(process.env.WEFT_E2E_ANTHROPIC_URL && process.env.WEFT_E2E_CLAUDE === "1");

describe("Weft desktop app (real claude CLI)", { skip: ready ? false : "no claude CLI or scripted server" }, () => {
  let browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("runs a claude turn with a permission dialog", async () => {
    await (await byTestId(browser, "new-session")).click();
    const picker = await byTestId(browser, "agent-picker");
    await until(browser, async () => (await browser.$('[data-testid="agent-picker"] option[data-agent="claude"]')).isEnabled(), "claude to be listed as installed");
    await picker.selectByAttribute("data-agent", "claude");
    await until(browser, async () => (await picker.getValue()) === "claude", "claude picked");
    await send(browser, "please write the file");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 90000 });
    assert.equal(await dialog.getAttribute("data-kind"), "permission");
    assert.equal(await (await byTestId(browser, "permission-tool")).getText(), "Bash");
    assert.match(await (await byTestId(browser, "permission-input")).getText(), /app-e2e\.txt/);
    await screenshot(browser, "07-claude-permission-light");
    await (await byTestId(browser, "allow-once")).click();
    await until(browser, async () => (await lastTurnText(browser)).includes("Wrote app-e2e.txt for you."), "claude's reply", 90000);
    await until(browser, async () => (await phase(browser)) === "done", "the claude turn to finish", 90000);
    const row = await browser.$('[data-testid="tool-row"][data-tool-id="toolu_app1"]');
    assert.equal(await row.getAttribute("data-status"), "done");
    const file = join(process.env.WEFT_WORKSPACE_DIR ?? "", "app-e2e.txt");
    assert.ok(existsSync(file) && readFileSync(file, "utf8").trim() === "app-e2e", "the real CLI ran the allowed command");
    await screenshot(browser, "08-claude-turn-light");
  });

  it("leaves no agent process behind when the app is killed mid-turn", async () => {
    await send(browser, "ask and wait");
    const dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 90000 });
    const run = dirname(process.env.WEFT_WORKSPACE_DIR ?? "/nonexistent");
    const ofRun = (names) =>
      readdirSync("/proc")
        .filter((p) => /^\d+$/.test(p) && Number(p) !== process.pid && Number(p) !== process.ppid)
        .filter((p) => {
          try {
            const comm = readFileSync(`/proc/${p}/comm`, "utf8").trim();
            return names(comm) && readFileSync(`/proc/${p}/environ`, "utf8").includes(run);
          } catch {
            return false;
          }
        });
    const [app] = ofRun((c) => c === "weft-app");
    assert.ok(app, "the app process");
    const agents = ofRun((c) => c !== "weft-app" && !/^(WebKit|dbus|at-spi|tauri-driver)/.test(c));
    assert.ok(agents.length > 0, "the claude CLI is running");
    process.kill(Number(app), "SIGTERM");
    const deadline = Date.now() + 20000;
    let left = agents;
    while (Date.now() < deadline) {
      left = agents.filter((p) => existsSync(`/proc/${p}`) && !readFileSync(`/proc/${p}/stat`, "utf8").includes(") Z "));
      if (left.length === 0 && !existsSync(`/proc/${app}`)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    assert.deepEqual(left, [], "agent processes outlived the app");
    assert.ok(!existsSync(`/proc/${app}`) || readFileSync(`/proc/${app}/stat`, "utf8").includes(") Z "), "the app exited");
    await browser.deleteSession().catch(() => {});
    browser = null;
  });
});
