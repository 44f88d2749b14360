// One turn through the real `claude` CLI, against the scripted Anthropic server that
// scripts/e2e-app.sh starts (WEFT_E2E_ANTHROPIC_URL), including a permission dialog;
// then a turn that outlives the window (the kernel owns it) and ends with the kernel.
// Skipped when the CLI or the server is not there (CI installs both).
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync, readdirSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { byTestId, lastTurnText, launch, phase, screenshot, send, until } from "./harness.mjs";

/** Polls `check` (a plain function) for up to 20 s. */
async function waitFor(check, what, timeout = 20000) {
  const deadline = Date.now() + timeout;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

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
    // Answered from the keyboard: the dialog took focus when it opened, `a` allows once.
    await until(
      browser,
      () => browser.execute(() => Boolean(document.activeElement?.closest('[data-testid="interaction-dialog"]'))),
      "the dialog to take focus",
    );
    // Answering keys count a moment after it opens (a word being typed does not answer it).
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the dialog to take keys");
    await browser.keys("a");
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => (await lastTurnText(browser)).includes("Wrote app-e2e.txt for you."), "claude's reply", 90000);
    await until(browser, async () => (await phase(browser)) === "done", "the claude turn to finish", 90000);
    const row = await browser.$('[data-testid="tool-row"][data-tool-id="toolu_app1"]');
    assert.equal(await row.getAttribute("data-status"), "done");
    const file = join(process.env.WEFT_WORKSPACE_DIR ?? "", "app-e2e.txt");
    assert.ok(existsSync(file) && readFileSync(file, "utf8").trim() === "app-e2e", "the real CLI ran the allowed command");
    await screenshot(browser, "08-claude-turn-light");
    // A new session in this workspace starts with the agent last used here.
    const key = await (await browser.$('[data-testid="session-item"][data-selected="true"]')).getAttribute("data-session-key");
    await (await byTestId(browser, "new-session")).click();
    await until(browser, async () => (await (await byTestId(browser, "agent-picker")).getValue()) === "claude", "the remembered agent (claude)");
    await (await browser.$(`[data-testid="session-item"][data-session-key="${key}"] button`)).click();
    await until(browser, async () => (await phase(browser)) === "done", "the claude session selected again");
  });

  it("keeps the turn going when the app is killed mid-turn; the next window shows its question; daemon stop leaves no agent", async () => {
    await send(browser, "ask and wait");
    let dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 90000 });
    const promptId = await dialog.getAttribute("data-prompt-id");
    const key = await (await browser.$('[data-testid="session-item"][data-selected="true"]')).getAttribute("data-session-key");
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
    const alive = (p) => existsSync(`/proc/${p}`) && !readFileSync(`/proc/${p}/stat`, "utf8").includes(") Z ");
    const [app] = ofRun((c) => c === "weft-app");
    assert.ok(app, "the app process");
    // The agent is the kernel's: a descendant of this run's `weft daemon`, not of the
    // window (and not the run's own Xvfb or model server, which share its environment).
    const parentOf = (p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, "utf8");
        return Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      } catch {
        return 0;
      }
    };
    const [daemon] = ofRun((c) => c === "weft").filter((p) =>
      readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").slice(1, 3).join(" ") === "daemon run",
    );
    assert.ok(daemon, "the run's weft daemon");
    const below = (p) => {
      for (let q = parentOf(p); q > 1; q = parentOf(q)) if (String(q) === daemon) return true;
      return false;
    };
    // The turn's claude CLI: the long-lived `claude -p --input-format stream-json …`.
    // What it starts for a moment, and the daemon's short `claude --version` probes (one
    // ran as the new window listed the agents, and ended on its own in a CI run), may
    // end while the window goes.
    const argv = (p) => {
      try {
        return readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0");
      } catch {
        return [];
      }
    };
    const agents = readdirSync("/proc")
      .filter((p) => /^\d+$/.test(p))
      .filter((p) => below(p) && argv(p).includes("--input-format"));
    assert.ok(agents.length > 0, "the claude CLI is running");
    process.kill(Number(app), "SIGTERM");
    await waitFor(() => !alive(app), "the app to exit");
    assert.deepEqual(agents.filter((p) => !alive(p)), [], "the turn's agent ended with the window");

    // The next window shows the same question, still waiting.
    await browser.deleteSession().catch(() => {});
    browser = await launch();
    const item = await browser.$(`[data-testid="session-item"][data-session-key="${key}"] button`);
    await item.waitForExist({ timeout: 30000 });
    await item.click();
    dialog = await byTestId(browser, "interaction-dialog");
    await dialog.waitForDisplayed({ timeout: 30000 });
    assert.equal(await dialog.getAttribute("data-prompt-id"), promptId, "the same question");
    await screenshot(browser, "09-claude-question-after-restart-light");

    // Stopping the kernel ends the agent with it.
    assert.ok(process.env.WEFT_BIN && process.env.WEFT_HOME_DIR, "WEFT_BIN and WEFT_HOME_DIR from scripts/e2e-app.sh");
    await promisify(execFile)(process.env.WEFT_BIN, ["daemon", "stop"], {
      env: { ...process.env, WEFT_HOME: process.env.WEFT_HOME_DIR },
      timeout: 60000,
    });
    const described = (p) => {
      try {
        const stat = readFileSync(`/proc/${p}/stat`, "utf8");
        const cmd = readFileSync(`/proc/${p}/cmdline`, "utf8").split("\0").join(" ");
        return `${p} [${stat.slice(stat.lastIndexOf(")") + 2).split(" ").slice(0, 3).join(" ")}] ${cmd}`;
      } catch {
        return `${p} (gone)`;
      }
    };
    await waitFor(
      () => agents.every((p) => !alive(p)),
      "the agent to end with the daemon",
    ).catch((e) => {
      throw new Error(`${e.message}; still running (pid [state ppid pgrp] argv): ${agents.filter(alive).map(described).join("; ")}`);
    });
    await browser.deleteSession().catch(() => {});
    browser = null;
  });
});
