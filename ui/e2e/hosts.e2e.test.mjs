// One window over all hosts, end to end: the app adds a host reached over real SSH (an
// sshd of the run on loopback, a throwaway user: scripts/e2e-app.sh), opens a folder of
// that host through the composer's folder browser (listed by the host's daemon), runs
// an echo turn there, closes the window mid-turn, and the reopened window shows the turn
// finished on the host. A link killed mid-turn is made again and the session resyncs.
// A question the host's agent asks while the window shows another place raises a
// desktop notification (to the run's real notification server, dunst), and clicking it
// opens the session with the question. The library, usage, agents and accounts views
// show the host's when it is picked; a port of the host is forwarded here from
// Settings → Hosts and stopped.
// Removing the host stops Weft there.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import net from "node:net";
import {
  byTestId,
  chooseAgent,
  askWhileAway,
  closeApp,
  lastTurnText,
  launch,
  notifying,
  phase,
  processesOfRun,
  screenshot,
  send,
  until,
} from "./harness.mjs";

const DEST = process.env.WEFT_E2E_SSH_DEST;
const HOME = process.env.WEFT_E2E_SSH_HOME;
const HOST = "e2ehost";
let browser;

async function go(hash, testid) {
  await browser.execute((h) => (window.location.hash = h), hash);
  await until(browser, async () => (await byTestId(browser, testid)).isDisplayed(), `${hash} shown`);
}

const hostRow = () => browser.$(`[data-testid="host-row"][data-host="${HOST}"]`);

