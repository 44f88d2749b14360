// The session library in the desktop app's sidebar: a Claude Code session of the user's
// own (a recorded transcript scripts/e2e-app.sh seeds under the run's CLAUDE_CONFIG_DIR,
// its folder the run's workspace) is listed under that workspace, marked as Claude's own;
// the sidebar's search finds it by its title and by a word of a tool result; its row opens the read-only
// transcript; Continue sends a prompt on its key through the real `claude` (which resumes
// it against the scripted Anthropic server); Fork here on its first turn gives a session
// whose first request carries that turn only; the usage dashboard draws.
import assert from "node:assert/strict";
import { after, before, describe, it } from "node:test";
import { allByTestId, byTestId, lastTurnText, launch, screenshot, until } from "./harness.mjs";

const KEY = "claude:2beba834-ea9e-4d74-9e9f-b4a9f23cf57b";
const ready = process.env.WEFT_E2E_CLAUDE === "1" && Boolean(process.env.WEFT_E2E_NATIVE_SEEDED);

describe("Weft desktop app: the agents' own sessions", { skip: ready ? false : "no claude CLI or no seeded native session" }, () => {
  let browser;
  before(async () => {
    browser = await launch();
  });
  after(async () => {
    if (browser) await browser.deleteSession().catch(() => {});
  });

  it("lists the user's own Claude session in the sidebar, searches, opens and continues it, draws usage", async () => {
    const row = () => browser.$(`[data-testid="native-session-item"][data-session-key="${KEY}"]`);
    await until(browser, async () => (await row()).isExisting(), "the native session in the sidebar", 60000);
    assert.equal(await (await row()).getAttribute("data-workdir"), process.env.WEFT_WORKSPACE_DIR);
    assert.match(await (await row()).$('[data-testid="native-mark"]').getText(), /claude's own/);
    // Under its workspace's head: the nearest workspace row above it is the run's workspace.
    const under = await browser.execute((key) => {
      const rows = [...document.querySelectorAll('[data-testid="workspace"], [data-testid="native-session-item"]')];
      const at = rows.findIndex((r) => r.getAttribute("data-session-key") === key);
      return rows.slice(0, at).reverse().find((r) => r.getAttribute("data-testid") === "workspace")?.getAttribute("data-workdir") ?? null;
    }, KEY);
    assert.equal(under, process.env.WEFT_WORKSPACE_DIR);
    await screenshot(browser, "library-sidebar-native");

    // The sidebar's search filters it by title; the library's finds it by a word of a tool result.
    const search = await byTestId(browser, "session-search");
    await search.setValue("hello turn");
    await until(browser, async () => (await row()).isExisting(), "the native session kept by a title search");
    await search.setValue("no-such-title-anywhere");
    await until(browser, async () => !(await (await row()).isExisting()), "the native session filtered out");
    await browser.execute(() => {
      const input = document.querySelector('[data-testid="session-search"]');
      input.value = "";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });
    await until(browser, async () => (await row()).isExisting(), "the native session back");
    // ... and its transcript by a word of a tool result.
    await search.setValue("hi-from-tool");
    const hit = () => browser.$(`[data-testid="native-search-hit"][data-session-key="${KEY}"]`);
    await until(browser, async () => (await hit()).isExisting(), "a sidebar search hit in the native session's transcript");
    assert.match(await (await hit()).getText(), /hi-from-tool/);
    await browser.execute(() => {
      const input = document.querySelector('[data-testid="session-search"]');
      input.value = "";
      input.dispatchEvent(new Event("input", { bubbles: true }));
    });

    // Its row opens the read-only transcript (the Library view's) on it.
    await (await (await row()).$("button")).click();
    await until(browser, async () => (await allByTestId(browser, "library-turn")).length === 3, "the transcript's three turns");
    assert.match(await (await byTestId(browser, "library-transcript")).getText(), /USE_TOOL turn two/);
    const librarySearch = await byTestId(browser, "library-search");
    await librarySearch.setValue("hi-from-tool");
    await until(browser, async () => (await browser.$(`[data-testid="library-hit"][data-session="${KEY}"]`)).isExisting(), "a search hit on it");
    await screenshot(browser, "library-native-transcript");

    // Fork here, on turn one: the fork opens in the library (only what it keeps), and its
    // first prompt has claude fork the conversation itself (--resume … --fork-session
    // --resume-session-at): the scripted server sees turn one and nothing after it.
    await (await allByTestId(browser, "library-fork-at"))[0].click();
    await until(
      browser,
      async () =>
        (await allByTestId(browser, "library-turn")).length <= 1 && (await (await byTestId(browser, "library-continue-input")).isExisting()),
      "the fork open in the library",
    );
    const forkInput = await byTestId(browser, "library-continue-input");
    await forkInput.setValue("continue the fork: what came before?");
    await (await byTestId(browser, "library-continue")).click();
    await until(browser, async () => !(await (await byTestId(browser, "library-view")).isExisting()), "the library to close");
    await until(browser, async () => (await lastTurnText(browser)).includes("Forked after turn one."), "claude's reply in the fork", 120000);
    // The fork's own view: the turn it kept from its parent, marked as claude's own, above its first.
    await until(browser, async () => (await allByTestId(browser, "turn-earlier")).length === 1, "the fork's inherited turn in its view");
    assert.match((await (await allByTestId(browser, "turn-prompt-text"))[0].getText()), /hello turn one/);
    // The parent stays the user's own session, in the sidebar beside its fork.
    assert.equal(await (await row()).isExisting(), true, "the forked session still listed");
    await screenshot(browser, "library-fork");
    await (await (await row()).$("button")).click();
    await until(browser, async () => (await allByTestId(browser, "library-turn")).length === 3, "the parent's three turns again");

    // Continue: a prompt on the native key; claude resumes the conversation.
    const input = await byTestId(browser, "library-continue-input");
    await input.setValue("carry on from the native session");
    await (await byTestId(browser, "library-continue")).click();
    await until(browser, async () => !(await (await byTestId(browser, "library-view")).isExisting()), "the library to close");
    await until(
      browser,
      async () => (await (await browser.$(`[data-testid="session-item"][data-session-key="${KEY}"]`)).isExisting()),
      "the continued session among Weft's",
      60000,
    );
    await until(browser, async () => (await lastTurnText(browser)).includes("Carried on from your own session."), "claude's reply on the native session", 120000);
    // Its view holds the three turns from before Weft, then Weft's.
    await until(browser, async () => (await allByTestId(browser, "turn-earlier")).length === 3, "the session's own past in its view");
    assert.equal((await allByTestId(browser, "turn-prompt-text")).length, 4);
    assert.equal(await (await row()).isExisting(), false, "no second row for a session Weft now runs");

    // The usage dashboard.
    await (await byTestId(browser, "rail-library")).click();
    await (await byTestId(browser, "rail-usage")).click();
    await until(browser, async () => (await (await byTestId(browser, "usage-chart")).getAttribute("data-drawn")) === "true", "the usage chart");
    await until(browser, async () => (await allByTestId(browser, "usage-row")).length >= 1, "a usage row");
    // The Claude session was just continued: its 5-hour billing block is the active one.
    await until(browser, async () => (await allByTestId(browser, "usage-block-active")).length === 1, "the active billing block");
    await screenshot(browser, "library-usage");
    await (await byTestId(browser, "rail-session")).click();
  });
});
