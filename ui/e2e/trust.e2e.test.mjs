// Workspace trust in the real WebView (issue 32 §2): a folder whose `.weft/hooks.json`
// and `.weft/mcp.json` would run commands opens, and before anything of it acts the app
// asks, listing what each file grants; T trusts it, which the daemon keeps (`weft trust
// --show --json` says so). Screenshots of the dialog in light and dark.
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { after, before, describe, it } from "node:test";
import { promisify } from "node:util";
import { allByTestId, byTestId, launch, screenshot, setTheme, until } from "./harness.mjs";

async function trustOf(workdir) {
  assert.ok(process.env.WEFT_BIN && process.env.WEFT_HOME_DIR, "WEFT_BIN and WEFT_HOME_DIR from scripts/e2e-app.sh");
  const { stdout } = await promisify(execFile)(process.env.WEFT_BIN, ["trust", "--show", "--json", "--workdir", workdir], {
    env: { ...process.env, WEFT_HOME: process.env.WEFT_HOME_DIR },
    timeout: 60000,
  });
  return JSON.parse(stdout);
}

describe("Weft desktop app: an untrusted workspace", () => {
  const workdir = join(dirname(process.env.WEFT_WORKSPACE_DIR ?? "/nonexistent/w"), "cloned-repo");
  let browser;
  before(async () => {
    mkdirSync(join(workdir, ".weft"), { recursive: true });
    writeFileSync(join(workdir, "README.md"), "# a cloned repository\n");
    writeFileSync(join(workdir, ".weft/hooks.json"), JSON.stringify({ PostToolUse: [{ command: "./scripts/fmt.sh --all" }] }));
    writeFileSync(
      join(workdir, ".weft/mcp.json"),
      JSON.stringify({ mcpServers: { helper: { command: "npx", args: ["-y", "helper-mcp"] }, docs: { url: "https://docs.example/mcp" } } }),
    );
    browser = await launch({ workspace: workdir });
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("asks before the folder's grants act, lists them by file, and T trusts it", async () => {
    const before = await trustOf(workdir);
    assert.equal(before.trusted, false, JSON.stringify(before));
    assert.ok(before.grants.length >= 3, JSON.stringify(before.grants));

    const dialog = await byTestId(browser, "trust-dialog");
    await dialog.waitForDisplayed({ timeout: 60000 });
    assert.equal(await dialog.getAttribute("data-hash"), before.hash, "the dialog shows what the daemon hashed");
    const files = [];
    for (const f of await allByTestId(browser, "trust-file")) files.push(await f.getAttribute("data-file"));
    assert.deepEqual(files.sort(), [".weft/hooks.json", ".weft/mcp.json"]);
    const grants = [];
    for (const g of await allByTestId(browser, "trust-grant")) grants.push(await g.getText());
    assert.ok(grants.some((g) => g.includes("./scripts/fmt.sh --all")), JSON.stringify(grants));
    assert.ok(grants.some((g) => g.includes("helper-mcp")), JSON.stringify(grants));
    assert.match(await (await byTestId(browser, "trust-summary")).getText(), /None of it takes effect until you trust the folder/);
    assert.ok(await (await byTestId(browser, "workspace-restricted")).isExisting(), "the header says the workspace is restricted");
    await screenshot(browser, "trust-dialog-light");
    const theme = await (await byTestId(browser, "theme-toggle")).getAttribute("aria-label");
    await setTheme(browser, "dark");
    await screenshot(browser, "trust-dialog-dark");
    await setTheme(browser, theme.replace("Theme: ", ""));

    // Enter does not trust; T does.
    await until(browser, async () => (await dialog.getAttribute("data-keys")) === "ready", "the dialog to take keys");
    await browser.execute(() => document.querySelector('[data-testid="trust-dialog"]')?.focus());
    await browser.keys("Enter");
    assert.ok(await dialog.isExisting(), "Enter leaves the dialog open");
    await browser.keys("t");
    await dialog.waitForExist({ reverse: true, timeout: 30000 });
    await until(browser, async () => !(await (await byTestId(browser, "workspace-restricted")).isExisting()), "the Restricted indicator to go");

    const after = await trustOf(workdir);
    assert.equal(after.trusted, true, JSON.stringify(after));
    assert.equal(after.hash, before.hash);
  });
});