describe("one window over all hosts", { skip: !DEST && "no ssh host (scripts/e2e-app.sh makes one as root)" }, () => {
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession();
  });

  it("adds a host, opens its folder through the folder browser, runs a turn there that outlives the window, and removes the host", async () => {
    // Settings → Hosts: add by name and destination, as `weft hosts add` does.
    await go("#/settings/hosts", "hosts-settings");
    await (await byTestId(browser, "host-name")).setValue(HOST);
    await (await byTestId(browser, "host-destination")).setValue(DEST);
    await (await byTestId(browser, "host-add")).click();
    // First contact copies this weft there (a debug build is big): give it time.
    await until(browser, async () => (await hostRow().isExisting()) && (await hostRow().getAttribute("data-connected")) === "true", "the host added and connected", 180000);
    await (await byTestId(browser, "host-status-refresh")).click();
    await until(browser, async () => (await hostRow().$('[data-testid="host-status"]').getText()).includes("Weft "), "the host's status");
    await screenshot(browser, "hosts-01-settings-light");

    // The composer's folder browser lists the host's folders (its daemon's listDir).
    await go("#/", "composer-input");
    await (await byTestId(browser, "new-session")).click();
    await (await byTestId(browser, "browse-folders")).click();
    const dialog = await byTestId(browser, "folder-browser");
    await until(browser, () => dialog.isDisplayed(), "the folder browser");
    await (await byTestId(browser, "folder-host")).selectByAttribute("value", HOST);
    await until(browser, async () => (await dialog.getAttribute("data-path")) === HOME, "the host's home listed");
    const proj = await browser.$('[data-testid="folder-entry"][data-name="proj"]');
    await until(browser, () => proj.isExisting(), "the host's project folder");
    assert.equal(await proj.getAttribute("data-repo"), "true", "marked as a git repository");
    await proj.click();
    await until(browser, async () => (await dialog.getAttribute("data-path")) === `${HOME}/proj`, "into the project");
    await screenshot(browser, "hosts-02-folder-browser-light");
    await (await byTestId(browser, "folder-choose")).click();
    const workdir = `${HOST}:${HOME}/proj`;
    // The new session's workspace is the host's folder (the sidebar, virtualized, may
    // have it out of view below the run's thousands of sessions).
    await until(browser, async () => (await browser.$("span.ws").getAttribute("title")) === workdir, "the host's folder as the workspace");

    // A slow echo turn on the host (about 40 s), then the window closes mid-turn.
    await chooseAgent(browser, "echo");
    const words = "slow walk through the long quiet valley past the river and the old mill then up the hill to the house where the lamps are lit and supper waits for everyone";
    await send(browser, words);
    await until(browser, async () => (await phase(browser)) === "streaming", "the turn to stream on the host");
    const selected = await browser.$('[data-testid="session-item"][data-selected="true"]');
    await until(browser, () => selected.isExisting(), "the new session selected");
    const key = await selected.getAttribute("data-session-key");
    assert.match(key, new RegExp(`^${HOST}/echo:`), "the session is the host's");
    assert.equal(await selected.$('[data-testid="session-host"]').getText(), HOST, "badged with its host");
    assert.equal(await selected.getAttribute("data-workdir"), workdir);
    await screenshot(browser, "hosts-03-remote-turn-light");

    // The link drops (its `ssh … weft proxy` killed, as a network loss would): the app
    // makes it again and the open session resyncs, still streaming, nothing lost.
    const links = processesOfRun("ssh").filter((pid) => readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("proxy"));
    assert.equal(links.length, 1, "one ssh link to the host");
    const cut = (await lastTurnText(browser)).length;
    process.kill(links[0], "SIGKILL");
    await until(browser, () => processesOfRun("ssh").some((pid) => pid !== links[0] && readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").includes("proxy")), "a new link to the host");
    await until(browser, async () => (await lastTurnText(browser)).length > cut + 20, "the turn streaming on through the new link");
    assert.equal(await phase(browser), "streaming", "the turn went on while the link was down");
    const before = (await lastTurnText(browser)).length;
    browser = await closeApp(browser);

    // The turn went on in the host's daemon; the reopened window reconnects to it.
    browser = await launch();
    // Its address (the sidebar, virtualized, draws only the rows in view).
    await browser.execute((h) => (window.location.hash = h), `#/s/${encodeURIComponent(key)}`);
    const item = await browser.$(`[data-testid="session-item"][data-session-key="${key}"]`);
    await item.waitForExist({ timeout: 60000 });
    await until(browser, async () => (await lastTurnText(browser)).length > before, "what the turn streamed meanwhile");
    await until(browser, async () => (await phase(browser)) === "done", "the turn to finish on the host", 120000);
    const text = await lastTurnText(browser);
    assert.equal(text.split(`Echo: ${words}`).length - 1, 8, `the whole reply:\n${text}`);
    assert.equal(await (await byTestId(browser, "turn-incomplete")).isExisting(), false, "not marked incomplete");
    assert.equal(await item.$('[data-testid="session-host"]').getText(), HOST, "badged with its host after the reopen");
    await screenshot(browser, "hosts-04-turn-finished-after-reopen-light");

    // The host's agent asks while the window shows another place: the shell's link to
    // the host raises a notification naming the host, and clicking it (dunst's default
    // action, as a click on it) opens the session, where the question waits.
    if (notifying) {
      // Named with the agent and the host, as the inbox card writes it.
      const notice = await askWhileAway(browser, key, "write-file asked.txt from the host", `echo on ${HOST} needs an answer`);
      assert.equal(notice.appname, "Weft");
      const dialog = await byTestId(browser, "interaction-dialog");
      await until(browser, () => dialog.isDisplayed(), "the host's question in the opened session");
      await (await byTestId(browser, "allow-once")).click();
      await until(browser, async () => (await phase(browser)) === "done", "the host's turn answered and done", 60000);
      assert.ok((await lastTurnText(browser)).includes("I wrote the note."), "the answer reached the host's agent");
      assert.equal(readFileSync(`${HOME}/proj/asked.txt`, "utf8").trim(), "from the host");
    }

    // A file of the host's session opens here: read through the host's daemon and
    // opened (the run's recording editor) as a copy on this machine.
    writeFileSync(`${HOME}/proj/notes.md`, "written on the host\n");
    const opened = process.env.WEFT_E2E_OPENED;
    const openedBefore = existsSync(opened) ? readFileSync(opened, "utf8") : "";
    await browser.execute(
      (path, workdir) => window.__TAURI_INTERNALS__.invoke("open_path", { path, workdir, reveal: false }),
      "notes.md",
      workdir,
    );
    await until(browser, () => existsSync(opened) && readFileSync(opened, "utf8").length > openedBefore.length, "the host's file opened");
    const copy = readFileSync(opened, "utf8").slice(openedBefore.length).trim().replace(/^file /, "");
    assert.ok(copy.endsWith(`/remote/${HOST}${HOME}/proj/notes.md`), `a copy of the host's file: ${copy}`);
    assert.equal(readFileSync(copy, "utf8"), "written on the host\n");

    // The host's library, usage, agents and accounts: each view's host picker asks that
    // host's daemon (the shell's link to it), and the host's session is in its library.
    await go("#/library", "library-view");
    await (await byTestId(browser, "host-pick")).selectByAttribute("value", HOST);
    const inLibrary = await browser.$(`[data-testid="library-row"][data-session="${key}"]`);
    await until(browser, () => inLibrary.isExisting(), "the host's session in the host's library", 60000);
    assert.equal(await (await byTestId(browser, "library-error")).isExisting(), false, "the host's library read without an error");
    await screenshot(browser, "hosts-05-library-of-host-light");
    await go("#/usage", "usage-view");
    await (await byTestId(browser, "host-pick")).selectByAttribute("value", "*");
    const hostUsage = await browser.$(`[data-testid="usage-host-row"][data-host="${HOST}"]`);
    await until(browser, () => hostUsage.isExisting(), "the host's line in every host's usage", 60000);
    assert.ok(await browser.$('[data-testid="usage-host-row"][data-host="local"]').isExisting(), "this machine's line beside it");
    await screenshot(browser, "hosts-06-usage-all-hosts-light");
    await go("#/settings/agents", "agents-view");
    await (await byTestId(browser, "host-pick")).selectByAttribute("value", HOST);
    await until(browser, () => browser.$('[data-testid="agent-row"][data-agent="echo"]').isExisting(), "the host's agents");
    assert.equal(await (await byTestId(browser, "agents-error")).isExisting(), false, "the host's agents read without an error");
    await go("#/settings/accounts", "accounts-view");
    await (await byTestId(browser, "host-pick")).selectByAttribute("value", HOST);
    await until(browser, () => browser.$('[data-testid="account-list"]').isExisting(), "the host's accounts");
    assert.equal(await (await byTestId(browser, "accounts-error")).isExisting(), false, "the host's accounts read without an error");

    // A port of the host (a dev server there) opens here through its ssh connection,
    // from Settings → Hosts, and stops.
    const devServer = net.createServer((socket) => socket.end("hello from the host\n"));
    await new Promise((resolve) => devServer.listen(0, "127.0.0.1", resolve));
    const remotePort = devServer.address().port;
    const localPort = await new Promise((resolve) => {
      const probe = net.createServer().listen(0, "127.0.0.1", () => {
        const { port } = probe.address();
        probe.close(() => resolve(port));
      });
    });
    await go("#/settings/hosts", "hosts-settings");
    await until(browser, () => hostRow().isExisting(), "the host listed");
    await (await byTestId(browser, "host-forward-host")).selectByAttribute("value", HOST);
    await (await byTestId(browser, "host-forward-port")).setValue(`${remotePort}:${localPort}`);
    await (await byTestId(browser, "host-forward-add")).click();
    const forwardRow = await browser.$(`[data-testid="host-forward"][data-host="${HOST}"][data-port="${remotePort}"]`);
    await until(browser, () => forwardRow.isExisting(), "the forward listed", 60000);
    assert.equal(await forwardRow.getAttribute("data-local"), String(localPort));
    assert.equal(await forwardRow.getAttribute("data-listening"), "true");
    const greeting = () =>
      new Promise((resolve, reject) => {
        const c = net.connect(localPort, "127.0.0.1");
        let said = "";
        c.on("data", (d) => (said += d));
        c.on("end", () => resolve(said));
        c.on("error", reject);
      });
    assert.equal(await greeting(), "hello from the host\n", "the host's port answers here");
    await screenshot(browser, "hosts-07-port-forwarded-light");
    await (await forwardRow.$('[data-testid="host-forward-cancel"]')).click();
    await until(browser, async () => !(await forwardRow.isExisting()), "the forward stopped", 60000);
    await assert.rejects(greeting(), "nothing listens here once stopped");
    devServer.close();

    // Removing the host stops Weft there and forgets it.
    await until(browser, () => hostRow().isExisting(), "the host listed");
    await (await hostRow().$('[data-testid="host-remove"]')).click();
    await until(browser, async () => !(await hostRow().isExisting()), "the host removed", 90000);
  });
});
